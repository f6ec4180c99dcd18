/**
 * MCP servers an editor passes in session/new (or load) are connected like the ones of jp's own
 * configuration (DESIGN §9): each becomes an `[mcp.servers.<name>]` entry of the session's runs, a
 * flag layer that is never recorded in the conversation (the editor passes them again each time).
 * Their tools are ordinary tools for policy (`mcp__<name>__<tool>`, `run = "ask"` by default; their
 * annotations relax nothing). stdio and streamable HTTP are supported; SSE is not (not advertised).
 * Pure.
 */
import type { McpServer } from '@agentclientprotocol/sdk';
import type { Flag } from './session-settings.ts';

/** A server name as jp's configuration takes it (1 to 32 of A-Z a-z 0-9 _ -). */
function configName(name: string): string {
  const cleaned = name
    .replace(/[^A-Za-z0-9_-]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 32);
  return cleaned === '' ? 'editor' : cleaned;
}

/** A name not taken yet: `name`, else `name-2`, `name-3`... (kept within 32 characters). */
function freeName(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  for (let index = 2; ; index++) {
    const suffix = `-${index}`;
    const candidate = `${name.slice(0, 32 - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

export interface EditorServers {
  flags: Flag[];
  /** What could not be used, in words for the user (an SSE server). */
  skipped: string[];
  /** The name each server has in jp (its tools are `mcp__<name>__<tool>`), by the editor's name. */
  names: { editor: string; jp: string }[];
}

/**
 * The editor's servers as flags. `configured`: the names of jp's own configured servers, which an
 * editor's server never replaces (it gets a free name beside them).
 */
export function editorServerFlags(servers: readonly McpServer[], configured: readonly string[]): EditorServers {
  const taken = new Set(configured);
  const result: EditorServers = { flags: [], skipped: [], names: [] };
  for (const server of servers) {
    if ('type' in server && server.type === 'sse') {
      result.skipped.push(`${server.name} (SSE: jp speaks stdio and streamable HTTP to MCP servers)`);
      continue;
    }
    const name = freeName(configName(server.name), taken);
    taken.add(name);
    const value =
      'type' in server && server.type === 'http'
        ? {
            url: server.url,
            ...(server.headers.length > 0
              ? { headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])) }
              : {}),
          }
        : {
            command: server.command,
            args: server.args,
            ...(server.env.length > 0
              ? { env: Object.fromEntries(server.env.map((variable) => [variable.name, variable.value])) }
              : {}),
          };
    result.flags.push({
      label: `the editor's MCP server "${server.name}"`,
      path: ['mcp', 'servers', name],
      value,
      recorded: false,
    });
    result.names.push({ editor: server.name, jp: name });
  }
  return result;
}
