/**
 * The output channels (DESIGN §5): stdout carries only assistant output or structured data, stderr
 * carries chrome, `/dev/tty` carries prompts (opened lazily, never stdin/stdout), the log file
 * carries tracing (logger.ts). Formats: text, text-pretty (ANSI, rendered markdown), json (NDJSON on
 * both stdout and stderr).
 */
import { closeSync, openSync } from 'node:fs';
import tty from 'node:tty';

export type OutputFormat = 'text' | 'text-pretty' | 'json';
export type RequestedFormat = OutputFormat | 'auto';

/** `auto` is text-pretty when stdout is a terminal, else text. */
export function resolveFormat(requested: RequestedFormat, stdoutIsTerminal: boolean): OutputFormat {
  if (requested !== 'auto') return requested;
  return stdoutIsTerminal ? 'text-pretty' : 'text';
}

/** NO_COLOR wins, then FORCE_COLOR, then TERM=dumb (no colour), then whether the stream is a terminal. */
export function colorEnabled(environment: NodeJS.ProcessEnv, isTerminal: boolean): boolean {
  if (environment.NO_COLOR !== undefined && environment.NO_COLOR !== '') return false;
  const force = environment.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (isDumbTerminal(environment)) return false;
  return isTerminal;
}

/** TERM=dumb: a terminal that obeys no escape sequence (no colour, no cursor movement, no spinner). */
export function isDumbTerminal(environment: NodeJS.ProcessEnv): boolean {
  return environment.TERM === 'dumb';
}

/**
 * Text written in one event-loop turn leaves in one write per stream (streamed tokens arrive in
 * bursts), in the order it was written across stdout and stderr, so chrome stays where it belongs
 * between answer text on a shared terminal.
 */
const queue: { writer: SafeWriter; text: string }[] = [];

function enqueue(writer: SafeWriter, text: string): void {
  if (queue.length === 0) process.nextTick(drainQueue);
  const last = queue[queue.length - 1];
  if (last && last.writer === writer) last.text += text;
  else queue.push({ writer, text });
}

function drainQueue(): void {
  for (const entry of queue.splice(0)) entry.writer.emit(entry.text);
}

/**
 * A writer that never throws on a closed reader: EPIPE (e.g. `jp query | head -1`) is reported once
 * through `onClosed`, and later writes are dropped.
 */
export class SafeWriter {
  private readonly stream: NodeJS.WriteStream;
  private closedReported = false;
  private closed = false;
  onClosed: () => void = () => {};
  /** Whether the last byte written was a newline (or nothing was written). */
  atLineStart = true;
  wroteAnything = false;

  private static readonly ofStream = new WeakMap<NodeJS.WriteStream, SafeWriter>();

  /** The process's one writer of `stream` (process.stdout, process.stderr): every context shares it. */
  static of(stream: NodeJS.WriteStream): SafeWriter {
    let writer = SafeWriter.ofStream.get(stream);
    if (!writer) SafeWriter.ofStream.set(stream, (writer = new SafeWriter(stream)));
    return writer;
  }

  constructor(stream: NodeJS.WriteStream) {
    this.stream = stream;
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') this.markClosed();
    });
  }

  get isTerminal(): boolean {
    return this.stream.isTTY === true;
  }

  get columns(): number {
    return this.stream.columns || 80;
  }

  write(text: string): void {
    if (this.closed || text === '') return;
    this.wroteAnything = true;
    this.atLineStart = text.endsWith('\n');
    enqueue(this, text);
  }

  /** Hands `text` to the stream now (called by the shared queue, in write order). */
  emit(text: string): void {
    if (this.closed) return;
    try {
      this.stream.write(text);
    } catch {
      this.markClosed();
    }
  }

  private markClosed(): void {
    this.closed = true;
    if (this.closedReported) return;
    this.closedReported = true;
    this.onClosed();
  }

  /** Resolves once everything written so far has been handed to the OS. */
  flush(): Promise<void> {
    drainQueue();
    return new Promise((resolve) => {
      if (this.closed || this.stream.writableLength === 0) return resolve();
      this.stream.write('', () => resolve());
    });
  }
}

export interface TerminalStreams {
  input: tty.ReadStream;
  output: tty.WriteStream;
  close(): void;
}

/** Whether this process has a controlling terminal it can prompt on; opens and closes /dev/tty. */
export function controllingTerminalAvailable(): boolean {
  try {
    closeSync(openSync('/dev/tty', 'r+'));
    return true;
  } catch {
    return false;
  }
}

/** Opens the controlling terminal for a prompt, or undefined when there is none. */
export function openControllingTerminal(): TerminalStreams | undefined {
  let inputFd: number;
  let outputFd: number;
  try {
    inputFd = openSync('/dev/tty', 'r');
  } catch {
    return undefined;
  }
  try {
    outputFd = openSync('/dev/tty', 'w');
  } catch {
    closeSync(inputFd);
    return undefined;
  }
  const input = new tty.ReadStream(inputFd);
  const output = new tty.WriteStream(outputFd);
  return {
    input,
    output,
    close() {
      input.setRawMode?.(false);
      input.destroy();
      output.destroy();
    },
  };
}
