/**
 * NDJSON framing: one JSON value per line. This module imports nothing from the project.
 *
 * The line cap protects a server from what its clients send: a client's line is at most
 * MAX_LINE_BYTES (newline excluded). What a server sends is exempt (SERVER_LINE_BYTES): an event
 * carries whatever the conversation holds, e.g. tens of MB of piped input, and a client trusts the
 * server it started or attached to.
 */

export const MAX_LINE_BYTES = 1024 * 1024;

/** No cap on the lines a client reads from its server. */
export const SERVER_LINE_BYTES = Number.POSITIVE_INFINITY;

export function encodeLine(message: unknown): string {
  return JSON.stringify(message) + '\n';
}

export type DecodeResult = { kind: 'message'; value: unknown } | { kind: 'malformed'; reason: string; excerpt: string };

/**
 * Splits a byte stream into lines and parses each one. A line longer than the cap is reported once
 * through `onOverflow` and the decoder refuses further input: the caller must close the connection.
 */
export class LineDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private overflowed = false;
  private readonly maxLineBytes: number;

  constructor(maxLineBytes = MAX_LINE_BYTES) {
    this.maxLineBytes = maxLineBytes;
  }

  get hasOverflowed(): boolean {
    return this.overflowed;
  }

  /** Bytes received after the last newline; non-zero at close means a half frame. */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  /** Returns the complete lines in `chunk`, or 'overflow' once a line exceeds the cap. */
  push(chunk: Buffer): DecodeResult[] | 'overflow' {
    if (this.overflowed) return 'overflow';
    const results: DecodeResult[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      if (newline === -1) break;
      const piece = chunk.subarray(start, newline);
      if (this.pendingBytes + piece.length > this.maxLineBytes) return this.overflow();
      const line = this.pendingBytes === 0 ? piece : Buffer.concat([...this.pending, piece]);
      this.pending = [];
      this.pendingBytes = 0;
      start = newline + 1;
      if (line.length === 0 || (line.length === 1 && line[0] === 13)) continue;
      results.push(parseLine(line));
    }
    const rest = chunk.subarray(start);
    if (rest.length > 0) {
      if (this.pendingBytes + rest.length > this.maxLineBytes) return this.overflow();
      this.pending.push(Buffer.from(rest));
      this.pendingBytes += rest.length;
    }
    return results;
  }

  private overflow(): 'overflow' {
    this.overflowed = true;
    this.pending = [];
    this.pendingBytes = 0;
    return 'overflow';
  }
}

function parseLine(line: Buffer): DecodeResult {
  const text = line.toString('utf8');
  try {
    return { kind: 'message', value: JSON.parse(text) };
  } catch (error) {
    return {
      kind: 'malformed',
      reason: error instanceof Error ? error.message : 'invalid JSON',
      excerpt: text.length > 80 ? text.slice(0, 80) + '…' : text,
    };
  }
}
