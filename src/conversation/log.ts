/**
 * The single writer of a conversation's event log (DESIGN §6). Only the process holding the
 * conversation lock opens one. Every append is one write() of one complete line; fsync happens at
 * turn boundaries, before a defer exit and before exit on signals (callers call sync()).
 */
import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync, writeFileSync, constants } from 'node:fs';
import { RunError } from '../errors.ts';
import type { ConversationEvent } from './events.ts';
import { parseEventLog } from './reader.ts';

export interface OpenedLog {
  log: ConversationLog;
  events: ConversationEvent[];
  /** Bad lines skipped in the middle of the file. */
  skipped: number;
  /** Where a torn tail was moved, when one was found. */
  tornTailSavedTo: string | undefined;
}

export type Redactor = (text: string) => string;

export class ConversationLog {
  readonly file: string;
  private fd: number | undefined;
  private readonly redact: Redactor;
  private count: number;

  private constructor(file: string, fd: number, count: number, redact: Redactor) {
    this.file = file;
    this.fd = fd;
    this.count = count;
    this.redact = redact;
  }

  /**
   * Opens (creating if needed) the log for appending, after repairing a torn tail: the partial line
   * is copied to `<file>.torn-<timestamp>` and cut, so the next append cannot be spliced onto it.
   * A tail that is a complete event missing only its newline is kept. A file that cannot be read is
   * never written to.
   */
  static open(file: string, redact: Redactor = (text) => text): OpenedLog {
    let content: Buffer;
    try {
      content = readFileSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') {
        throw new RunError('log_unreadable', `cannot read conversation log ${file}: ${(error as Error).message}`, {
          hint: 'The file was left untouched. Fix its permissions or move it away, then run again.',
          cause: error,
        });
      }
      content = Buffer.alloc(0);
    }
    const parsed = parseEventLog(content);
    let tornTailSavedTo: string | undefined;
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND, 0o600);
    try {
      if (parsed.tornTail) {
        if (parsed.tornTail.parsesAsEvent) {
          writeSync(fd, '\n');
          const repaired = parseEventLog(Buffer.concat([content, Buffer.from('\n')]));
          parsed.events = repaired.events;
        } else {
          tornTailSavedTo = `${file}.torn-${Date.now()}`;
          writeFileSync(tornTailSavedTo, content.subarray(parsed.tornTail.offset), { mode: 0o600 });
          ftruncateSync(fd, parsed.completeBytes);
        }
        fsyncSync(fd);
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return {
      log: new ConversationLog(file, fd, parsed.events.length, redact),
      events: parsed.events,
      skipped: parsed.skipped,
      tornTailSavedTo,
    };
  }

  /** Number of valid events in the log, including the ones appended by this writer. */
  get eventCount(): number {
    return this.count;
  }

  /** Appends one event as one write of one line. Returns its 0-based index among valid events. */
  append(event: ConversationEvent): number {
    if (this.fd === undefined) throw new RunError('log_closed', `conversation log ${this.file} is closed`);
    const line = this.redact(JSON.stringify(event)) + '\n';
    const bytes = Buffer.from(line, 'utf8');
    let written = 0;
    while (written < bytes.length) written += writeSync(this.fd, bytes, written);
    return this.count++;
  }

  sync(): void {
    if (this.fd !== undefined) fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}
