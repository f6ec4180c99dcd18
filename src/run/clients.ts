/**
 * The contract between a run and whoever hosts its clients (server/client-hub.ts: sockets, or the
 * in-memory link of `--no-server`). The run sends and asks through RunClients; the hub turns what
 * clients say into the run's intents through RunControl and never calls into a turn.
 */
import type { Inquiry, PromptAction } from '../inquiry/types.ts';
import type { ServerMessage } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';
import type { EditorFiles, EditorTerminal } from '../tools/tool.ts';
import type { ClientAnswer, StopRequest } from '../turn/host.ts';

export interface RunClients {
  /** Resolves once the client that started the run has said hello. */
  firstClient(): Promise<void>;
  broadcast(message: ServerMessage<RunPayloads>): void;
  /** Whether a client that can prompt a human is attached right now. */
  hasPromptingClient(): boolean;
  /** Forwards an inquiry to the prompting client; resolves unanswered if there is none or it goes away. */
  askClient(id: string, inquiry: Inquiry, signal: AbortSignal, ifDetached?: PromptAction): Promise<ClientAnswer>;
  /** The prompting client's editor, when it offers to read and write files. */
  editorFiles(): EditorFiles | undefined;
  /** A terminal of the prompting client's editor for the call `toolCallId`, when it offers them. */
  editorTerminal(toolCallId: string): EditorTerminal | undefined;
}

export interface RunControl {
  /** The run has ended: a new client is turned away. */
  readonly finished: boolean;
  /**
   * What a client's hello is answered with: how many events the log holds, and the text streamed since the last
   * one.
   */
  hello(): { event_count: number; partial: { message: string; reasoning: string } };
  /** Asks the run to stop; the turn persists what it has. */
  stop(request: StopRequest): void;
  /** Its user detached: from now on nobody is there to answer, and the run defers what it would ask. */
  detached(): void;
}
