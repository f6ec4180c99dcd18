/**
 * The wire messages between a query server and its clients (DESIGN §8). Conversation events and
 * inquiries travel as plain JSON objects: their shapes belong to the conversation and inquiry
 * modules, and this module imports nothing from the project.
 */
import * as z from 'zod/mini';

export const PROTOCOL_VERSION = 1;

type JsonObject = { [key: string]: unknown };

export type InterruptAction = 'stop' | 'abort' | 'continue' | 'reply' | 'detach';
export const interruptActions: readonly InterruptAction[] = ['stop', 'abort', 'continue', 'reply', 'detach'];

/** Why a client stops the run with `shutdown`; decides the exit code the client reports. */
export type ShutdownReason = 'user' | 'interrupt' | 'terminate' | 'output_closed';

// ---- client → server -------------------------------------------------------------------------

export const clientHelloSchema = z.object({
  type: z.literal('hello'),
  version: z.number(),
  can_prompt: z.boolean(),
  read_only: z.optional(z.boolean()),
});

export const clientMessageSchema = z.discriminatedUnion('type', [
  clientHelloSchema,
  z.object({ type: z.literal('inquiry_response'), id: z.string(), answer: z.unknown() }),
  z.object({ type: z.literal('signal'), kind: z.literal('interrupt') }),
  z.object({
    type: z.literal('interrupt_action'),
    action: z.enum(['stop', 'abort', 'continue', 'reply', 'detach']),
    reply: z.optional(z.string()),
  }),
  z.object({ type: z.literal('disconnect'), detach: z.optional(z.boolean()) }),
  z.object({
    type: z.literal('shutdown'),
    reason: z.optional(z.enum(['user', 'interrupt', 'terminate', 'output_closed'])),
  }),
]);

export type ClientHello = z.infer<typeof clientHelloSchema>;
export type ClientMessage = z.infer<typeof clientMessageSchema>;

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

export type ServerMessage =
  | ServerHello
  /** An event appended to the conversation log; `seq` is its 0-based index in the log. */
  | { type: 'event'; seq: number; event: JsonObject }
  /** A piece of a chat_response not yet persisted; the next persisted chat_response events repeat it. */
  | { type: 'delta'; event: JsonObject }
  | { type: 'inquiry'; id: string; inquiry: JsonObject }
  | { type: 'inquiry_resolved'; id: string; by: string }
  | { type: 'interrupt_menu'; options: InterruptAction[] }
  /** Chrome the client should show on stderr (retries, warnings, status). */
  | { type: 'notice'; level: 'info' | 'warning'; message: string }
  | { type: 'turn_complete'; result: JsonObject }
  | { type: 'process_exiting'; reason: string }
  /** A refusal or protocol error; the server closes the connection after sending it. */
  | { type: 'error'; code: string; message: string };

export type ParsedClientMessage =
  | { ok: true; message: ClientMessage }
  | { ok: false; code: 'unknown_type' | 'invalid_message'; message: string };

/** Validates an untrusted value received from a client. Never throws. */
export function parseClientMessage(value: unknown): ParsedClientMessage {
  const result = clientMessageSchema.safeParse(value);
  if (result.success) {
    if (result.data.type === 'inquiry_response' && !('answer' in (value as JsonObject))) {
      return { ok: false, code: 'invalid_message', message: 'invalid inquiry_response message at answer' };
    }
    return { ok: true, message: result.data };
  }
  const type = typeof value === 'object' && value !== null ? (value as JsonObject).type : undefined;
  const known = ['hello', 'inquiry_response', 'signal', 'interrupt_action', 'disconnect', 'shutdown'];
  if (typeof type !== 'string' || !known.includes(type)) {
    return { ok: false, code: 'unknown_type', message: `unknown message type ${JSON.stringify(type ?? null)}` };
  }
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return { ok: false, code: 'invalid_message', message: `invalid ${type} message${where}` };
}

/** Validates a value received from a server: only the envelope is checked. */
export function parseServerMessage(value: unknown): ServerMessage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const type = (value as JsonObject).type;
  const known = [
    'hello',
    'event',
    'delta',
    'inquiry',
    'inquiry_resolved',
    'interrupt_menu',
    'notice',
    'turn_complete',
    'process_exiting',
    'error',
  ];
  return typeof type === 'string' && known.includes(type) ? (value as ServerMessage) : undefined;
}
