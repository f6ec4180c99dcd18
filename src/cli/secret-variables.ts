/**
 * The secret variables a client process knows of (DESIGN §10). The process that runs a turn loads
 * the whole configuration and registers `secretVariables(config)`; a client writes text too (its
 * trace log quotes the command line, its error results the query), so it registers, from its
 * config snapshot's written layers (config/layers.ts, each as it is, unchecked), what
 * `secretVariables` finds in each: the provider key variables, every `api_key_env` and
 * `secrets.env_vars`, and the secret-named values of the MCP servers' `env` and `headers`. All are
 * unions over the layers, so no layer (an untrusted workspace's `secrets.env_vars = []`) removes a
 * secret another listed. A layer that does not parse counts for nothing here; the run reports it.
 */
import { isTable } from '../config/cascade.ts';
import { writtenLayers, type ConfigInputs } from '../config/layers.ts';
import type { Config } from '../config/schema.ts';
import { secretVariables } from '../llm/resolve.ts';
import type { Secrets } from '../redact.ts';

/**
 * Registers in `secrets` the values in `environment` that are secrets by what this process knows of:
 * with no inputs (no readable config), the provider keys only.
 */
export function registerClientSecrets(secrets: Secrets, environment: NodeJS.ProcessEnv, inputs?: ConfigInputs): void {
  const layers = inputs ? writtenLayers(inputs, 'lenient').map((layer) => layer.value) : [];
  const names = new Set<string>(secretVariables({}));
  for (const layer of layers) for (const name of secretVariables(layer as Config)) names.add(name);
  secrets.add(environment, [...names]);
  for (const environmentTable of mcpTables(layers, 'env')) secrets.addNamed(environmentTable);
  for (const headers of mcpTables(layers, 'headers')) secrets.addHeaders(headers);
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
