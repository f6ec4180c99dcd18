/**
 * Turns `assistant.model` (`<provider>/<model>`) and the `providers` config into a complete model
 * spec, without importing any provider SDK, so bad models and missing keys fail fast (exit 2).
 */
import path from 'node:path';
import type { Config } from '../config/schema.ts';
import { UsageError } from '../errors.ts';

export type ProviderName = 'openai' | 'anthropic' | 'ollama' | 'openai-compatible' | 'test';

export interface ModelSpec {
  /** As configured, e.g. `openai/gpt-4.1-mini`. */
  id: string;
  provider: ProviderName;
  /** The model name sent to the provider. */
  model: string;
  /** For openai-compatible entries: the name under `providers.openai-compatible`. */
  compatibleName?: string;
  baseUrl?: string;
  /** Name of the environment variable that holds the key; the key itself is read where it is used. */
  apiKeyVariable?: string;
  openaiApi?: 'responses' | 'chat';
  /** For the test provider: absolute path of the script it replays. */
  testScript?: string;
}

const defaultKeyVariables: Record<string, string> = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' };

/** The variables that hold provider keys whatever the configuration says. */
export const defaultProviderKeyVariables: readonly string[] = Object.values(defaultKeyVariables);

/**
 * Every variable jp may read a provider key from under `config`: the defaults and each configured
 * `api_key_env`. Tool subprocesses do not get them (DESIGN §10), and their values are secrets.
 */
export function providerKeyVariables(config: Config): string[] {
  const providers = config.providers ?? {};
  const names = new Set(defaultProviderKeyVariables);
  for (const configured of [providers.openai?.api_key_env, providers.anthropic?.api_key_env]) if (configured) names.add(configured);
  for (const entry of Object.values(providers['openai-compatible'] ?? {})) if (entry?.api_key_env) names.add(entry.api_key_env);
  return [...names];
}

/** The variables whose values are secrets: the provider key variables and `secrets.env_vars`. */
export function secretVariables(config: Config): string[] {
  return [...new Set([...providerKeyVariables(config), ...(config.secrets?.env_vars ?? [])])];
}

function alternatives(): string {
  return [
    'Models you can use instead:',
    '  -m openai/<model>      needs OPENAI_API_KEY',
    '  -m anthropic/<model>   needs ANTHROPIC_API_KEY',
    '  -m ollama/<model>      a local Ollama server, no key',
    '  -m <name>/<model>      any OpenAI-compatible server configured under [providers.openai-compatible.<name>]',
    '  -m test                offline replay of providers.test.script (no model at all)',
  ].join('\n');
}

export function resolveModelSpec(config: Config, environment: NodeJS.ProcessEnv, cwd: string): ModelSpec {
  const id = config.assistant?.model ?? '';
  const providers = config.providers ?? {};
  const slash = id.indexOf('/');
  const prefix = slash === -1 ? id : id.slice(0, slash);
  const model = slash === -1 ? '' : id.slice(slash + 1);

  if (prefix === 'test') {
    const script = providers.test?.script;
    if (!script) {
      throw new UsageError('test_script_missing', `model ${id} is the test provider, but providers.test.script is not set`, {
        hint: 'Point it at a script file: --cfg providers.test.script=examples/demo-script.json',
      });
    }
    return { id, provider: 'test', model: model || 'script', testScript: path.resolve(cwd, script) };
  }
  if (model === '') {
    throw new UsageError('model_invalid', `model ${JSON.stringify(id)} is not <provider>/<model>`, { hint: alternatives() });
  }
  switch (prefix) {
    case 'openai':
    case 'anthropic': {
      const configured = providers[prefix];
      const variable = configured?.api_key_env ?? defaultKeyVariables[prefix]!;
      requireKey(id, variable, environment);
      const spec: ModelSpec = { id, provider: prefix, model, apiKeyVariable: variable };
      if (configured?.base_url) spec.baseUrl = configured.base_url;
      if (prefix === 'openai') spec.openaiApi = providers.openai?.api ?? 'responses';
      return spec;
    }
    case 'ollama': {
      const host = environment.OLLAMA_HOST;
      const fromHost = host ? (host.startsWith('http') ? host : `http://${host}`).replace(/\/$/, '') + '/v1' : undefined;
      return { id, provider: 'ollama', model, baseUrl: providers.ollama?.base_url ?? fromHost ?? 'http://127.0.0.1:11434/v1' };
    }
    default: {
      const entry = providers['openai-compatible']?.[prefix];
      if (!entry) {
        throw new UsageError('provider_unknown', `unknown provider ${JSON.stringify(prefix)} in model ${JSON.stringify(id)}`, {
          hint: `To use an OpenAI-compatible server (llama.cpp, vLLM, LM Studio) add:\n  [providers.openai-compatible.${prefix}]\n  base_url = "http://127.0.0.1:8080/v1"\n${alternatives()}`,
        });
      }
      const spec: ModelSpec = { id, provider: 'openai-compatible', compatibleName: prefix, model, baseUrl: entry.base_url };
      if (entry.api_key_env) {
        requireKey(id, entry.api_key_env, environment);
        spec.apiKeyVariable = entry.api_key_env;
      }
      return spec;
    }
  }
}

function requireKey(id: string, variable: string, environment: NodeJS.ProcessEnv): void {
  if (environment[variable]) return;
  throw new UsageError('api_key_missing', `${variable} is not set: model ${id} needs it`, {
    hint: `Set it in the environment (export ${variable}=...), or pick another model with -m.\n${alternatives()}`,
  });
}
