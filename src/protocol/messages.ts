/**
 * The wire messages between a query server and its clients (DESIGN §8). Conversation events and
 * inquiries travel as plain JSON objects: their shapes belong to the conversation and inquiry
 * modules, and this module imports nothing from the project. Validation of what clients send is
 * in client-messages.ts (it needs zod, which a client does not load).
 */
/** 2: a hello carries the run's capability (ClientHello.capability); version 1 servers took any client. */
export const PROTOCOL_VERSION = 2;

type JsonObject = { [key: string]: unknown };

/**
 * What a server message carries besides its envelope: a conversation event, an inquiry, a result.
 * Their shapes belong to the conversation, inquiry and report modules (report/payloads.ts names
 * them); here they are type parameters, so this module imports nothing and no side casts.
 */
export interface Payloads {
  event: object;
  inquiry: object;
  result: object;
}

/** The payloads as plain JSON objects, before anyone says what they are. */
export interface JsonPayloads extends Payloads {
  event: JsonObject;
  inquiry: JsonObject;
  result: JsonObject;
}

export type InterruptAction = 'stop' | 'abort' | 'continue' | 'reply' | 'detach';
export const interruptActions: readonly InterruptAction[] = ['stop', 'abort', 'continue', 'reply', 'detach'];

/** Why a client stops the run with `shutdown`; decides the exit code the client reports. */
export type ShutdownReason = 'user' | 'interrupt' | 'terminate' | 'output_closed';

// ---- client → server -------------------------------------------------------------------------

export interface ClientHello {
  type: 'hello';
  version: number;
  /**
   * The run's capability: a secret the run makes, given to the client that started it and kept in
   * a 0600 file of jp's private state (`processes/<cid>.capability`) for `attach`, `wait` and `kill`.
   * A hello without it is refused (`capability_required`), whatever it asks for.
   */
  capability?: string | undefined;
  can_prompt: boolean;
  read_only?: boolean | undefined;
  /**
   * The foreground `jp query` that started the run: it owns the run until it detaches, and the run
   * stops (saved, resumable) if its connection ends without a `disconnect`.
   */
  owner?: boolean | undefined;
  /**
   * `jp conversation kill`: a client that connects only to stop the run with `shutdown`. It never
   * prompts, never owns the run and is not the client a foreground run waits for. Besides it, only
   * the owner and the prompting client may stop a run; a viewer's `shutdown` is ignored.
   */
  kill?: boolean | undefined;
  /**
   * A prompting client whose editor reads and writes the files (an ACP editor): the run's file
   * tools ask it with `file_request`, so unsaved buffers are seen and edits land in the editor.
   */
  editor_files?: { read: boolean; write: boolean } | undefined;
  /**
   * A prompting client whose editor runs commands in terminals of its own (an ACP editor with
   * `terminal/*`): run_command asks it with `terminal_request`, so the user watches the command.
   */
  editor_terminal?: boolean | undefined;
  /**
   * Which client this is, in a few words (`jp web`, `jp conversation attach`): recorded as `client`
   * on the inquiry_response of an answer this client gives.
   */
  client?: string | undefined;
}

export type ClientMessage =
  | ClientHello
  | { type: 'inquiry_response'; id: string; answer: unknown }
  /**
   * The human was asked and gave no answer (an editor's permission request was cancelled), or the
   * client cannot put this question (`reason` says why, for the model): the inquiry is settled by
   * the detached policy, as if no client could prompt, and not asked again.
   */
  | { type: 'inquiry_declined'; id: string; reason?: string | undefined }
  /**
   * The answer to a `file_request`: a read's text, or `error` (said to the model); a read with
   * neither means the editor does not have the file: the tool reads the disk.
   */
  | { type: 'file_response'; id: string; content?: string | undefined; error?: string | undefined }
  /**
   * How a `terminal_request`'s command ended in the editor's terminal: its output (stdout and
   * stderr together, the editor's tail when `truncated`) and exit code or signal; or `error`, when
   * the editor could not run it (said to the model).
   */
  | {
      type: 'terminal_response';
      id: string;
      output?: string | undefined;
      truncated?: boolean | undefined;
      exit_code?: number | null | undefined;
      signal?: string | null | undefined;
      error?: string | undefined;
    }
  | { type: 'signal'; kind: 'interrupt' }
  | { type: 'interrupt_action'; action: InterruptAction; reply?: string | undefined }
  | { type: 'disconnect'; detach?: boolean | undefined }
  | { type: 'shutdown'; reason?: ShutdownReason | undefined };

