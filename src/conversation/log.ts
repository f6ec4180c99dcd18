/**
 * The single writer of a conversation's event log (DESIGN §6). Only the process holding the
 * conversation lock opens one. Every append is one write() of one complete line; fsync happens at
 * turn boundaries, before a defer exit and before exit on signals (callers call sync()).
 */
import { closeSync, constants, fsyncSync, ftruncateSync, readFileSync } from 'node:fs';
import { asDiskFull, RunError } from '../errors.ts';
import { openRegularFile, writeAll, writeFileAtomic } from '../workspace/files.ts';
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

export class ConversationLog {
  readonly file: string;
  private fd: number | undefined;
  private count: number;
  /** Bytes of complete events in the file: a failed append is cut back to this. */
  private size: number;

  private constructor(file: string, fd: number, count: number, size: number) {
    this.file = file;
    this.fd = fd;
    this.count = count;
    this.size = size;
  }

  /**
   * Opens (creating if needed) the log for appending, after repairing a torn tail: the partial line
   * is copied to `<file>.torn-<timestamp>` and cut, so the next append cannot be spliced onto it.
   * A tail that is a complete event missing only its newline is kept. The file is opened once,
   * without following a symlink: anything but a regular file is damage (DamagedFileError) and is
   * never written to; neither is a file that cannot be read.
   */
  static open(file: string): OpenedLog {
    const fd = openRegularFile(file, constants.O_RDWR | constants.O_CREAT | constants.O_APPEND, 0o600)!;
    try {
      let content: Buffer;
      try {
        content = readFileSync(fd);
      } catch (error) {
        throw new RunError('log_unreadable', `cannot read conversation log ${file}: ${(error as Error).message}`, {
          hint: 'The file was left untouched. Fix its permissions or move it away, then run again.',
          cause: error,
        });
      }
      const parsed = parseEventLog(content);
      let tornTailSavedTo: string | undefined;
      let size = content.length;
      if (parsed.tornTail) {
        if (parsed.tornTail.parsesAsEvent) {
          try {
            writeAll(fd, Buffer.from('\n'));
          } catch (error) {
            ftruncateSync(fd, content.length);
            throw asDiskFull(error, file);
          }
          size += 1;
          parsed.events = parseEventLog(Buffer.concat([content, Buffer.from('\n')])).events;
        } else {
          tornTailSavedTo = `${file}.torn-${Date.now()}`;
          writeFileAtomic(tornTailSavedTo, content.subarray(parsed.tornTail.offset));
          ftruncateSync(fd, parsed.completeBytes);
          size = parsed.completeBytes;
        }
        fsyncSync(fd);
      }
      return {
        log: new ConversationLog(file, fd, parsed.events.length, size),
        events: parsed.events,
        skipped: parsed.skipped,
        tornTailSavedTo,
      };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** Number of valid events in the log, including the ones appended by this writer. */
  get eventCount(): number {
    return this.count;
  }

  /** Appends one event as one write of one line. Returns its 0-based index among valid events. */
  append(event: ConversationEvent): number {
    if (this.fd === undefined) throw new RunError('log_closed', `conversation log ${this.file} is closed`);
    // Events arrive redacted: secrets are redacted where an event is made (src/redact.ts).
    const line = JSON.stringify(event) + '\n';
    const bytes = Buffer.from(line, 'utf8');
    try {
      writeAll(this.fd, bytes);
    } catch (error) {
      // A partial line (a full disk) is cut off, so the log ends with the last complete event.
      try {
        ftruncateSync(this.fd, this.size);
      } catch {
        // the next open moves a torn tail aside
      }
      throw asDiskFull(error, this.file);
    }
    this.size += bytes.length;
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
