/**
 * Conversations on disk: `.jp/conversations/<cid>/{events.ndjson,metadata.json}` (DESIGN §6).
 * Ids look like `jp-c<milliseconds><3 digits>` and sort by creation time. metadata.json is a cache
 * for listing (title, times); the event log stays the truth.
 *
 * A conversation appears complete: it is made under a temporary name (`.new-<pid>-<random>`, which
 * nothing lists) with its metadata and its log, then renamed to its id; it disappears at once too
 * (renamed to `.removed-<pid>-<random>`, then deleted). A damaged metadata.json is
 * never overwritten: it is moved aside (`metadata.json.damaged-<ts>`) and rebuilt from the log.
 */
import { processExists } from '../workspace/process-identity.ts';
import {
  closeSync,
  constants,
  fsyncSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  fstatSync,
} from 'node:fs';
import path from 'node:path';
import { asDiskFull, DamagedFileError, JpError, UsageError } from '../errors.ts';
import {
  describeFileType,
  makeDirectories,
  openRegularFile,
  readRegularFile,
  writeAll,
  writeFileAtomic,
} from '../workspace/files.ts';
import type { ConversationEvent } from './events.ts';
import { readEventLog } from './reader.ts';

export const conversationIdPattern = /^jp-c\d{16}$/;

/** Prefixes of conversation directories being created (renamed to their id once complete) or removed. */
const pendingPrefix = '.new-';
const removedPrefix = '.removed-';

