/**
 * The secret variables a client process knows of (DESIGN §10). The process that runs a turn loads
 * the whole configuration and registers `secretVariables(config)`; a client writes text too (its
 * trace log quotes the command line, its error results the query), so it registers, from its
 * config snapshot's written layers (config/layers.ts, each as it is, unchecked), what
 * `secretVariables` finds in each: the provider key variables, every `api_key_env` and
 * `secrets.env_vars`, and the secret-named values of the MCP servers' `env` and `headers`. All are
 * unions over the layers, so no layer (an untrusted workspace's `secrets.env_vars = []`) removes a
 * secret another listed. A layer that does not parse counts for nothing here; the run reports it.
 * (Not in config/: the provider key variables are the providers' (llm/), which config never imports.)
 */
import { isTable } from '../config/cascade.ts';
import { writtenLayers, type ConfigInputs } from '../config/layers.ts';
import type { Config } from '../config/schema.ts';
import { secretVariables } from '../llm/resolve.ts';

/** What a client registers as its secrets (Secrets.add, addNamed, addHeaders). */
export interface ClientSecrets {
  /** The variables whose values in the environment are secrets. */
  variables: string[];
  /** The MCP servers' `env` tables: their secret-named values are secrets. */
  environments: Record<string, string>[];
  /** The MCP servers' `headers` tables: their secret-named values are secrets. */
  headers: Record<string, string>[];
}

/** The secrets a client knows of from `inputs`; with none (no readable config), the provider keys only. */
export function clientSecrets(inputs?: ConfigInputs): ClientSecrets {
  const layers = inputs ? writtenLayers(inputs, 'lenient').map((layer) => layer.value) : [];
  const names = new Set<string>(secretVariables({}));
  for (const layer of layers) for (const name of secretVariables(layer as Config)) names.add(name);
  return { variables: [...names], environments: mcpTables(layers, 'env'), headers: mcpTables(layers, 'headers') };
}

/** The string values of `table` (`env` or `headers`) of every MCP server of every layer. */
function mcpTables(layers: readonly Record<string, unknown>[], table: 'env' | 'headers'): Record<string, string>[] {
  const tables: Record<string, string>[] = [];
  for (const layer of layers) {
    const servers = isTable(layer.mcp) && isTable(layer.mcp.servers) ? layer.mcp.servers : {};
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
