/**
 * The secret variables a client process knows of (DESIGN §10). The process that runs a turn loads
 * the whole configuration and registers `secretVariables(config)`; a client loads none of it, yet
 * writes text too (its trace log quotes the command line, its error results the query). This reads
 * the names it needs from the same layers, without validating them: the provider key variables,
 * every `api_key_env` and `secrets.env_vars`. A layer that does not parse counts for nothing here;
 * the run reports it.
 */
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { defaultProviderKeyVariables } from '../llm/resolve.ts';
import type { ConfigInputs } from './load.ts';

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function namesIn(layer: unknown): string[] {
  if (!isTable(layer)) return [];
  const names: unknown[] = [];
  const secrets = layer.secrets;
  if (isTable(secrets) && Array.isArray(secrets.env_vars)) names.push(...secrets.env_vars);
  const providers = layer.providers;
  if (isTable(providers)) {
    for (const [name, provider] of Object.entries(providers)) {
      if (!isTable(provider)) continue;
      if (name === 'openai-compatible') for (const entry of Object.values(provider)) names.push(isTable(entry) ? entry.api_key_env : undefined);
      else names.push(provider.api_key_env);
    }
  }
  return names.filter((name): name is string => typeof name === 'string');
}

function parseLayer(text: string): unknown {
  try {
    return parseToml(text);
  } catch {
    return undefined;
  }
}

/** `--cfg a.b=VALUE` or `JP_CFG_A__B=VALUE` as a one-key layer. */
function keyLayer(keyPath: string[], raw: string): unknown {
  const value = parseLayer(`value = ${raw}`);
  let layer: unknown = isTable(value) ? value.value : raw;
  for (const segment of [...keyPath].reverse()) layer = { [segment]: layer };
  return layer;
}

export function clientSecretVariables(inputs: Pick<ConfigInputs, 'userFile' | 'workspaceFile' | 'environment' | 'cfgArguments'>): string[] {
  const names = new Set<string>(defaultProviderKeyVariables);
  for (const file of [inputs.userFile, inputs.workspaceFile]) {
    if (!file) continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const name of namesIn(parseLayer(text))) names.add(name);
  }
  for (const [variable, raw] of Object.entries(inputs.environment)) {
    if (!variable.startsWith('JP_CFG_') || raw === undefined) continue;
    for (const name of namesIn(keyLayer(variable.slice('JP_CFG_'.length).toLowerCase().split('__'), raw))) names.add(name);
  }
  for (const argument of inputs.cfgArguments) {
    const equals = argument.indexOf('=');
    if (equals > 0) for (const name of namesIn(keyLayer(argument.slice(0, equals).trim().split('.'), argument.slice(equals + 1)))) names.add(name);
  }
  return [...names];
}
