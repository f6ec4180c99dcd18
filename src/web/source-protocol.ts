/**
 * The protocol of `jp web --stdio`, which `jp web` speaks with a source on another machine over
 * `ssh host jp web --stdio`: NDJSON both ways, one message a line. Requests carry an id and get one
 * reply; a watch gets list messages from then on; an opened view gets view messages under its
 * view id, and takes client-protocol messages (DESIGN §8) for the run it is attached to.
 */
import type { ClientMessage } from '../protocol/messages.ts';
import type { ContinueRequest, ConversationReference, ListedRun, OpenRequest, ViewMessage } from './types.ts';

export type SourceRequest =
  | { op: 'watch' }
  | ({ op: 'open'; view: string } & OpenRequest)
  | { op: 'send'; view: string; message: ClientMessage }
  | { op: 'close'; view: string }
  | ({ op: 'continue'; id: string } & ContinueRequest)
  | ({ op: 'kill'; id: string } & ConversationReference)
  | ({ op: 'diff'; id: string; turn?: number | undefined } & ConversationReference);

export type SourceReply =
  | { type: 'list'; runs: ListedRun[] }
  | { type: 'view'; view: string; message: ViewMessage }
  | { type: 'reply'; id: string; ok: boolean; message: string };

/** The version both ends speak: the first line the serving side writes is its hello. */
export const sourceProtocolVersion = 1;
export type SourceHello = { type: 'hello'; protocol: 'jp-web-source'; version: number };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isString = (value: unknown): value is string => typeof value === 'string';

/** Checks a request read from `jp web` (its shape; the source checks what it refers to). */
export function parseSourceRequest(value: unknown): SourceRequest | undefined {
  if (!isObject(value)) return undefined;
  const reference = isString(value.workspace) && isString(value.conversation);
  switch (value.op) {
    case 'watch':
      return { op: 'watch' };
    case 'open':
      return isString(value.view) && reference && typeof value.from === 'number' && isString(value.client)
        ? (value as SourceRequest)
        : undefined;
    case 'send':
      return isString(value.view) && isObject(value.message) ? (value as SourceRequest) : undefined;
    case 'close':
      return isString(value.view) ? (value as SourceRequest) : undefined;
    case 'continue':
      return isString(value.id) &&
        reference &&
        isString(value.inquiry_id) &&
        isString(value.tool_call_id) &&
        isString(value.client)
        ? (value as SourceRequest)
        : undefined;
    case 'kill':
    case 'diff':
      return isString(value.id) && reference ? (value as SourceRequest) : undefined;
    default:
      return undefined;
  }
}
