/**
 * The MCP servers of a run (`[mcp.servers.<name>]`, DESIGN §9, checked by config.ts): started
 * together when the run starts, each within its own time limit, and ended with the run. A server
 * that fails to start is a warning naming it; the run goes on without its tools.
 */
import type { Tool } from '../tool.ts';
import type { ConfiguredServer } from './config.ts';
import { McpConnection, type McpServerSpec, type Placement } from './connection.ts';

export { configuredMcpServers } from './config.ts';
import type { Secrets } from '../../redact.ts';
import { createMcpTool, maxToolNameLength, mcpToolName } from './tool.ts';

export interface McpStartOptions {
  environment: NodeJS.ProcessEnv;
  clientVersion: string;
  /** A line a server wrote on its stderr: for the run's log. */
  stderr(server: string, line: string): void;
  /** Something went wrong after start-up (a server stopped): for the clients' stderr. */
  warning(message: string): void;
  /** Whether a tool is offered (`conversation.tools.<name>.enable`, `--tool`). */
  include(toolName: string): boolean;
  /** Where stdio servers run: the run's process group, or groups of their own (see stdio-transport.ts). */
  placement: Placement;
  /** What a server writes on its stderr is redacted by these. */
  secrets: Secrets;
}

export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: 'ready' | 'failed' | 'stopped' | 'disabled';
  problem: string | null;
  tools: { name: string; mcp_name: string; description: string }[];
}

export class McpServers {
  readonly connections: McpConnection[];
  readonly disabled: McpServerSpec[];
  /** The tools offered to the model, by jp name. */
  readonly tools = new Map<string, Tool>();
  /** Start-up problems, one per failed server or skipped tool, for the clients' stderr. */
  readonly warnings: string[] = [];
  private readonly killOnExit = (): void => {
    for (const connection of this.connections) connection.killNow();
  };

  private constructor(connections: McpConnection[], disabled: McpServerSpec[]) {
    this.connections = connections;
    this.disabled = disabled;
  }

  /** Starts every enabled server at once; resolves when each is ready or has failed. */
  static async start(servers: ConfiguredServer[], options: McpStartOptions): Promise<McpServers> {
    const connections = servers
      .filter((server) => server.enabled)
      .map(
        (server) =>
          new McpConnection(
            server.spec,
            {
              stderr: (line) => options.stderr(server.spec.name, line),
              redact: (text) => options.secrets.redact(text),
              stopped: (reason) =>
                options.warning(
                  `the MCP server ${server.spec.name} stopped (${reason}); the run goes on without its tools`,
                ),
              warning: options.warning,
            },
            options.placement,
          ),
      );
    const running = new McpServers(
      connections,
      servers.filter((server) => !server.enabled).map((server) => server.spec),
    );
    process.on('exit', running.killOnExit);
    await Promise.all(connections.map((connection) => connection.start(options.environment, options.clientVersion)));
    for (const connection of connections) {
      const server = connection.spec.name;
      if (connection.state !== 'ready') {
        running.warnings.push(
          `the MCP server ${server} failed to start: ${connection.problem}; the run goes on without its tools`,
        );
        continue;
      }
      for (const remote of connection.tools) {
        const name = mcpToolName(server, remote.name);
        if (name.length > maxToolNameLength) {
          running.warnings.push(
            `the tool ${remote.name} of the MCP server ${server} is left out: ${name} is longer ` +
              `than ${maxToolNameLength} characters`,
          );
          continue;
        }
        if (running.tools.has(name)) {
          running.warnings.push(
            `the tool ${remote.name} of the MCP server ${server} is left out: another of its tools is also ` +
              `named ${name}`,
          );
          continue;
        }
        if (!options.include(name)) continue;
        running.tools.set(name, createMcpTool(connection, remote, name));
      }
    }
    return running;
  }

  statuses(): McpServerStatus[] {
    const started: McpServerStatus[] = this.connections.map((connection) => ({
      name: connection.spec.name,
      transport: connection.spec.transport,
      state: connection.state === 'starting' ? 'failed' : connection.state,
      problem: connection.problem ?? null,
      tools: connection.tools.map((remote) => ({
        name: mcpToolName(connection.spec.name, remote.name),
        mcp_name: remote.name,
        description: remote.description ?? '',
      })),
    }));
    const disabled: McpServerStatus[] = this.disabled.map((spec) => ({
      name: spec.name,
      transport: spec.transport,
      state: 'disabled',
      problem: null,
      tools: [],
    }));
    return [...started, ...disabled].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Ends every server (they get EOF, then SIGTERM, then SIGKILL) and resolves once they are gone. */
  async close(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.shutdown()));
    process.off('exit', this.killOnExit);
  }
}
