/**
 * Reading an event log. Damage never stops the reader: a bad line anywhere but the end is skipped
 * and counted; a last line with no newline is a torn tail (an interrupted write) and is reported,
 * not returned as an event. Reading never needs the conversation lock.
 */
import { readRegularFile } from '../workspace/files.ts';
import { isConversationEvent, type ConversationEvent } from './events.ts';

export interface ParsedLog {
  events: ConversationEvent[];
  /** Complete lines that were not valid events, skipped. */
  skipped: number;
  /** 1-based line numbers of the skipped lines (first 20), for messages. */
  skippedLines: number[];
  /** Byte offset where a torn tail starts, and its length; undefined when the file ends with a newline. */
  tornTail: { offset: number; length: number; parsesAsEvent: boolean } | undefined;
  /** Byte length of the valid prefix (everything up to the last newline). */
  completeBytes: number;
}

export function parseEventLog(content: Buffer): ParsedLog {
  const events: ConversationEvent[] = [];
  const skippedLines: number[] = [];
  let skipped = 0;
  let start = 0;
  let lineNumber = 0;
  for (;;) {
    const newline = content.indexOf(10, start);
    if (newline === -1) break;
    lineNumber++;
    const line = content.subarray(start, newline);
    start = newline + 1;
    if (line.length === 0) continue;
    const event = parseEventLine(line);
    if (event) events.push(event);
    else {
      skipped++;
      if (skippedLines.length < 20) skippedLines.push(lineNumber);
    }
  }
  const tornTail =
    start < content.length
      ? {
          offset: start,
          length: content.length - start,
          parsesAsEvent: parseEventLine(content.subarray(start)) !== undefined,
        }
      : undefined;
  return { events, skipped, skippedLines, tornTail, completeBytes: start };
}

function parseEventLine(line: Buffer): ConversationEvent | undefined {
  try {
    const value: unknown = JSON.parse(line.toString('utf8'));
    return isConversationEvent(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a log from disk; a missing file is an empty log. A log that is not a regular file (a
 * symlink, a directory, a FIFO) throws DamagedFileError without blocking; so do read errors.
 */
export function readEventLog(file: string): ParsedLog {
  return parseEventLog(readRegularFile(file) ?? Buffer.alloc(0));
}