// ---- server → client -------------------------------------------------------------------------

export interface ServerHello {
  type: 'hello';
  version: number;
  conversation_id: string;
  pid: number;
  /** Number of events persisted before this connection's first `event` message. */
  event_count: number;
  /** Streamed text not yet persisted as events when the connection was accepted. */
  partial: { message: string; reasoning: string };
  /** Whether this client is the one inquiries are forwarded to. */
  prompting: boolean;
}

export type ServerMessage<P extends Payloads = JsonPayloads> =
  | ServerHello
  /** An event appended to the conversation log; `seq` is its 0-based index in the log. */
  | { type: 'event'; seq: number; event: P['event'] }
  /** A piece of a chat_response not yet persisted; the next persisted chat_response events repeat it. */
  | { type: 'delta'; event: JsonObject }
  /** `if_detached`: what becomes of the inquiry if the client detaches instead of answering (a PromptAction). */
  | { type: 'inquiry'; id: string; inquiry: P['inquiry']; if_detached?: string }
  | { type: 'inquiry_resolved'; id: string; by: string }
  /** A file tool reads or writes through the prompting client's editor (it announced `editor_files`). */
  | { type: 'file_request'; id: string; operation: 'read' | 'write'; path: string; content?: string }
  /**
   * run_command's command (already wrapped in the sandbox) for a terminal of the prompting client's
   * editor (it announced `editor_terminal`); `tool_call_id` is the call it runs for.
   */
  | {
      type: 'terminal_request';
      id: string;
      tool_call_id: string;
      command: string;
      args: string[];
      cwd: string;
      output_byte_limit: number;
    }
  /** The command of a `terminal_request` must stop (its time limit, or the run stopped). */
  | { type: 'terminal_kill'; id: string }
  | { type: 'interrupt_menu'; options: InterruptAction[] }
  /** Chrome the client should show on stderr (retries, warnings, status). */
  | { type: 'notice'; level: 'info' | 'warning'; message: string }
  /**
   * Output of a running tool call `id` (a command's stdout or stderr) as it comes: whole lines
   * (a line ends at a newline or a carriage return), secrets redacted. Never persisted: the call's
   * result holds all of it. `omitted`: lines left out just before these (more came at once than a
   * client can show).
   */
  | { type: 'tool_output'; id: string; stream: 'stdout' | 'stderr'; text: string; omitted?: number }
  /**
   * What the run is busy with while it shows nothing else, in a few words for a status line
   * (`compacting the conversation`, `retrying in 2.0 s`); it holds until the next event or delta.
   */
  | { type: 'activity'; text: string }
  | { type: 'turn_complete'; result: P['result'] }
  | { type: 'process_exiting'; reason: string }
  /** A refusal or protocol error; the server closes the connection after sending it. */
  | { type: 'error'; code: string; message: string };

/**
 * Validates a value received from a server: only the envelope is checked. The payloads are taken as
 * `P` says: a client trusts the server it started or attached to (as for the line cap, framing.ts).
 */
export function parseServerMessage<P extends Payloads = JsonPayloads>(value: unknown): ServerMessage<P> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const type = (value as JsonObject).type;
  const known = [
    'hello',
    'event',
    'delta',
    'inquiry',
    'inquiry_resolved',
    'file_request',
    'terminal_request',
    'terminal_kill',
    'interrupt_menu',
    'notice',
    'tool_output',
    'activity',
    'turn_complete',
    'process_exiting',
    'error',
  ];
  return typeof type === 'string' && known.includes(type) ? (value as ServerMessage<P>) : undefined;
}
