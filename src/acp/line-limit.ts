/**
 * What `jp acp` reads of its stdin (DESIGN §14): the editor's NDJSON lines, less any line over the
 * size jp reads in one message. Such a line is never buffered whole nor handed to the SDK (whose own
 * limit would end the connection, and with it every session): it is dropped, answered with a
 * JSON-RPC error (-32600, for the request's id when the line starts with it), and reading goes on.
 */
import type { Readable } from 'node:stream';

/** The largest message read: room for a prompt's embedded files and images. */
export const maxAcpMessageBytes = 32 * 1024 * 1024;

/** How much of an oversized line is kept to find its id. */
const headBytes = 4096;

/** The id of a JSON-RPC request whose text starts as `{"jsonrpc":"2.0","id":…` or `{"id":…`; null otherwise. */
export function leadingId(head: string): number | string | null {
  const match =
    /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")\s*[,}]/.exec(head);
  if (!match) return null;
  try {
    return JSON.parse(match[1]!) as number | string;
  } catch {
    return null;
  }
}

/** The error an oversized line is answered with, as one JSON-RPC line. */
export function oversizedReply(id: number | string | null, bytes: number, maxBytes: number): string {
  return `${JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32600,
      message:
        `Invalid Request: this message is ${bytes} bytes, over the ${maxBytes} bytes ` +
        `(${maxBytes / 1024 / 1024} MiB) jp acp reads in one message; it was not read. Send less in one message ` +
        `(attach large files by path).`,
    },
  })}\n`;
}

/**
 * `input` as a web stream of whole lines of at most `maxBytes` (each with its newline). An oversized
 * line is skipped as it arrives and reported once it ends: `oversized(id, bytes)`.
 */
export function limitLines(
  input: Readable,
  maxBytes: number,
  oversized: (id: number | string | null, bytes: number) => void,
): ReadableStream<Uint8Array> {
  let line: Buffer[] = [];
  let lineBytes = 0;
  let head: Buffer | undefined;
  const iterator = input[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = (await iterator.next()) as IteratorResult<Buffer>;
        if (next.done) {
          if (head !== undefined) oversized(leadingId(head.toString('utf8')), lineBytes);
          else if (lineBytes > 0) controller.enqueue(Buffer.concat(line));
          controller.close();
          return;
        }
        const out: Buffer[] = [];
        let chunk = next.value;
        for (let newline = chunk.indexOf(10); newline !== -1 || chunk.length > 0; newline = chunk.indexOf(10)) {
          const piece = newline === -1 ? chunk : chunk.subarray(0, newline + 1);
          chunk = newline === -1 ? Buffer.alloc(0) : chunk.subarray(newline + 1);
          lineBytes += piece.length - (newline === -1 ? 0 : 1);
          if (head === undefined && lineBytes > maxBytes) {
            head = Buffer.from(Buffer.concat([...line, piece]).subarray(0, headBytes));
            line = [];
          }
          if (head === undefined) line.push(piece);
          if (newline === -1) break;
          if (head !== undefined) oversized(leadingId(head.toString('utf8')), lineBytes);
          else out.push(...line);
          line = [];
          lineBytes = 0;
          head = undefined;
        }
        if (out.length > 0) {
          controller.enqueue(Buffer.concat(out));
          return;
        }
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
