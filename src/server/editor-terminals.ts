/**
 * run_command's commands run in the prompting client's editor's terminals (ClientHello
 * .editor_terminal, an ACP editor that offers `terminal/*`): a `terminal_request` carries the whole
 * command line (the sandbox already applied), the client answers with `terminal_response` once it
 * ended, and `terminal_kill` stops it (the call's time limit, or the run stopping). A client that
 * goes away ends its requests with an error for the model.
 */
import type { ClientMessage, ServerMessage } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';
import type { EditorTerminal, EditorTerminalOutcome } from '../tools/tool.ts';

type Response = Extract<ClientMessage, { type: 'terminal_response' }>;

interface Peer {
  readonly closed: boolean;
  send(message: ServerMessage<RunPayloads>): void;
}

interface Pending {
  peer: Peer;
  settle(response: Omit<Response, 'type' | 'id'>): void;
}

export class EditorTerminals {
  private readonly pending = new Map<string, Pending>();
  private sequence = 0;

  /** A terminal of `peer`'s editor for the call `toolCallId`. */
  terminalFor(peer: Peer, toolCallId: string): EditorTerminal {
    return {
      run: (command, options) =>
        new Promise<EditorTerminalOutcome>((resolve, reject) => {
          if (peer.closed) return reject(new Error('the editor went away before the command started'));
          const id = `terminal-${++this.sequence}`;
          const kill = (): void => {
            if (this.pending.has(id) && !peer.closed) peer.send({ type: 'terminal_kill', id });
          };
          options.signal.addEventListener('abort', kill, { once: true });
          this.pending.set(id, {
            peer,
            settle: (response) => {
              options.signal.removeEventListener('abort', kill);
              if (response.error !== undefined) return reject(new Error(response.error));
              resolve({
                output: response.output ?? '',
                truncated: response.truncated === true,
                exitCode: response.exit_code ?? null,
                signal: response.signal ?? null,
              });
            },
          });
          peer.send({
            type: 'terminal_request',
            id,
            tool_call_id: toolCallId,
            command: command.command,
            args: command.args,
            cwd: command.cwd,
            output_byte_limit: options.outputByteLimit,
          });
          if (options.signal.aborted) kill();
        }),
    };
  }

  /** The client's answer; one from another connection than the request went to is ignored. */
  respond(peer: Peer, response: Response): void {
    const pending = this.pending.get(response.id);
    if (!pending || pending.peer !== peer) return;
    this.pending.delete(response.id);
    pending.settle(response);
  }

  /** The client went away: its commands are not known to have run to an end. */
  gone(peer: Peer): void {
    for (const [id, pending] of this.pending) {
      if (pending.peer !== peer) continue;
      this.pending.delete(id);
      pending.settle({ error: "the editor went away before the command's end was known" });
    }
  }
}
