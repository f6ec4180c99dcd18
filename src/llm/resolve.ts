/**
 * Turns `assistant.model` (`<provider>/<model>`) and the `providers` config into a complete model
 * spec, without importing any provider SDK, so bad models and missing keys fail fast (exit 2).
 */
import path from 'node:path';
import type { LoadedConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { JpError, UsageError } from '../errors.ts';

/**
 * The providers jp has, the one list of them, with how `-m` names a model of each: the model error
 * lists them and shell completion offers them. Keyed by the schema's `providers` table, so a provider
 * added there and not here does not compile. `openai-compatible` has no prefix of its own: each name
 * configured under it is one (`<name>/`).
 */
const providerModels: Record<
  keyof NonNullable<Config['providers']>,
  { prefix?: string; form: string; description: string }
> = {
  openai: { prefix: 'openai/', form: 'openai/<model>', description: 'needs OPENAI_API_KEY' },
  anthropic: { prefix: 'anthropic/', form: 'anthropic/<model>', description: 'needs ANTHROPIC_API_KEY' },
  ollama: { prefix: 'ollama/', form: 'ollama/<model>', description: 'a local Ollama server, no key' },
  'openai-compatible': {
    form: '<name>/<model>',
    description: 'any OpenAI-compatible server configured under [providers.openai-compatible.<name>]',
  },
  test: { prefix: 'test', form: 'test', description: 'offline replay of providers.test.script (no model at all)' },
};

export type ProviderName = keyof typeof providerModels;

/** What a model id can start with: each provider's prefix, and `<name>/` for each of `compatibleNames`. */
export function modelPrefixes(compatibleNames: readonly string[]): string[] {
  const prefixes = Object.values(providerModels).flatMap((provider) => (provider.prefix ? [provider.prefix] : []));
  return [...new Set([...prefixes, ...compatibleNames.map((name) => `${name}/`)])];
}

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

/** `value` if it is a table, else an empty one: the secret readers below also read unvalidated layers. */
function tableOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function names(values: readonly unknown[]): string[] {
  return values.filter((value): value is string => typeof value === 'string');
}

/**
 * Every variable jp may read a provider key from under `config`: the defaults and each configured
 * `api_key_env`. Tool subprocesses do not get them (DESIGN §10), and their values are secrets.
 * `config` may also be one layer as parsed, unvalidated: what is not a variable name is skipped.
 */
export function providerKeyVariables(config: Config): string[] {
  const providers = tableOf(config.providers);
  const configured = [
    tableOf(providers.openai).api_key_env,
    tableOf(providers.anthropic).api_key_env,
    ...Object.values(tableOf(providers['openai-compatible'])).map((entry) => tableOf(entry).api_key_env),
  ];
  return [...new Set([...defaultProviderKeyVariables, ...names(configured)])];
}

/**
 * The variables whose values are secrets: the provider key variables and `secrets.env_vars`. The one
 * reader of both for every process: the run gives it the merged configuration (whose
 * `secrets.env_vars` is the union over the layers, see load.ts), a client each layer it reads
 * (cli/secret-variables.ts), unvalidated.
 */
export function secretVariables(config: Config): string[] {
  const listed = tableOf(config.secrets).env_vars;
  return [...new Set([...providerKeyVariables(config), ...names(Array.isArray(listed) ? listed : [])])];
}

function alternatives(): string {
  return [
    'Models you can use instead:',
    ...Object.values(providerModels).map((provider) => `  -m ${provider.form.padEnd(20)}${provider.description}`),
  ].join('\n');
}

/**
 * resolveModelSpec on a loaded configuration: a provider whose table is in a workspace config that
 * is not trusted (left out, `ignored`) is named as such, not as unknown.
 */
export function resolveModel(loaded: LoadedConfig, environment: NodeJS.ProcessEnv, cwd: string): ModelSpec {
  try {
    return resolveModelSpec(loaded.value, environment, cwd);
  } catch (error) {
    if (!JpError.isInstance(error) || error.code !== 'provider_unknown') throw error;
    const prefix = (loaded.value.assistant?.model ?? '').split('/')[0] ?? '';
    const untrusted = loaded.ignored.find((key) =>
      [`providers.openai-compatible.${prefix}`, 'providers.openai-compatible', 'providers'].includes(key.key),
    );
    if (!untrusted) throw error;
    throw new UsageError(
      'provider_unknown',
      `provider ${JSON.stringify(prefix)} is defined in ${untrusted.where}, but that workspace config is not ` +
        `trusted, so [providers.openai-compatible.${prefix}] is ignored`,
      {
        hint:
          `Review it, then run \`jp trust\` to use it (\`jp trust --show\` lists what it enables), or define ` +
          `[providers.openai-compatible.${prefix}] in your own config (~/.config/jp/config.toml).`,
      },
    );
  }
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
      throw new UsageError(
        'test_script_missing',
        `model ${id} is the test provider, but providers.test.script is not set`,
        {
          hint: 'Point it at a script file: --cfg providers.test.script=examples/demo-script.json',
        },
      );
    }
    return { id, provider: 'test', model: model || 'script', testScript: path.resolve(cwd, script) };
  }
  if (model === '') {
    throw new UsageError('model_invalid', `model ${JSON.stringify(id)} is not <provider>/<model>`, {
      hint: alternatives(),
    });
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
      const fromHost = host
        ? (host.startsWith('http') ? host : `http://${host}`).replace(/\/$/, '') + '/v1'
        : undefined;
      return {
        id,
        provider: 'ollama',
        model,
        baseUrl: providers.ollama?.base_url ?? fromHost ?? 'http://127.0.0.1:11434/v1',
      };
    }
    default: {
      const entry = providers['openai-compatible']?.[prefix];
      if (!entry) {
        throw new UsageError(
          'provider_unknown',
          `unknown provider ${JSON.stringify(prefix)} in model ${JSON.stringify(id)}`,
          {
            hint:
              `To use an OpenAI-compatible server (llama.cpp, vLLM, LM Studio) add:\n  ` +
              `[providers.openai-compatible.${prefix}]\n  base_url = "http://127.0.0.1:8080/v1"\n${alternatives()}`,
          },
        );
      }
      const spec: ModelSpec = {
        id,
        provider: 'openai-compatible',
        compatibleName: prefix,
        model,
        baseUrl: entry.base_url,
      };
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
