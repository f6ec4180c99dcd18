/**
 * The secret variables a client process knows of (DESIGN §10). The process that runs a turn loads
 * the whole configuration and registers `secretVariables(config)`; a client loads none of it, yet
 * writes text too (its trace log quotes the command line, its error results the query). This reads
 * the same layers, without validating them, with the same reader (`secretVariables`, on each layer):
 * the provider key variables, every `api_key_env` and `secrets.env_vars`. Both are unions over the
 * layers, so no layer (an untrusted workspace's `secrets.env_vars = []`) removes a secret another
 * listed. A layer that does not parse counts for nothing here; the run reports it.
 */
import { parse as parseToml } from 'smol-toml';
import { secretVariables } from '../llm/resolve.ts';
import type { ConfigInputs } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { readConfigFile } from '../workspace/files.ts';

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

type LayerInputs = Pick<ConfigInputs, 'userFile' | 'workspaceFile' | 'environment' | 'cfgArguments'>;

/** The union, over every layer this process can read, of what `secretVariables` finds in each. */
export function clientSecretVariables(inputs: LayerInputs): string[] {
  const names = new Set<string>(secretVariables({}));
  for (const layer of readLayers(inputs)) for (const name of secretVariables(tableOfLayer(layer))) names.add(name);
  return [...names];
}

/**
 * The literal `env` entries of the MCP servers of every layer (their secret-named values are
 * secrets: isSecretName), trusted or not: a layer only adds secrets.
 */
export function clientMcpEnvironments(inputs: LayerInputs): Record<string, string>[] {
  return mcpTables(inputs, 'env');
}

/** The `headers` of every MCP server in the config layers (their secret ones are registered, isSecretHeader). */
export function clientMcpHeaders(inputs: LayerInputs): Record<string, string>[] {
  return mcpTables(inputs, 'headers');
}

function mcpTables(inputs: LayerInputs, table: 'env' | 'headers'): Record<string, string>[] {
  const tables: Record<string, string>[] = [];
  for (const layer of readLayers(inputs)) {
    const servers = isTable(layer) && isTable(layer.mcp) && isTable(layer.mcp.servers) ? layer.mcp.servers : {};
    for (const server of Object.values(servers)) {
      const values = isTable(server) ? server[table] : undefined;
      if (!isTable(values)) continue;
      tables.push(
        Object.fromEntries(
          Object.entries(values).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
        ),
      );
    }
  }
  return tables;
}

function readLayers(inputs: LayerInputs): unknown[] {
  const layers: unknown[] = [];
  for (const file of [inputs.userFile, inputs.workspaceFile]) {
    if (!file) continue;
    try {
      layers.push(parseLayer(readConfigFile(file) ?? ''));
    } catch {
      // An unreadable or broken file is loading's error to report; here it adds no names.
    }
  }
  for (const [variable, raw] of Object.entries(inputs.environment)) {
    if (!variable.startsWith('JP_CFG_') || raw === undefined) continue;
    layers.push(keyLayer(variable.slice('JP_CFG_'.length).toLowerCase().split('__'), raw));
  }
  for (const argument of inputs.cfgArguments) {
    const equals = argument.indexOf('=');
    if (equals > 0) layers.push(keyLayer(argument.slice(0, equals).trim().split('.'), argument.slice(equals + 1)));
  }
  return layers;
}

/** A parsed layer as the configuration it may be; secretVariables skips what is not. */
function tableOfLayer(layer: unknown): Config {
  return (isTable(layer) ? layer : {}) as Config;
}
