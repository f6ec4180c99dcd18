/**
 * Validation of messages received from clients (untrusted input): used by the server, and by the
 * relay of `jp query --stdio` for what its program sends; the terminal client never loads zod. Imports nothing from
 * the project outside this module.
 */
import * as z from 'zod/mini';
import type { ClientMessage } from './messages.ts';

type JsonObject = { [key: string]: unknown };

const clientHelloSchema = z.object({
  type: z.literal('hello'),
  version: z.number(),
  capability: z.optional(z.string().check(z.maxLength(256))),
  can_prompt: z.boolean(),
  read_only: z.optional(z.boolean()),
  owner: z.optional(z.boolean()),
  kill: z.optional(z.boolean()),
  editor_files: z.optional(z.object({ read: z.boolean(), write: z.boolean() })),
  editor_terminal: z.optional(z.boolean()),
  client: z.optional(z.string().check(z.maxLength(100))),
});

const clientMessageSchema = z.discriminatedUnion('type', [
  clientHelloSchema,
  z.object({ type: z.literal('inquiry_response'), id: z.string(), answer: z.unknown() }),
  z.object({
    type: z.literal('inquiry_declined'),
    id: z.string(),
    reason: z.optional(z.string().check(z.maxLength(1000))),
  }),
  z.object({
    type: z.literal('file_response'),
    id: z.string(),
    content: z.optional(z.string()),
    error: z.optional(z.string()),
  }),
  z.object({
    type: z.literal('terminal_response'),
    id: z.string(),
    output: z.optional(z.string()),
    truncated: z.optional(z.boolean()),
    exit_code: z.optional(z.nullable(z.number())),
    signal: z.optional(z.nullable(z.string())),
    error: z.optional(z.string()),
  }),
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
  const known = [
    'hello',
    'inquiry_response',
    'inquiry_declined',
    'file_response',
    'terminal_response',
    'signal',
    'interrupt_action',
    'disconnect',
    'shutdown',
  ];
  if (typeof type !== 'string' || !known.includes(type)) {
    return { ok: false, code: 'unknown_type', message: `unknown message type ${JSON.stringify(type ?? null)}` };
  }
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return { ok: false, code: 'invalid_message', message: `invalid ${type} message${where}` };
}
