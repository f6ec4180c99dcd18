/**
 * Which parts of a conversation log this user's jp wrote (DESIGN §10). A log is a record that
 * travels: `.jp/conversations/` is committed with a repository, and anyone who can write a file can
 * write an event. The events that carry settings or consent are sealed when jp writes them: an
 * HMAC-SHA256 with a key kept user-locally (`$XDG_DATA_HOME/jp/log-seal.key`, 0600 in a 0700
 * directory, made on first use), over the event's meaning bound to its conversation:
 *   - `config_delta`: the conversation id and the delta;
 *   - `tool_call_request` (jp's own tools): the conversation id, the call id, the tool and its arguments;
 *   - `inquiry_response`: the conversation id, the inquiry's id, its tool call, the inquiry as asked,
 *     the answer and who gave it;
 *   - `turn_start` with the turn's tools: the conversation id and the tools.
 * A repository, another user or a model cannot make a seal that verifies: they do not have the key.
 * An event without a valid seal is read and shown like any other, but configures nothing and
 * approves nothing.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { linkSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { RunError } from '../errors.ts';
import {
  ensurePrivateDirectory,
  readRegularFile,
  removeQuietly,
  temporaryNameFor,
  writeFileAtomic,
} from '../workspace/files.ts';
import type { ConversationEvent, EventOf } from './events.ts';

/** JSON with object keys sorted, so equal values have equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, inner]) => [key, sortKeys(inner)]),
  );
}

export type SealedEvent =
  | EventOf<'config_delta'>
  | EventOf<'tool_call_request'>
  | EventOf<'inquiry_response'>
  | EventOf<'turn_start'>;

export function sealKeyFile(dataHome: string): string {
  return path.join(dataHome, 'jp', 'log-seal.key');
}

export class LogSeal {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    this.key = key;
  }

  /** This user's seal: reads the key, or makes it (atomically: concurrent first runs agree on one key). */
  static forUser(dataHome: string): LogSeal {
    const file = sealKeyFile(dataHome);
    const existing = readKey(file);
    if (existing) return new LogSeal(existing);
    ensurePrivateDirectory(path.dirname(file));
    const temporary = temporaryNameFor(file);
    try {
      writeFileAtomic(temporary, randomBytes(32).toString('hex') + '\n');
      linkSync(temporary, file); // fails if another process made it first: then its key is the key
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      removeQuietly(temporary);
    }
    const made = readKey(file);
    if (!made) throw new RunError('seal_key', `cannot read ${file} right after making it`);
    return new LogSeal(made);
  }

  /** The seal of `event` in conversation `conversationId`; `events` is the log before it (an answer's inquiry is looked up there). */
  sealOf(conversationId: string, event: SealedEvent, events: readonly ConversationEvent[]): string | undefined {
    const parts = this.meaning(conversationId, event, events);
    return parts === undefined ? undefined : createHmac('sha256', this.key).update(canonicalJson(parts)).digest('hex');
  }

  /** Whether this user's jp wrote `event` in this conversation, as it is. */
  verifies(conversationId: string, event: SealedEvent, events: readonly ConversationEvent[]): boolean {
    const recorded = (event as { seal?: unknown }).seal;
    if (typeof recorded !== 'string' || !/^[0-9a-f]{64}$/.test(recorded)) return false;
    const expected = this.sealOf(conversationId, event, events);
    return expected !== undefined && timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(recorded, 'hex'));
  }

  /** `event` with its seal (when it is one jp seals). */
  seal<E extends ConversationEvent>(conversationId: string, event: E, events: readonly ConversationEvent[]): E {
    if (!isSealable(event)) return event;
    const { seal: _old, ...unsealed } = event as E & { seal?: string };
    const seal = this.sealOf(conversationId, unsealed as unknown as SealedEvent, events);
    return (seal === undefined ? unsealed : { ...unsealed, seal }) as E;
  }

  private meaning(
    conversationId: string,
    event: SealedEvent,
    events: readonly ConversationEvent[],
  ): unknown[] | undefined {
    switch (event.type) {
      case 'config_delta':
        return ['config_delta', conversationId, event.delta];
      case 'turn_start':
        return event.tools === undefined ? undefined : ['turn_start', conversationId, event.tools];
      case 'tool_call_request':
        return [
          'tool_call_request',
          conversationId,
          event.id,
          event.name,
          event.arguments ?? null,
          event.provider_executed === true,
        ];
      case 'inquiry_response': {
        const request = findInquiryRequest(events, event.id);
        if (!request) return undefined;
        return [
          'inquiry_response',
          conversationId,
          event.id,
          request.tool_call_id,
          request.inquiry,
          event.answer ?? null,
          event.by,
        ];
      }
    }
  }
}

export function isSealable(event: ConversationEvent): event is SealedEvent {
  return (
    event.type === 'config_delta' ||
    event.type === 'tool_call_request' ||
    event.type === 'inquiry_response' ||
    (event.type === 'turn_start' && event.tools !== undefined)
  );
}

/** The last inquiry_request with this id (an inquiry asked again under its id is the same inquiry). */
export function findInquiryRequest(
  events: readonly ConversationEvent[],
  id: string,
): EventOf<'inquiry_request'> | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.type === 'inquiry_request' && event.id === id) return event;
  }
  return undefined;
}

function readKey(file: string): Buffer | undefined {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(file);
  } catch {
    return undefined;
  }
  const uid = process.getuid?.();
  if ((uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    throw new RunError(
      'unsafe_seal_key',
      `refusing ${file}: ${uid !== undefined && stat.uid !== uid ? `it is owned by uid ${stat.uid}, not ${uid}` : `its mode is ${(stat.mode & 0o777).toString(8)}, readable or writable by others`}`,
      {
        hint: `This key proves which conversation logs your jp wrote; others must not read or write it. Remove ${file} (jp makes a new one; settings and approvals recorded with the old one are then asked again), or \`chmod 600\` it if you are sure no one read it.`,
      },
    );
  }
  const content = readRegularFile(file)?.toString('utf8').trim();
  if (!content || !/^[0-9a-f]{64}$/.test(content)) {
    throw new RunError('damaged_seal_key', `${file} is not a jp log seal key`, {
      hint: `Remove ${file}; jp makes a new one (settings and approvals recorded with the old one are then asked again).`,
    });
  }
  return Buffer.from(content, 'hex');
}
