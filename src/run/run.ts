/**
 * One run of one conversation, the same behind a socket and in `--no-server`: it owns the live log,
 * the model, the MCP servers, the command sandbox and the stop signal; it waits for the client that
 * started it (not when detached), runs the turn sequence and always ends with a result, after
 * persisting. `finish` tells the Notification hooks a deferred run is waiting, updates the metadata and closes the log.
 * Whoever hosts it (server/hosted-run.ts) owns the lock, the registry entry and the connections.
 */
import { changedTurns } from '../checkpoint/change-sets.ts';
import { titleFrom, updateMetadata } from '../conversation/store.ts';
import {
  connectionSettingsWarning,
  explainRecordedKeys,
  foreignSettingsWarning,
} from '../conversation/config-delta.ts';
import type { BuiltinDetachedDefault } from '../config/policy.ts';
import { toJpError, type JpError } from '../errors.ts';
import type { ChatModel } from '../llm/types.ts';
import type { Logger } from '../output/logger.ts';
import { counted } from '../plural.ts';
import { buildErrorResult, untrustedKeysWarning, type ResultObject, type ResultWarning } from '../report/result.ts';
import { runSandboxes } from '../sandbox/engine.ts';
import type { ProcessTracker } from '../tools/tool.ts';
import type { StopRequest } from '../turn/host.ts';
import type { RunClients, RunControl } from './clients.ts';
import type { RunHooks } from '../hooks/run-hooks.ts';
import { hooksOf } from '../hooks/setup.ts';
import { LiveLog } from './live-log.ts';
import { RunMcp } from './mcp.ts';
import { startModel } from './model.ts';
import type { RunRequest } from '../protocol/run-request.ts';
import type { RunSetup } from './setup.ts';
import { runTurnSequence } from './turn-sequence.ts';

/** How long a run that was not detached waits for the client that started it before running without it. */
const firstClientTimeoutMilliseconds = 10_000;

export interface RunOptions {
  request: RunRequest;
  setup: RunSetup;
  clients: RunClients;
  logger: Logger;
  processes: ProcessTracker;
  /** Label of this build, given to MCP servers. */
  version: string;
  /** This process leads its own process group (a spawned server): the run's MCP servers stay in it. */
  leadsProcessGroup: boolean;
  /** Where a line an MCP server writes on its stderr goes. */
  serverOutput(server: string, line: string): void;
  /**
   * Where the output of a Notification hook that outlives the run goes: the run log of a spawned server, nowhere
   * in-process.
   */
  hookOutput: 'inherit' | 'ignore';
}

export class Run implements RunControl {
  readonly live: LiveLog;
  /** The user's hooks (src/hooks/); undefined when none are configured. */
  readonly hooks: RunHooks | undefined;
  private readonly options: RunOptions;
  private readonly model: Promise<ChatModel>;
  private readonly mcp: RunMcp;
  private stopController = new AbortController();
  private detachedByClient = false;
  private ended = false;
  private closed = false;
  private sandboxes: ReturnType<typeof runSandboxes> | undefined;

  constructor(options: RunOptions) {
    this.options = options;
    const { request, setup, logger } = options;
    this.hooks = hooksOf(setup.config, {
      conversationId: request.conversation_id,
      conversationsDirectory: setup.workspace.conversationsDirectory,
      cwd: request.cwd,
      workspaceRoot: request.workspace.root,
      toolRoot: request.workspace.tool_root,
      environment: setup.environment,
      processes: options.processes,
      notice: (level, message) => this.live.notice(level, message),
      log: (message, fields) => logger.info(message, fields),
    });
    this.live = new LiveLog({
      log: setup.log,
      logger,
      clients: options.clients,
      processes: options.processes,
      secrets: setup.secrets,
      ...(this.hooks ? { hooks: this.hooks } : {}),
    });
    if (setup.logRepair.tornTailSavedTo)
      logger.warn('repaired a torn last line of the log', { saved_to: setup.logRepair.tornTailSavedTo });
    if (setup.logRepair.skipped > 0)
      logger.warn('skipped damaged lines in the log', { count: setup.logRepair.skipped });
    const notice = (level: 'info' | 'warning', message: string): void => this.live.notice(level, message);
    this.model = startModel(setup.model, setup.config, {
      environment: setup.environment,
      secrets: setup.secrets,
      logger,
      notice,
      activity: (text) => this.live.activity(text),
    });
    this.mcp = new RunMcp({
      servers: setup.mcpServers,
      request,
      turnTools: setup.turnTools,
      config: setup.config,
      environment: setup.environment,
      secrets: setup.secrets,
      version: options.version,
      logger,
      leadsProcessGroup: options.leadsProcessGroup,
      processes: options.processes,
      sandbox: () => this.sandbox(),
      serverOutput: options.serverOutput,
      warning: (message) => notice('warning', message),
    });
    if (setup.logRepair.skipped > 0)
      notice(
        'warning',
        `skipped ${counted(setup.logRepair.skipped, 'damaged line')} in the conversation log; the rest is intact`,
      );
    this.touchMetadata(request.message);
  }

  get finished(): boolean {
    return this.ended;
  }

  hello(): { event_count: number; partial: { message: string; reasoning: string } } {
    return { event_count: this.live.eventCount, partial: this.live.partial() };
  }

  /** Whether a run with no prompting client defers (started with --detach, or detached by its user). */
  builtinDetached(): BuiltinDetachedDefault {
    return this.options.request.detached || this.detachedByClient ? 'defer' : 'deny';
  }

  detached(): void {
    this.detachedByClient = true;
  }

