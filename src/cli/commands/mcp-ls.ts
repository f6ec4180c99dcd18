/**
 * `jp mcp ls [--json]`: every configured MCP server with its transport and state (ready, failed and
 * why, disabled) and the tools it offers under their jp names. The servers are started as a run
 * would start them (same limits, same environment), listed, and ended; those of an untrusted
 * workspace config are listed as `untrusted`, never started. It exits 0 whenever it could list:
 * a server that failed to start, or is not trusted, is a state of the listing, not its failure.
 */
import { runSandboxes } from '../../sandbox/engine.ts';
import type { LoadedConfig } from '../../config/load.ts';
import { secretVariables } from '../../llm/resolve.ts';
import { registerMcpEnvironmentSecrets } from '../../tools/mcp/config.ts';
import { configuredMcpServers, McpServers, type McpServerStatus } from '../../tools/mcp/servers.ts';
import type { CommandContext } from '../context.ts';
import { jpVersion } from '../../version.ts';
import { visible } from '../../output/sanitize.ts';

/** The first line of a server's text (a tool's description), shown visibly. */
function firstLine(text: string, limit = 100): string {
  const line = visible(text.split('\n')[0]!.trim(), { singleLine: true });
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

/** A line of the listing: a configured server's status, or one of an untrusted config (never started). */
type ListedServer = Omit<McpServerStatus, 'state'> & { state: McpServerStatus['state'] | 'untrusted' };

function stateText(status: ListedServer): string {
  switch (status.state) {
    case 'ready':
      return `ready  ${status.tools.length} tool${status.tools.length === 1 ? '' : 's'}`;
    case 'disabled':
      return 'disabled';
    default:
      return `${status.state}: ${visible(status.problem ?? 'unknown reason', { singleLine: true })}`;
  }
}

/**
 * Starts the configured (and trusted) MCP servers as a run would (same limits, same environment, the
 * secrets they get registered for redaction, their stderr to the log) to ask them for their tools.
 * Resolves once each is ready or has failed; the caller ends them with `close()`. Used by `jp mcp ls`
 * and by `jp config show --effective`, which lists and checks MCP tools the same way.
 */
export async function startConfiguredMcpServers(context: CommandContext, loaded: LoadedConfig): Promise<McpServers> {
  const logger = await context.logger();
  const servers = configuredMcpServers(loaded, context.facts.environment, context.workspace().toolRoot);
  context.secrets.add(context.facts.environment, [
    ...secretVariables(loaded.value),
    ...servers.flatMap((server) => (server.spec.bearerTokenVariable ? [server.spec.bearerTokenVariable] : [])),
  ]);
  registerMcpEnvironmentSecrets(context.secrets, servers, secretVariables(loaded.value));
  return McpServers.start(servers, {
    environment: context.facts.environment,
    clientVersion: jpVersion,
    stderr: (server, line) => logger.debug('mcp server output', { server, line }),
    warning: (message) => logger.warn(message),
    include: () => true,
    secrets: context.secrets,
    placement: {
      ownGroup: false,
      processes: undefined,
      sandbox: runSandboxes({
        config: loaded.value,
        workspaceRoot: context.workspace().root,
        toolRoot: context.workspace().toolRoot,
        environment: context.facts.environment,
      }).confined,
    },
  });
}

/**
 * The servers of an untrusted workspace config: listed, never started, in the state `untrusted`,
 * with what starts them. Listing them (exit 0) says why they offer nothing, where a warning alone
 * left an empty list.
 */
function untrustedServers(loaded: LoadedConfig): ListedServer[] {
  return loaded.ignored
    .filter((key) => key.path.length === 3 && key.path[0] === 'mcp' && key.path[1] === 'servers')
    .map((key) => ({
      name: key.path[2]!,
      transport: typeof key.value === 'object' && key.value !== null && 'url' in key.value ? 'http' : 'stdio',
      state: 'untrusted',
      problem: `not started: ${key.where} is not trusted; review it, then \`jp trust\` starts it`,
      tools: [],
    }));
}

export async function mcpLsCommand(context: CommandContext): Promise<number> {
  const loaded = await context.config();
  const untrusted = untrustedServers(loaded);
  // Starting a server can take seconds (an `npx -y` one downloads first): say so before waiting.
  const enabled = configuredMcpServers(loaded, context.facts.environment, context.workspace().toolRoot).filter(
    (server) => server.enabled,
  );
  if (enabled.length > 0) {
    const limit = Math.max(...enabled.map((server) => server.spec.startupTimeoutSeconds));
    const names = enabled.map((server) => server.spec.name).join(', ');
    context.status(
      `starting ${enabled.length === 1 ? 'the MCP server' : `${enabled.length} MCP servers`} ${names} (at ` +
        `most ${limit} s)…`,
    );
  }
  const running = await startConfiguredMcpServers(context, loaded);
  const statuses: ListedServer[] = [...running.statuses(), ...untrusted].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  await running.close();
  if (context.format === 'json') {
    context.jsonLine(context.stdout, 'mcp_servers', { servers: statuses });
    return 0;
  }
  if (statuses.length === 0) {
    context.status(
      'No MCP servers are configured: add [mcp.servers.<name>] to your config (see "MCP servers" in the README).',
    );
    return 0;
  }
  const nameWidth = Math.max(...statuses.map((status) => status.name.length));
  const toolWidth = Math.max(0, ...statuses.flatMap((status) => status.tools.map((tool) => tool.name.length)));
  const lines: string[] = [];
  for (const status of statuses) {
    lines.push(`${status.name.padEnd(nameWidth)}  ${status.transport.padEnd(5)}  ${stateText(status)}`);
    for (const tool of status.tools)
      lines.push(
        `  ${visible(tool.name, { singleLine: true }).padEnd(toolWidth)}  ${firstLine(tool.description)}`.trimEnd(),
      );
  }
  context.stdout.write(lines.join('\n') + '\n');
  return 0;
}
