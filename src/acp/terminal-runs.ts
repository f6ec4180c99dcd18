/**
 * run_command's commands in the editor's terminals (ACP `terminal/*`): a `terminal_request` from
 * the run becomes `terminal/create`, the terminal is shown in the call (`tool_call_update` with
 * terminal content, so its output streams live in the editor), its exit and output go back to the
 * run as `terminal_response`. The terminal is released once the call's final update was sent (or
 * the turn ended); `terminal_kill` and a cancelled turn kill what still runs.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { Logger } from '../output/logger.ts';
import type { ClientMessage, ServerMessage } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';
import { editorErrorText, type EditorTerminals } from './editor-peer.ts';
import type { UpdateMapper } from './updates.ts';

type Request = Extract<ServerMessage<RunPayloads>, { type: 'terminal_request' }>;

interface Run {
  toolCallId: string;
  terminalId: string | undefined;
  killed: boolean;
  released: boolean;
}

export class TerminalRuns {
  private readonly runs = new Map<string, Run>();

  constructor(
    private readonly terminals: EditorTerminals,
    private readonly options: {
      send(message: ClientMessage): void;
      update(update: SessionUpdate): void;
      mapper: UpdateMapper;
      logger: Logger;
    },
  ) {}

  async run(request: Request): Promise<void> {
    const run: Run = { toolCallId: request.tool_call_id, terminalId: undefined, killed: false, released: false };
    this.runs.set(request.id, run);
    try {
      const terminalId = await this.terminals.create({
        command: request.command,
        args: request.args,
        cwd: request.cwd,
        outputByteLimit: request.output_byte_limit,
      });
      run.terminalId = terminalId;
      this.options.update(this.options.mapper.embedTerminal(request.tool_call_id, terminalId));
      if (run.killed) await this.terminals.kill(terminalId);
      const exit = await this.terminals.waitForExit(terminalId);
      const output = await this.terminals.output(terminalId);
      this.options.send({
        type: 'terminal_response',
        id: request.id,
        output: output.output,
        truncated: output.truncated,
        exit_code: exit.exitCode,
        signal: exit.signal,
      });
    } catch (error) {
      const reason = editorErrorText(error);
      this.options.logger.warn('acp: a command in the editor terminal failed', { error: reason });
      this.options.send({ type: 'terminal_response', id: request.id, error: reason });
    }
  }

  /** The run asks the command to stop (its time limit, or the run stopping). */
  kill(id: string): void {
    const run = this.runs.get(id);
    if (!run) return;
    run.killed = true;
    if (run.terminalId !== undefined && !run.released) void this.quietly(this.terminals.kill(run.terminalId));
  }

  /** The turn is cancelled, or the editor went away: every command still running is killed. */
  killAll(): void {
    for (const id of this.runs.keys()) this.kill(id);
  }

  /** The call's final update was sent: its terminal can go. */
  releaseCall(toolCallId: string): void {
    for (const run of this.runs.values()) if (run.toolCallId === toolCallId) this.release(run);
  }

  releaseAll(): void {
    for (const run of this.runs.values()) this.release(run);
  }

  private release(run: Run): void {
    if (run.released || run.terminalId === undefined) return;
    run.released = true;
    void this.quietly(this.terminals.release(run.terminalId));
  }

  private async quietly(request: Promise<void>): Promise<void> {
    try {
      await request;
    } catch (error) {
      this.options.logger.warn('acp: a terminal request failed', { error: editorErrorText(error) });
    }
  }
}
