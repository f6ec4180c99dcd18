/**
 * Which parts of a conversation log this user's jp wrote, and where (DESIGN §10). A log is a record
 * that travels: `.jp/conversations/` is committed with a repository, and anyone who can write a file
 * can write an event. The events that carry settings or consent are sealed when jp writes them: an
 * HMAC-SHA256 with a key kept user-locally (`$XDG_DATA_HOME/jp/log-seal.key`, 0600 in a 0700
 * directory, made on first use; `jp seal rotate` replaces it), over the event's meaning bound to its
 * place: the conversation id, the workspace id (its root's real path: a copy elsewhere is another
 * workspace) and the event's position in the log (its 0-based index), and
 *   - `config_delta`: the delta;
 *   - `tool_call_request` (jp's own tools): the call id, the tool and its arguments;
 *   - `inquiry_response`: the inquiry's id, its tool call, the inquiry as asked (the last request of
 *     that id before the answer), the answer and who gave it;
 *   - `turn_start` with the turn's tools (--no-tools, --tool): the tools.
 * A repository, another user or a model cannot make a seal that verifies: they do not have the key.
 * A sealed event copied to another conversation, workspace or position (a new turn, another order)
 * does not verify there. An event without a valid seal is read and shown like any other, but
 * configures nothing and approves nothing; so is every event sealed with a key since rotated.
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

/** Where a log lives: what every seal in it is bound to, besides the event's position. */
export interface SealPlace {
  conversationId: string;
  /** Workspace.id: `<basename>-<12 hex of the root's real path>`. */
  workspaceId: string;
}

/** The version of the sealed meaning; seals of another version (or none) verify nowhere. */
const sealVersion = 'jp-seal-2';

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
      writeFileAtomic(temporary, newKeyText());
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

  /**
   * Replaces this user's key with a new one (`jp seal rotate`), atomically. Everything sealed with
   * the old key stays readable and carries no authority from now on: settings recorded in
   * conversations are ignored (and named), recorded approvals are asked again.
   */
  static rotate(dataHome: string): void {
    const file = sealKeyFile(dataHome);
    readKey(file); // an unsafe or damaged key is refused as on any use, with its way out
    ensurePrivateDirectory(path.dirname(file));
    writeFileAtomic(file, newKeyText());
  }

  /** This seal at one place: what seals and verifies the events of that conversation's log. */
  at(place: SealPlace): PlacedSeal {
    return new PlacedSeal(this.key, place);
  }
}

/** A LogSeal bound to one conversation of one workspace. */
export class PlacedSeal {
  readonly place: SealPlace;
  private readonly key: Buffer;

  constructor(key: Buffer, place: SealPlace) {
    this.key = key;
    this.place = place;
  }

  /** `event` with its seal (when it is one jp seals), for the position after `log`: it is appended next. */
  seal<E extends ConversationEvent>(event: E, log: readonly ConversationEvent[]): E {
    if (!isSealable(event)) return event;
    const seal = this.sealAt(event, log.length, log);
    return seal === undefined ? event : { ...event, seal };
  }

  /**
   * Whether this user's jp wrote `event` here, as it is: in this conversation and workspace, at the
   * position it has in `log` (the whole log, which holds this very event object).
   */
  verifies(event: SealedEvent, log: readonly ConversationEvent[]): boolean {
    const recorded = (event as { seal?: unknown }).seal;
    if (typeof recorded !== 'string' || !/^[0-9a-f]{64}$/.test(recorded)) return false;
    const position = log.indexOf(event);
    if (position === -1) return false;
    const expected = this.sealAt(event, position, log);
    return expected !== undefined && timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(recorded, 'hex'));
  }

  private sealAt(event: SealedEvent, position: number, log: readonly ConversationEvent[]): string | undefined {
    const meaning = meaningOf(event, log, position);
    if (meaning === undefined) return undefined;
    const bound = [sealVersion, this.place.conversationId, this.place.workspaceId, position, ...meaning];
    return createHmac('sha256', this.key).update(canonicalJson(bound)).digest('hex');
  }
}

/** What a seal says of an event at `position` of `log` (an answer's inquiry is looked up before it). */
function meaningOf(event: SealedEvent, log: readonly ConversationEvent[], position: number): unknown[] | undefined {
  switch (event.type) {
    case 'config_delta':
      return ['config_delta', event.delta];
    case 'turn_start':
      return event.tools === undefined ? undefined : ['turn_start', event.tools];
    case 'tool_call_request':
      return ['tool_call_request', event.id, event.name, event.arguments ?? null, event.provider_executed === true];
    case 'inquiry_response': {
      const request = findInquiryRequest(log, event.id, position);
      if (!request) return undefined;
      return ['inquiry_response', event.id, request.tool_call_id, request.inquiry, event.answer ?? null, event.by];
    }
  }
}

function newKeyText(): string {
  return `${randomBytes(32).toString('hex')}\n`;
}

export function isSealable(event: ConversationEvent): event is SealedEvent {
  return (
    event.type === 'config_delta' ||
    event.type === 'tool_call_request' ||
    event.type === 'inquiry_response' ||
    (event.type === 'turn_start' && event.tools !== undefined)
  );
}

/**
 * The last inquiry_request with this id before `end` (an inquiry asked again under its id is the same
 * inquiry).
 */
export function findInquiryRequest(
  events: readonly ConversationEvent[],
  id: string,
  end = events.length,
): EventOf<'inquiry_request'> | undefined {
  for (let index = end - 1; index >= 0; index--) {
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
    const problem =
      uid !== undefined && stat.uid !== uid
        ? `it is owned by uid ${stat.uid}, not ${uid}`
        : `its mode is ${(stat.mode & 0o777).toString(8)}, readable or writable by others`;
    throw new RunError('unsafe_seal_key', `refusing ${file}: ${problem}`, {
      hint:
        'This key proves which conversation logs your jp wrote; others must not read or write it. ' +
        `Remove ${file} (jp makes a new one; ` +
        'settings and approvals recorded with the old one are then asked again), or ' +
        '`chmod 600` it if you are sure no one read it.',
    });
  }
  const content = readRegularFile(file)?.toString('utf8').trim();
  if (!content || !/^[0-9a-f]{64}$/.test(content)) {
    throw new RunError('damaged_seal_key', `${file} is not a jp log seal key`, {
      hint:
        `Remove ${file}; jp makes a new one ` +
        '(settings and approvals recorded with the old one are then asked again).',
    });
  }
  return Buffer.from(content, 'hex');
}