function scratchName(conversationsDirectory: string, prefix: string): string {
  return path.join(conversationsDirectory, `${prefix}${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
}

export interface ConversationMetadata {
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  /** The conversation this one was forked from. */
  forked_from?: string;
  /** Turns whose checkpoints recorded changed files (DESIGN §10), as the last run or undo left them. */
  changed_turns?: number[];
}

export function conversationDirectory(conversationsDirectory: string, id: string): string {
  return path.join(conversationsDirectory, id);
}

export function eventsFile(conversationsDirectory: string, id: string): string {
  return path.join(conversationsDirectory, id, 'events.ndjson');
}

function metadataFile(conversationsDirectory: string, id: string): string {
  return path.join(conversationsDirectory, id, 'metadata.json');
}

export interface NewConversation {
  title?: string | null;
  /** The conversation this one was forked from. */
  forkedFrom?: string;
  /** The log's initial content (complete lines) for the id it gets, e.g. a fork's copied turns (sealed for that id). */
  log?: (id: string) => string;
}

/**
 * Creates a conversation with a fresh id: its directory appears complete, with metadata.json and
 * events.ndjson, or not at all. The rename is the uniqueness check (a taken id is a non-empty
 * directory). A full disk is a DiskFullError; nothing is left behind.
 */
export function createConversation(
  conversationsDirectory: string,
  initial: NewConversation = {},
): ConversationMetadata {
  makeDirectories(conversationsDirectory, 0o700);
  removeAbandonedConversations(conversationsDirectory);
  const pending = scratchName(conversationsDirectory, pendingPrefix);
  let writing = pending;
  try {
    mkdirSync(pending, { mode: 0o700 });
    let milliseconds = Date.now();
    let sequence = Math.floor(Math.random() * 100);
    const timestamp = new Date().toISOString();
    const candidate = (): string => `jp-c${milliseconds}${String(sequence).padStart(3, '0')}`;
    writing = eventsFile(conversationsDirectory, candidate());
    for (let attempt = 0; attempt < 10_000; attempt++) {
      const id = candidate();
      if (attempt === 0) writeNewFile(path.join(pending, 'events.ndjson'), initial.log?.(id) ?? '');
      else if (initial.log) writeFileAtomic(path.join(pending, 'events.ndjson'), initial.log(id));
      const metadata: ConversationMetadata = {
        id,
        title: initial.title ?? null,
        created_at: timestamp,
        updated_at: timestamp,
      };
      if (initial.forkedFrom) metadata.forked_from = initial.forkedFrom;
      writing = metadataFile(conversationsDirectory, id);
      writeFileAtomic(path.join(pending, 'metadata.json'), JSON.stringify(metadata, null, 2) + '\n');
      try {
        renameSync(pending, conversationDirectory(conversationsDirectory, id));
        return metadata;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      }
      sequence++;
      if (sequence > 999) {
        sequence = 0;
        milliseconds++;
      }
    }
    throw new UsageError(
      'conversation_id_exhausted',
      `could not allocate a conversation id in ${conversationsDirectory}`,
    );
  } catch (error) {
    rmSync(pending, { recursive: true, force: true });
    throw JpError.isInstance(error) ? error : asDiskFull(error, writing);
  }
}

/** Creates `file` (it must not exist) with `content`, mode 0600, synced when not empty. */
function writeNewFile(file: string, content: string): void {
  const fd = openRegularFile(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)!;
  try {
    if (content !== '') {
      writeAll(fd, Buffer.from(content, 'utf8'));
      fsyncSync(fd);
    }
  } finally {
    closeSync(fd);
  }
}

/** Removes directories of creations and removals whose process died half way. */
function removeAbandonedConversations(conversationsDirectory: string): void {
  let names: string[];
  try {
    names = readdirSync(conversationsDirectory);
  } catch {
    return;
  }
  for (const name of names) {
    const prefix = [pendingPrefix, removedPrefix].find((candidate) => name.startsWith(candidate));
    if (!prefix) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || processExists(pid)) continue;
    rmSync(path.join(conversationsDirectory, name), { recursive: true, force: true });
  }
}

export function writeMetadata(conversationsDirectory: string, metadata: ConversationMetadata): void {
  writeFileAtomic(metadataFile(conversationsDirectory, metadata.id), JSON.stringify(metadata, null, 2) + '\n');
}

export interface StoredMetadata {
  metadata: ConversationMetadata;
  /** What is wrong with metadata.json when it is damaged (then `metadata` was rebuilt from the log). */
  damage: string | undefined;
}

/** Reads metadata; a missing or damaged file is rebuilt (in memory) from its bytes and the log. */
export function loadMetadata(conversationsDirectory: string, id: string): StoredMetadata {
  const file = metadataFile(conversationsDirectory, id);
  let content: Buffer | undefined;
  let damage: string | undefined;
  try {
    content = readRegularFile(file);
  } catch (error) {
    damage = error instanceof DamagedFileError ? error.problem : (error as Error).message;
  }
  if (content !== undefined) {
    try {
      const parsed = JSON.parse(content.toString('utf8')) as ConversationMetadata;
      if (isMetadataOf(parsed, id)) return { metadata: parsed, damage: undefined };
      damage = `does not describe ${id}`;
    } catch {
      damage = 'is not valid JSON';
    }
  }
  return { metadata: rebuildMetadata(conversationsDirectory, id, content), damage };
}

function isMetadataOf(value: unknown, id: string): value is ConversationMetadata {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    record.id === id &&
    (record.title === null || typeof record.title === 'string') &&
    typeof record.created_at === 'string' &&
    typeof record.updated_at === 'string'
  );
}

/** Metadata from what survives: a title still readable in the damaged bytes, else the log's first message. */
function rebuildMetadata(
  conversationsDirectory: string,
  id: string,
  damagedBytes: Buffer | undefined,
): ConversationMetadata {
  const created = idTimestamp(id);
  let updated = created;
  let title = damagedBytes ? salvageTitle(damagedBytes.toString('utf8')) : undefined;
  const log = eventsFile(conversationsDirectory, id);
  try {
    const stat = statSync(log);
    if (stat.isFile()) updated = stat.mtime.toISOString();
    if (title === undefined) {
      const first = readEventLog(log).events.find((event) => event.type === 'chat_request');
      if (first) title = titleFrom(first.content);
    }
  } catch {
    // no log yet, or a damaged one: the listing says so
  }
  return { id, title: title ?? null, created_at: created, updated_at: updated };
}

function salvageTitle(text: string): string | undefined {
  const match = /"title"\s*:\s*("(?:[^"\\\n]|\\.)*")/.exec(text);
  if (!match) return undefined;
  try {
    return JSON.parse(match[1]!) as string;
  } catch {
    return undefined;
  }
}

/** Reads metadata for display; see loadMetadata. */
export function readMetadata(conversationsDirectory: string, id: string): ConversationMetadata {
  return loadMetadata(conversationsDirectory, id).metadata;
}

/**
 * Changes and writes the metadata. A damaged metadata.json is first moved aside (returned), never
 * overwritten: the new one is rebuilt from what survives.
 */
export function updateMetadata(
  conversationsDirectory: string,
  id: string,
  change: (metadata: ConversationMetadata) => void,
): { damage: string; keptAt: string } | undefined {
  const stored = loadMetadata(conversationsDirectory, id);
  let kept: { damage: string; keptAt: string } | undefined;
  if (stored.damage !== undefined) {
    const file = metadataFile(conversationsDirectory, id);
    const keptAt = `${file}.damaged-${Date.now()}`;
    try {
      renameSync(file, keptAt);
      kept = { damage: stored.damage, keptAt };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  change(stored.metadata);
  writeMetadata(conversationsDirectory, stored.metadata);
  return kept;
}

function idTimestamp(id: string): string {
  const milliseconds = Number(id.slice(4, 17));
  return Number.isFinite(milliseconds) ? new Date(milliseconds).toISOString() : new Date(0).toISOString();
}

/** Whether there is an entry by that id (a directory, or something damaged in its place). */
export function conversationExists(conversationsDirectory: string, id: string): boolean {
  try {
    lstatSync(conversationDirectory(conversationsDirectory, id));
    return true;
  } catch {
    return false;
  }
}

/** Throws DamagedFileError when the conversation's entry is not a real directory (a symlink, a file). */
export function assertConversationDirectory(conversationsDirectory: string, id: string): void {
  const directory = conversationDirectory(conversationsDirectory, id);
  const stat = lstatSync(directory);
  if (!stat.isDirectory())
    throw new DamagedFileError(directory, `is ${describeFileType(stat)}, not a conversation directory`);
}

/** Every conversation id of the workspace, oldest first. */
export function listConversationIds(conversationsDirectory: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(conversationsDirectory);
  } catch {
    return [];
  }
  return entries.filter((name) => conversationIdPattern.test(name)).sort();
}

/** Removes a conversation at once: it is renamed out of the listing first, then deleted. */
export function removeConversation(conversationsDirectory: string, id: string): void {
  const removed = scratchName(conversationsDirectory, removedPrefix);
  try {
    renameSync(conversationDirectory(conversationsDirectory, id), removed);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  rmSync(removed, { recursive: true, force: true });
}

/** Title from the first message: its first line, at most 60 characters. */
export function titleFrom(message: string): string {
  const firstLine = message.trim().split('\n')[0] ?? '';
  return firstLine.length > 60 ? firstLine.slice(0, 59) + '…' : firstLine;
}

/** The end of a log as read from its last bytes: no events, the last complete event, or unknown (read it all). */
export type LogTail = { kind: 'empty' } | { kind: 'event'; event: ConversationEvent } | { kind: 'unknown' };

/** A final turn_end is short: a last line that does not fit here is not one. */
const tailWindowBytes = 16 * 1024;

/**
 * The last complete line of a log, read from its end only: enough for `ls` to tell an idle
 * conversation (last event is a final turn_end) from one that needs a full read. A last line longer
 * than the window, or one that does not parse, is `unknown`. Damage throws DamagedFileError.
 */
export function lastCompleteEvent(file: string): LogTail {
  const fd = openRegularFile(file, constants.O_RDONLY);
  if (fd === undefined) return { kind: 'empty' };
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return { kind: 'empty' };
    const length = Math.min(size, tailWindowBytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const end = buffer.lastIndexOf(10);
    if (end === -1) return { kind: 'unknown' };
    const previous = end === 0 ? -1 : buffer.lastIndexOf(10, end - 1);
    if (previous === -1 && length < size) return { kind: 'unknown' };
    try {
      return {
        kind: 'event',
        event: JSON.parse(buffer.subarray(previous + 1, end).toString('utf8')) as ConversationEvent,
      };
    } catch {
      return { kind: 'unknown' };
    }
  } finally {
    closeSync(fd);
  }
}
