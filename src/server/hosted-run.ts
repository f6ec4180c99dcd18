/**
 * A run hosted by this process, from the moment it holds the lock to its exit: the Run, its clients
 * (ClientHub), the registry entry (with the tool process groups it runs) and, for a spawned server,
 * the per-run log. The same for the spawned server (serve.ts) and the in-process path
 * (`--no-server`): only where the connections come from differs.
 */
import { closeSync, constants, openSync, statSync, unlinkSync, writeSync } from 'node:fs';
import type { Logger } from '../output/logger.ts';
import { PROTOCOL_VERSION } from '../protocol/messages.ts';
import type { ResultObject } from '../report/result.ts';
import type { RunRequest } from '../protocol/run-request.ts';
import { Run } from '../run/run.ts';
import type { RunSetup } from '../run/setup.ts';
import type { ProcessTracker } from '../tools/tool.ts';
import type { StopRequest } from '../turn/host.ts';
import { processStartTime, ownProcessStartTime } from '../workspace/process-identity.ts';
import { userSubdirectory } from '../workspace/workspace.ts';
import { ClientHub } from './client-hub.ts';
import type { ClientConnection } from './connection.ts';
import {
  killToolProcesses,
  newCapability,
  removeOwnEntry,
  writeCapability,
  writeEntry,
  type RegistryEntry,
} from './registry.ts';

export interface HostedRunOptions {
  request: RunRequest;
  setup: RunSetup;
  logger: Logger;
  version: string;
  /** null for the in-process path. */
  socketPath: string | null;
  logFile: string | null;
  /** This process leads its own process group (a spawned server, started in a new session). */
  leadsProcessGroup: boolean;
}

export class HostedRun {
  readonly entry: RegistryEntry;
  /** The run's capability (registry.ts): the client that starts the run is given it; every hello must show it. */
  readonly capability = newCapability();
  private readonly options: HostedRunOptions;
  private readonly hub: ClientHub;
  private readonly run: Run;
  private readonly processesDirectory: string;
  private closed = false;

  constructor(options: HostedRunOptions) {
    this.options = options;
    const { request, setup, logger } = options;
    this.processesDirectory = userSubdirectory(setup.workspace, 'processes');
    this.entry = {
      conversation_id: request.conversation_id,
      pid: process.pid,
      start_time: ownProcessStartTime(),
      socket_path: options.socketPath,
      started_at: new Date().toISOString(),
      version: options.version,
      protocol_version: PROTOCOL_VERSION,
      detached: request.detached,
      log_file: options.logFile,
      tool_process_groups: [],
      process_group: options.leadsProcessGroup ? process.pid : null,
    };
    this.hub = new ClientHub({
      conversationId: request.conversation_id,
      detached: request.detached,
      version: options.version,
      logger,
      capability: this.capability,
    });
    this.run = new Run({
      request,
      setup,
      clients: this.hub,
      logger,
      processes: this.processTracker(),
      version: options.version,
      leadsProcessGroup: options.leadsProcessGroup,
      // A spawned server's stderr is its run log; in-process, server output goes to the trace log only.
      serverOutput: options.socketPath
        ? (server, line) => process.stderr.write(`[mcp ${server}] ${line}\n`)
        : (server, line) => logger.debug('mcp server output', { server, line }),
      hookOutput: options.socketPath ? 'inherit' : 'ignore',
    });
    this.hub.serve(this.run);
  }

  /**
   * The tool process groups of the run, kept in the registry entry so that `jp conversation kill` and the next run find
   * them.
   */
  private processTracker(): ProcessTracker {
    const toolMarker = `${this.options.request.conversation_id}.${process.pid}.${Date.now().toString(36)}`;
    let subprocesses = 0;
    return {
      nextMarker: () => `${toolMarker}.${++subprocesses}`,
      started: (pgid, marker) => {
        this.entry.tool_marker = toolMarker;
        this.entry.tool_process_groups.push({ pgid, start_time: processStartTime(pgid) ?? '', marker });
        this.writeEntry();
      },
      ended: (pgid) => {
        this.entry.tool_process_groups = this.entry.tool_process_groups.filter((group) => group.pgid !== pgid);
        this.writeEntry();
      },
    };
  }

  /**
   * Publishes the capability (for `attach`, when the run has a socket), then the registry entry:
   * call once clients can connect.
   */
  register(): void {
    if (this.options.socketPath)
      writeCapability(this.processesDirectory, this.options.request.conversation_id, this.capability);
    this.writeEntry();
  }

  private writeEntry(): void {
    if (this.closed) return;
    try {
      writeEntry(this.processesDirectory, this.entry);
    } catch (error) {
      this.options.logger.warn('could not write the registry entry', { error: (error as Error).message });
    }
  }

  accept(connection: ClientConnection): void {
    this.hub.accept(connection);
  }

  stop(request: StopRequest): void {
    this.run.stop(request);
  }

  /** Runs to the end, then finishes; never throws. */
  async runToEnd(): Promise<ResultObject> {
    const result = await this.run.run();
    this.finish(result);
    return result;
  }

  /**
   * After the run: hook and metadata, tool processes, log, registry entry, per-run log, lock, and
   * only then the result to the clients (a script that runs its next query the moment this one
   * returns must not find the lock still held). Safe to call twice.
   */
  finish(result: ResultObject | undefined): void {
    if (this.closed) return;
    const { request, setup, logFile } = this.options;
    const { hookRan } = this.run.finish(result);
    // Tool subprocesses die with the run, also those that left their process group.
    killToolProcesses(this.entry);
    this.closed = true;
    this.run.closeLog();
    removeOwnEntry(this.processesDirectory, this.entry);
    if (logFile) finishRunLog(logFile, request.conversation_id, result, hookRan);
    setup.lock.release();
    this.hub.closeAll(result ? `the run ended: ${result.status}` : 'the server is stopping', result);
  }
}

/**
 * The per-run log after the run, while the lock is still held (the next run of the conversation
 * starts a new log): a run that did not end well says why there (a detached run has nobody else to
 * tell); a log with nothing in it is removed, unless a Notification hook started detached may
 * still write to it.
 */
function finishRunLog(file: string, conversationId: string, result: ResultObject | undefined, hookRan: boolean): void {
  try {
    if (result?.error) {
      const hint = result.error.hint ? `\n  ${result.error.hint.split('\n').join('\n  ')}` : '';
      const fd = openSync(
        file,
        constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW,
        0o600,
      );
      try {
        writeSync(
          fd,
          `[${new Date().toISOString()}] ${conversationId}: run ended: ${result.status} ` +
            `(exit ${result.exit_code}): ${result.error.message}${hint}\n`,
        );
      } finally {
        closeSync(fd);
      }
    } else if (!hookRan && statSync(file).size === 0) {
      unlinkSync(file);
    }
  } catch {
    // the run log is a convenience
  }
}
