/**
 * `[mcp.servers.<name>]` checked and resolved when the configuration is loaded, before anything
 * runs: what the schema cannot say (exactly one of command and url, no key of the other transport)
 * is a usage error naming the file, the line and the key. A server the workspace config defines
 * runs in the command sandbox unless it says `sandbox = false` (which, like the whole server, needs
 * trust). Loading this does not load the MCP SDK.
 */
import path from 'node:path';
import { originOf, type LoadedConfig } from '../../config/load.ts';
import type { McpServerConfig } from '../../config/schema.ts';
import { ConfigError } from '../../errors.ts';
import type { Secrets } from '../../redact.ts';
import type { McpServerSpec } from './connection.ts';

const defaultStartupTimeoutSeconds = 30;

export interface ConfiguredServer {
  spec: McpServerSpec;
  /** `enabled = false`: configured, not started. */
  enabled: boolean;
}

const stdioOnly = ['args', 'env', 'env_vars', 'cwd', 'sandbox'] as const;
const httpOnly = ['headers', 'bearer_token_env'] as const;

/**
 * The servers of the configuration, resolved: a stdio server's environment is its `env` plus the
 * `env_vars` it names from jp's environment, and nothing else of jp's (no provider keys); the SDK
 * adds only the basics a program needs (PATH, HOME, USER, LOGNAME, SHELL, TERM).
 */
export function configuredMcpServers(
  loaded: LoadedConfig,
  environment: NodeJS.ProcessEnv,
  workspaceRoot: string,
): ConfiguredServer[] {
  const servers = (loaded.value.mcp?.servers ?? {}) as Record<string, McpServerConfig>;
  return Object.entries(servers).map(([name, entry]) => {
    const key = ['mcp', 'servers', name];
    const where = (field?: string): string => originOf(loaded, field ? [...key, field] : key);
    if (entry.command === undefined && entry.url === undefined) {
      throw new ConfigError(`${where()}: mcp.servers.${name} has neither command nor url`, {
        hint:
          `Give command = "<program>" (with args = [...]) for a server jp starts, or url = "http://..." for a ` +
          `streamable HTTP server.`,
      });
    }
    if (entry.command !== undefined && entry.url !== undefined) {
      throw new ConfigError(`${where('url')}: mcp.servers.${name} has both command and url`, {
        hint: 'Keep one: command starts a program, url reaches a running server.',
      });
    }
    const transport = entry.command !== undefined ? 'stdio' : 'http';
    for (const field of transport === 'stdio' ? httpOnly : stdioOnly) {
      if (entry[field] === undefined) continue;
      throw new ConfigError(
        `${where(field)}: mcp.servers.${name}.${field} applies only to a ` +
          `server ${transport === 'stdio' ? 'reached by url' : 'started with command'}`,
        {
          hint: `Remove mcp.servers.${name}.${field}.`,
        },
      );
    }
    const env: Record<string, string> = { ...(entry.env ?? {}) };
    for (const variable of entry.env_vars ?? []) {
      const value = environment[variable];
      if (value !== undefined) env[variable] = value;
    }
    const spec: McpServerSpec = {
      name,
      transport,
      args: entry.args ?? [],
      env,
      cwd: path.resolve(workspaceRoot, entry.cwd ?? '.'),
      headers: entry.headers ?? {},
      startupTimeoutSeconds: entry.startup_timeout_secs ?? defaultStartupTimeoutSeconds,
      toolTimeoutSeconds: entry.tool_timeout_secs,
      trustAnnotations: entry.trust_annotations ?? false,
      sandbox: entry.sandbox ?? definedByWorkspace(loaded, name),
    };
    if (entry.command !== undefined) spec.command = entry.command;
    if (entry.url !== undefined) spec.url = entry.url;
    if (entry.bearer_token_env !== undefined) spec.bearerTokenVariable = entry.bearer_token_env;
    return { spec, enabled: entry.enabled ?? true };
  });
}

/**
 * Whether the workspace config (repository code) sets any key of the server: then, unless its
 * (trusted) config says `sandbox = false`, it runs in the sandbox, and what it loads from the
 * repository (a script it sources, a module it imports) runs confined whoever changed it since.
 */
function definedByWorkspace(loaded: LoadedConfig, name: string): boolean {
  const prefix = `mcp.servers.${name}.`;
  for (const [key, layer] of loaded.sources) if (key.startsWith(prefix) && layer.kind === 'workspace') return true;
  return false;
}

/**
 * Registers the secrets of the servers' environments: a value whose variable is listed as a secret
 * (`secretVariables`) or whose name marks it one (`*_TOKEN`, `*_API_KEY`, `*_SECRET`, `*_PASSWORD`).
 */
export function registerMcpEnvironmentSecrets(
  secrets: Secrets,
  servers: ConfiguredServer[],
  secretVariables: string[],
): void {
  for (const server of servers) {
    secrets.add(server.spec.env, secretVariables);
    secrets.addNamed(server.spec.env);
    secrets.addHeaders(server.spec.headers ?? {});
  }
}
