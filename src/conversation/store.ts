/**
 * Conversations on disk: `.jp/conversations/<cid>/{events.ndjson,metadata.json}` (DESIGN §6).
 * Ids look like `jp-c<milliseconds><3 digits>` and sort by creation time. metadata.json is a cache
 * for listing (title, times); the event log stays the truth.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, fstatSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.ts';
import { redact } from '../redact.ts';
import { writeFileAtomic } from '../workspace/files.ts';
import type { ConversationEvent } from './events.ts';

export const conversationIdPattern = /^jp-c\d{16}$/;

export interface ConversationMetadata {
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  /** The conversation this one was forked from. */
  forked_from?: string;
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

/** Creates a new conversation directory with a fresh id; the mkdir is the uniqueness check. */
export function createConversation(conversationsDirectory: string, forkedFrom?: string): ConversationMetadata {
  mkdirSync(conversationsDirectory, { recursive: true, mode: 0o700 });
  let milliseconds = Date.now();
  let sequence = Math.floor(Math.random() * 100);
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const id = `jp-c${milliseconds}${String(sequence).padStart(3, '0')}`;
    try {
      mkdirSync(conversationDirectory(conversationsDirectory, id), { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      sequence++;
      if (sequence > 999) {
        sequence = 0;
        milliseconds++;
      }
      continue;
    }
    const timestamp = new Date().toISOString();
    const metadata: ConversationMetadata = { id, title: null, created_at: timestamp, updated_at: timestamp };
    if (forkedFrom) metadata.forked_from = forkedFrom;
    writeMetadata(conversationsDirectory, metadata);
    return metadata;
  }
  throw new UsageError('conversation_id_exhausted', `could not allocate a conversation id in ${conversationsDirectory}`);
}

export function writeMetadata(conversationsDirectory: string, metadata: ConversationMetadata): void {
  writeFileAtomic(metadataFile(conversationsDirectory, metadata.id), redact(JSON.stringify(metadata, null, 2)) + '\n');
}

/** Reads metadata; a missing or damaged file is rebuilt from what the directory shows. */
export function readMetadata(conversationsDirectory: string, id: string): ConversationMetadata {
  try {
    const parsed = JSON.parse(readFileSync(metadataFile(conversationsDirectory, id), 'utf8')) as ConversationMetadata;
    if (parsed && parsed.id === id) return parsed;
  } catch {
    // fall through to a derived record
  }
  const timestamp = idTimestamp(id);
  let updated = timestamp;
  try {
    updated = statSync(eventsFile(conversationsDirectory, id)).mtime.toISOString();
  } catch {
    // no events yet
  }
  return { id, title: null, created_at: timestamp, updated_at: updated };
}

function idTimestamp(id: string): string {
  const milliseconds = Number(id.slice(4, 17));
  return Number.isFinite(milliseconds) ? new Date(milliseconds).toISOString() : new Date(0).toISOString();
}

export function conversationExists(conversationsDirectory: string, id: string): boolean {
  try {
    return statSync(conversationDirectory(conversationsDirectory, id)).isDirectory();
  } catch {
    return false;
  }
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

export function removeConversation(conversationsDirectory: string, id: string): void {
  rmSync(conversationDirectory(conversationsDirectory, id), { recursive: true, force: true });
}

/** Title from the first message: its first line, at most 60 characters. */
export function titleFrom(message: string): string {
  const firstLine = message.trim().split('\n')[0] ?? '';
  return firstLine.length > 60 ? firstLine.slice(0, 59) + '…' : firstLine;
}

/**
 * The last complete line of a log, read from its end only: enough for `ls` to tell an idle
 * conversation (last event is a final turn_end) from one that needs a full read.
 */
export function lastCompleteEvent(file: string): ConversationEvent | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 16 * 1024);
    if (length === 0) return undefined;
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const end = buffer.lastIndexOf(10);
    if (end === -1) return undefined;
    const start = buffer.lastIndexOf(10, end - 1) + 1;
    if (start === 0 && length < size) return undefined;
    try {
      return JSON.parse(buffer.subarray(start, end).toString('utf8')) as ConversationEvent;
    } catch {
      return undefined;
    }
  } finally {
    closeSync(fd);
  }
}
