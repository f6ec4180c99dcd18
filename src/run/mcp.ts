/**
 * The run's MCP servers: started with the run (so they come up while it waits for its client and
 * its model), their tools joined to the run's, ended with the run (each gets EOF, then SIGTERM, then
 * SIGKILL). Start-up problems are warnings; nothing here rejects.
 */
import type { LoadedConfig } from '../config/load.ts';
import type { TurnTools } from '../conversation/events.ts';
import type { Logger } from '../output/logger.ts';
import type { Secrets } from '../redact.ts';
import type { CommandSandbox } from '../sandbox/engine.ts';
import type { ConfiguredServer } from '../tools/mcp/config.ts';
import type { McpServers } from '../tools/mcp/servers.ts';
import { isMcpToolName, isToolIncluded } from '../tools/registry.ts';
import type { ProcessTracker, Tool } from '../tools/tool.ts';
import type { RunRequest } from '../protocol/run-request.ts';

export interface RunMcpOptions {
  servers: ConfiguredServer[];
  request: RunRequest;
  /** Every turn's tools this run may run (RunSetup.turnTools): the servers offer what any of them includes. */
  turnTools: { either: TurnTools };
  config: LoadedConfig;
  environment: NodeJS.ProcessEnv;
  secrets: Secrets;
  version: string;
  logger: Logger;
  /** This process leads its own process group (a spawned server): the servers stay in it. */
  leadsProcessGroup: boolean;
  processes: ProcessTracker;
  /** The run's command sandbox, for the servers that opt in to it. */
  sandbox: () => { confined: CommandSandbox };
  /** Where a line a server writes on its stderr goes. */
  serverOutput(server: string, line: string): void;
  warning(message: string): void;
}

export class RunMcp {
  private readonly options: RunMcpOptions;
  private started: Promise<McpServers | undefined> = Promise.resolve(undefined);

  constructor(options: RunMcpOptions) {
    this.options = options;
  }

  /** Starts the servers; the promise settles once each is ready or has failed. */
  start(): void {
    const { servers, config, environment, logger } = this.options;
    if (servers.length === 0) return;
    this.options.secrets.add(
      environment,
      servers.flatMap((server) => (server.spec.bearerTokenVariable ? [server.spec.bearerTokenVariable] : [])),
    );
    const { either } = this.options.turnTools;
    const selection = { noTools: either.no_tools, enabled: either.enabled };
    const began = Date.now();
    this.started = import('../tools/mcp/servers.ts').then(async ({ McpServers }) => {
      const started = await McpServers.start(servers, {
        environment,
        clientVersion: this.options.version,
        stderr: this.options.serverOutput,
        warning: this.options.warning,
        include: (name) => isToolIncluded(config.value, selection, name),
        secrets: this.options.secrets,
        placement: {
          ownGroup: !this.options.leadsProcessGroup,
          processes: this.options.processes,
          sandbox: this.options.sandbox().confined,
        },
      });
      logger.info('MCP servers started', {
        milliseconds: Date.now() - began,
        servers: started.statuses().map((status) => `${status.name}: ${status.state}`),
      });
      return started;
    });
    this.started.catch(() => {
      // reported when the run awaits the tools
    });
  }

  /**
   * The run's own tools and those of the servers that started; a `--tool` naming a tool no server offers is a warning.
   */
  async tools(own: Map<string, Tool>): Promise<Map<string, Tool>> {
    const servers = await this.started;
    if (!servers) return own;
    for (const warning of servers.warnings) this.options.warning(warning);
    const tools = new Map(own);
    for (const [name, tool] of servers.tools) if (!tools.has(name)) tools.set(name, tool);
    for (const name of this.options.request.tools.enabled) {
      if (isMcpToolName(name) && !tools.has(name))
        this.options.warning(
          `--tool ${name}: no such tool (its MCP server is not configured, did not start, or does not offer it)`,
        );
    }
    return tools;
  }

  /** Ends the servers (bounded). */
  async stop(): Promise<void> {
    try {
      const servers = await this.started;
      if (!servers) return;
      const began = Date.now();
      await servers.close();
      this.options.logger.info('MCP servers stopped', { milliseconds: Date.now() - began });
    } catch (error) {
      this.options.logger.warn('stopping the MCP servers failed', { error: (error as Error).message });
    }
  }
}