  stop(request: StopRequest): void {
    if (!this.stopController.signal.aborted) {
      this.options.logger.info('stop requested', { signal: request.signal, discard: request.discard });
      this.stopController.abort(request);
    }
  }

  /** The run's command sandbox (DESIGN §10), for its tools and the MCP servers that opt in. */
  private sandbox(): ReturnType<typeof runSandboxes> {
    const { request, setup } = this.options;
    this.sandboxes ??= runSandboxes({
      config: setup.config.value,
      workspaceRoot: request.workspace.root,
      toolRoot: request.workspace.tool_root,
      environment: setup.environment,
    });
    return this.sandboxes;
  }

  /** Runs the request to its end and returns the result; never throws. */
  async run(): Promise<ResultObject> {
    const { request, setup, logger } = this.options;
    logger.info('run started', {
      model: setup.model.id,
      detached: request.detached,
      resume: request.resume,
      discard_turn: request.discard_turn,
    });
    if (setup.config.ignored.length > 0)
      logger.warn('untrusted workspace config: keys ignored', { keys: setup.config.ignored.map((key) => key.key) });
    this.mcp.start();
    // The sandbox's start-up check runs while the run waits for its client and its model, not at its first command.
    // (A failure surfaces where a command awaits the same check.)
    if ([...setup.tools.values()].some((tool) => tool.confined))
      this.sandbox()
        .confined.availability()
        .catch(() => undefined);
    if (!request.detached) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.options.clients.firstClient(),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, firstClientTimeoutMilliseconds))),
      ]);
      clearTimeout(timer);
    }
    let result: ResultObject;
    try {
      result = await runTurnSequence({
        request,
        setup,
        live: this.live,
        model: this.model,
        tools: () => this.mcp.tools(setup.tools),
        sandbox: () => this.sandbox(),
        builtinDetached: () => this.builtinDetached(),
        hooks: this.hooks,
        stopSignal: () => this.stopController.signal,
        renewStop: () => (this.stopController = new AbortController()),
        warnings: () => this.warnings(),
      });
    } catch (error) {
      const jpError = explainRecordedKeys(toJpError(error), request.conversation_id, setup.recorded);
      logger.error('run failed', { code: jpError.code, error: jpError.message });
      result = this.errorResult(jpError);
    }
    await this.mcp.stop();
    this.ended = true;
    return result;
  }

  private errorResult(error: JpError): ResultObject {
    const { request, setup } = this.options;
    return buildErrorResult({
      conversationId: request.conversation_id,
      query: request.query,
      error,
      model: setup.model.id,
      startedAt: request.started_at,
      warnings: this.warnings(),
      secrets: setup.secrets,
    });
  }

  /**
   * The run's own warnings for its result: the keys of an untrusted workspace config that were left
   * out (the client that decided about trust has named them on stderr already), and the settings in
   * the log this user's jp did not record.
   */
  private warnings(): ResultWarning[] {
    const { ignored, workspace } = this.options.setup.config;
    const warnings =
      ignored.length > 0 && workspace
        ? [
            untrustedKeysWarning(
              workspace.file,
              ignored.map((key) => key.key),
            ),
          ]
        : [];
    const foreign = this.options.setup.foreignSettings;
    if (foreign.length > 0)
      warnings.push({
        code: 'conversation_settings_ignored',
        message: foreignSettingsWarning(this.options.request.conversation_id, foreign),
        keys: [...foreign],
      });
    const connection = this.options.setup.connectionSettings;
    if (connection.length > 0)
      warnings.push({
        code: 'conversation_settings_ignored',
        message: connectionSettingsWarning(this.options.request.conversation_id, connection),
        keys: [...connection],
      });
    return warnings;
  }

  private touchMetadata(message: string | null): void {
    const { conversationsDirectory } = this.options.setup.workspace;
    const { logger } = this.options;
    try {
      const kept = updateMetadata(conversationsDirectory, this.options.request.conversation_id, (metadata) => {
        if (!metadata.title && message) metadata.title = titleFrom(this.options.setup.secrets.redact(message));
        metadata.updated_at = new Date().toISOString();
        const changed = changedTurns(this.options.setup.events);
        if (changed.length > 0) metadata.changed_turns = changed;
      });
      if (kept) {
        logger.warn('metadata.json was damaged; rebuilt it from the log', {
          damage: kept.damage,
          kept_at: kept.keptAt,
        });
        this.live.notice(
          'warning',
          `metadata.json ${kept.damage}; it was rebuilt from the log and the damaged file kept as ${kept.keptAt}`,
        );
      }
    } catch (error) {
      logger.warn('could not update metadata.json', { error: (error as Error).message });
    }
  }

  /**
   * After the run: the Notification hooks for `waiting_for_input` (a deferred run nobody watches),
   * the metadata, the log closed. Returns whether a hook was started; safe to call twice.
   */
  finish(result: ResultObject | undefined): { hookRan: boolean } {
    if (this.closed) return { hookRan: false };
    this.closed = true;
    let hookRan = false;
    if (result?.status === 'deferred' && this.builtinDetached() === 'defer' && this.hooks) {
      this.options.logger.info('telling the Notification hooks the run is waiting');
      hookRan = this.hooks.waiting(result.pending_inquiry, this.options.hookOutput);
    }
    this.touchMetadata(null);
    return { hookRan };
  }

  /** Closes the log: the last thing before the lock is released. */
  closeLog(): void {
    try {
      this.live.close();
    } catch (error) {
      this.options.logger.error('closing the log failed', { error: (error as Error).message });
    }
  }
}
