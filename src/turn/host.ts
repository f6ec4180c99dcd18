/**
 * What the turn engine needs from whoever runs it (the run's live log, run/live-log.ts): persistence, a way to reach
 * clients, and nothing about terminals. Events go out; inquiries go out and answers come back.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import type { Inquiry, PromptAction } from '../inquiry/types.ts';
import type { EditorFiles, EditorTerminal, ProcessTracker } from '../tools/tool.ts';
import type { Secrets } from '../redact.ts';
import type { TurnHooks } from './hook-port.ts';

/** Lines a running tool call wrote to one of its streams; `omitted`: lines left out just before them. */
export interface ToolOutputPiece {
  id: string;
  stream: 'stdout' | 'stderr';
  text: string;
  omitted?: number;
}

/**
 * What the prompting client replied. `answer` is as it came (untrusted): the engine reads it as an
 * answer to the inquiry it asked (inquiry/answer.ts). `declined`: the human was asked and gave no
 * answer; the detached policy settles the inquiry.
 */
/**
 * `client`: the name the answering client gave in its hello (ClientHello.client), recorded with the
 * answer. `reason`: a client that declined says why it could not ask (its words end the model's
 * "unanswered: …").
 */
export type ClientAnswer =
  | { answered: true; answer: unknown; client?: string | undefined }
  | { answered: false; declined?: boolean; reason?: string };

export interface TurnHost {
  /** Persists one event (one write) and forwards it to clients. */
  append(event: ConversationEvent): void;
  /** Forwards a streamed piece of a chat_response that is not persisted yet. */
  delta(piece: { kind: 'message' | 'reasoning'; text: string }): void;
  /** Chrome for the clients' stderr: retries, warnings. */
  notice(level: 'info' | 'warning', message: string): void;
  /** Forwards live output of a running tool call (whole lines, redacted): shown while it runs, never persisted. */
  toolOutput(piece: ToolOutputPiece): void;
  /** Says what the run is busy with while nothing else shows (compacting, retrying), for a status line. */
  activity(text: string): void;
  /** fsync the log. */
  sync(): void;
  /** Whether a client that can prompt a human is attached right now. */
  hasPromptingClient(): boolean;
  /**
   * Forwards an inquiry to the prompting client; resolves unanswered if that client goes away.
   * `ifDetached` is what becomes of it if the client detaches instead of answering, so the client
   * can say so.
   */
  askClient(id: string, inquiry: Inquiry, signal: AbortSignal, ifDetached?: PromptAction): Promise<ClientAnswer>;
  /** Tells clients an inquiry was settled (by a human, a policy or the assistant). */
  inquiryResolved(id: string, by: string): void;
  processes: ProcessTracker;
  /** The run's secrets: every event, inquiry and tool result is redacted by them where it is made. */
  readonly secrets: Secrets;
  /** The prompting client's editor, when it offers to read and write files (an ACP editor). */
  editorFiles?(): EditorFiles | undefined;
  /** A terminal of the prompting client's editor for the call `toolCallId`, when it offers them (an ACP editor). */
  editorTerminal?(toolCallId: string): EditorTerminal | undefined;
  /** The user's hooks (src/hooks/), when any are configured. */
  readonly hooks?: TurnHooks;
}

/** The reason carried by the stop signal: what asked the run to stop. */
export class StopRequest {
  readonly signal: 'SIGINT' | 'SIGTERM' | 'shutdown';
  /** `abort` drops the partial turn (marked discarded) instead of keeping it resumable. */
  readonly discard: boolean;

  /** Set when the user interrupted to reply: the turn continues with this message. */
  readonly reply: string | undefined;

  constructor(signal: 'SIGINT' | 'SIGTERM' | 'shutdown', options: { discard?: boolean; reply?: string } = {}) {
    this.signal = signal;
    this.discard = options.discard ?? false;
    this.reply = options.reply;
  }

  /** 130 for SIGINT (Ctrl+C), 143 for SIGTERM and `jp conversation kill`. */
  get exitCode(): number {
    return this.signal === 'SIGINT' ? 130 : 143;
  }
}
