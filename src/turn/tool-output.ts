/**
 * Live output of one tool call on its way to the clients (TurnHost.toolOutput), for a person to see
 * while it runs; the call's result, made when it ends, holds all of it. Contracts:
 * - Only whole lines are sent (a line ends at `\n` or `\r`); the unfinished rest waits for its end
 *   or for the call's. Each line is redacted by the run's secrets before it leaves, and a secret
 *   never spans two sends.
 * - A line longer than `longLine` characters is sent as its first characters only (redacted whole
 *   first), and the rest of it is dropped.
 * - Lines go out together at most every `intervalMilliseconds`, at most `maxLines` at a time per
 *   stream: earlier ones of a burst are counted in `omitted` (a client shows the last few anyway).
 */
import type { Secrets } from '../redact.ts';
import type { ToolOutputPiece } from './host.ts';

type Stream = 'stdout' | 'stderr';

const longLine = 64 * 1024;
const shownOfLongLine = 1000;

interface Pending {
  /** The unfinished line. */
  partial: string;
  /** The rest of an overlong line is being dropped until its end. */
  dropping: boolean;
  lines: string[];
  omitted: number;
}

export class ToolOutputRelay {
  private readonly streams: Record<Stream, Pending> = {
    stdout: { partial: '', dropping: false, lines: [], omitted: 0 },
    stderr: { partial: '', dropping: false, lines: [], omitted: 0 },
  };
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly id: string,
    private readonly send: (piece: ToolOutputPiece) => void,
    private readonly secrets: Secrets,
    private readonly options: { intervalMilliseconds: number; maxLines: number } = {
      intervalMilliseconds: 100,
      maxLines: 50,
    },
  ) {}

  /** A piece of what the call wrote to `stream` (decoded text, any size). */
  write(stream: Stream, text: string): void {
    if (this.ended || text === '') return;
    const pending = this.streams[stream];
    let start = 0;
    for (;;) {
      const end = nextLineEnd(text, start);
      if (end === -1) break;
      this.line(pending, pending.partial + text.slice(start, end + 1), true);
      pending.partial = '';
      start = end + 1;
    }
    const rest = text.slice(start);
    if (rest !== '') {
      if (pending.dropping) return;
      pending.partial += rest;
      if (pending.partial.length > longLine) {
        this.line(pending, pending.partial, false);
        pending.partial = '';
        pending.dropping = true;
      }
    }
    this.schedule();
  }

  /** The call ended: what waits is sent now (an unfinished last line too), and nothing after. */
  end(): void {
    if (this.ended) return;
    for (const pending of Object.values(this.streams)) {
      if (pending.partial !== '' && !pending.dropping) this.line(pending, `${pending.partial}\n`, true);
      pending.partial = '';
    }
    this.flush();
    this.ended = true;
  }

  private line(pending: Pending, text: string, complete: boolean): void {
    if (pending.dropping) {
      pending.dropping = !complete;
      return;
    }
    const redacted = this.secrets.redact(text);
    pending.lines.push(complete ? redacted : `${redacted.slice(0, shownOfLongLine)}…\n`);
    if (pending.lines.length > this.options.maxLines) {
      pending.lines.shift();
      pending.omitted++;
    }
  }

  private schedule(): void {
    if (this.timer) return;
    if (this.streams.stdout.lines.length === 0 && this.streams.stderr.lines.length === 0) return;
    this.timer = setTimeout(() => this.flush(), this.options.intervalMilliseconds);
    this.timer.unref();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const stream of ['stdout', 'stderr'] as const) {
      const pending = this.streams[stream];
      if (pending.lines.length === 0) continue;
      this.send({
        id: this.id,
        stream,
        text: pending.lines.join(''),
        ...(pending.omitted > 0 ? { omitted: pending.omitted } : {}),
      });
      pending.lines = [];
      pending.omitted = 0;
    }
  }
}

function nextLineEnd(text: string, from: number): number {
  const newline = text.indexOf('\n', from);
  const carriage = text.indexOf('\r', from);
  if (newline === -1) return carriage;
  if (carriage === -1) return newline;
  // `\r\n` ends one line, at its `\n`.
  if (carriage + 1 === newline) return newline;
  return Math.min(newline, carriage);
}
