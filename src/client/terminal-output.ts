/**
 * The one owner of what this client shows at a terminal (DESIGN §13). Everything the client writes
 * goes through it: the answer (stdout), chrome (stderr), a transient live region on stderr (the
 * status line: a spinner, what the run is doing, the elapsed time, the tokens, the key to
 * interrupt; above it, a running command's last lines), and prompts and menus (on /dev/tty,
 * through `exclusive`). Contracts:
 * - While a prompt or menu is open, nothing else draws on the terminal: writes to a stream that is a
 *   terminal are held, in order, and released when it closes. A stream that is not a terminal (a
 *   pipe, a file) is written at once.
 * - A prompt starts on a line of its own, never after the live region or an unfinished line of text.
 * - The live region is the only thing ever redrawn, and it is erased before anything else is
 *   written to the terminal. It is drawn only when stderr is a terminal that obeys escape sequences
 *   (`liveRegion`), nothing is held, and the terminal has been quiet for a moment (text streaming
 *   in is never interleaved with it); below an unfinished line of text it takes the rows under it
 *   and gives the cursor back to the end of that line when it is erased. Each of its rows fits the
 *   width (it never wraps), and a row of text wider than the terminal keeps it away until a new line.
 */
import stringWidth from 'string-width';
import wrapAnsi from 'wrap-ansi';
import type { SafeWriter } from '../output/channels.ts';
import { cutToWidth } from './chrome-text.ts';
import type { ThemeName } from './theme.ts';

export interface TerminalOutputOptions {
  stdout: SafeWriter;
  stderr: SafeWriter;
  /** Show the live region (stderr is a terminal in the foreground that obeys escape sequences, not quiet). */
  statusLine: boolean;
  /** Colour in chrome (the status line's spinner). */
  color: boolean;
  /** The spinner's colour when `color` (the theme's; none unless given). */
  spinnerStyle?: string;
  /** The colours' theme this client chose (its prompts draw in it too); unset when it draws no colour. */
  theme?: ThemeName;
}

export interface Status {
  text: string;
  /** When set, the elapsed time since then is shown after the text. */
  since?: number;
  /** Shown after the elapsed time, in order (tokens so far). */
  details?: string[];
  /** Shown last: how to interrupt. */
  hint?: string;
}

type Stream = 'stdout' | 'stderr';

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const frameMilliseconds = 80;
/** How long the terminal stays quiet before the live region is drawn again after a write. */
const quietMilliseconds = 300;

export class TerminalOutput {
  private readonly options: TerminalOutputOptions;
  /** Whether the terminal's cursor is at the start of a line (as far as this process wrote to it). */
  private atLineStart = true;
  /** The cells written on the cursor's line since its start (Infinity once it is wider than the terminal). */
  private column = 0;
  /** Writes to the terminal held while a prompt is open, in order. */
  private held: { stream: Stream; text: string }[] | undefined;
  /** Prompts wait for one another: one at a time. */
  private exclusiveChain: Promise<unknown> = Promise.resolve();
  private status: Status | undefined;
  /** Rows shown above the status line (a running command's last lines), already made safe to draw. */
  private window: string[] = [];
  /**
   * What is on the screen of the live region: its rows, and whether it hangs below an unfinished line (at `column`).
   */
  private drawn: { rows: string[]; belowLine: boolean } | undefined;
  private lastWrite = 0;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: TerminalOutputOptions) {
    this.options = options;
  }

  private writer(stream: Stream): SafeWriter {
    return stream === 'stdout' ? this.options.stdout : this.options.stderr;
  }

  /** Whether `stream` shows on the terminal (and so must wait while a prompt is open). */
  isTerminal(stream: Stream): boolean {
    return this.writer(stream).isTerminal;
  }

  /** Whether this client draws a live region (a status line) at all. */
  get liveRegion(): boolean {
    return this.options.statusLine;
  }

  /** The colours' theme this client chose, if it chose one. */
  get theme(): ThemeName | undefined {
    return this.options.theme;
  }

  /** Terminal width of stderr, where chrome goes (80 when it is not a terminal). */
  get chromeColumns(): number {
    return this.options.stderr.columns;
  }

  /** Terminal width of stdout (80 when it is not a terminal). */
  get columns(): number {
    return this.options.stdout.columns;
  }

  /** Whether the last thing written to `stream` ended a line (or nothing was written). */
  streamAtLineStart(stream: Stream): boolean {
    if (this.held) {
      for (let index = this.held.length - 1; index >= 0; index--)
        if (this.held[index]!.stream === stream) return this.held[index]!.text.endsWith('\n');
    }
    return this.writer(stream).atLineStart;
  }

  /** Whether anything was ever written to `stream`. */
  wroteAnything(stream: Stream): boolean {
    return this.writer(stream).wroteAnything || (this.held?.some((entry) => entry.stream === stream) ?? false);
  }

  write(stream: Stream, text: string): void {
    if (text === '') return;
    if (!this.isTerminal(stream)) {
      this.writer(stream).write(text);
      return;
    }
    if (this.held) {
      this.held.push({ stream, text });
      return;
    }
    this.erase();
    this.writer(stream).write(text);
    this.wrote(text);
  }

  /** Keeps track of where the cursor is after `text` was written to the terminal. */
  private wrote(text: string): void {
    this.atLineStart = text.endsWith('\n');
    const lineStart = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
    this.column = (lineStart === -1 ? this.column : 0) + stringWidth(text.slice(lineStart + 1));
    this.lastWrite = Date.now();
  }

  /**
   * Sets (or clears, with undefined) the status line. It shows whenever the terminal is free, and
   * animates until it is cleared; clearing it also clears the window above it.
   */
  setStatus(status: Status | undefined): void {
    if (!this.options.statusLine) return;
    this.status = status;
    if (!status) {
      this.window = [];
      this.erase();
      this.stopTimer();
      return;
    }
    this.startTimer();
    if (this.drawn || Date.now() - this.lastWrite >= quietMilliseconds) this.draw();
  }

  /** Sets the rows shown above the status line (each made safe to draw); [] for none. */
  setWindow(rows: readonly string[]): void {
    if (!this.options.statusLine) return;
    this.window = [...rows];
    if (this.drawn) this.draw();
  }

  private startTimer(): void {
    this.timer ??= setInterval(() => {
      this.frame++;
      if (this.drawn || Date.now() - this.lastWrite >= quietMilliseconds) this.draw();
    }, frameMilliseconds).unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The rows of the live region as they are drawn now, each narrower than the terminal. */
  private rows(): string[] {
    const status = this.status!;
    const width = Math.max(10, this.options.stderr.columns - 1);
    const details = [
      status.since === undefined ? undefined : formatElapsed(Date.now() - status.since),
      ...(status.details ?? []),
      status.hint,
    ].filter(Boolean);
    const frame = frames[this.frame % frames.length]!;
    const spinner =
      this.options.color && this.options.spinnerStyle ? `${this.options.spinnerStyle}${frame}\u001b[39m` : frame;
    const text = `${status.text}${details.length > 0 ? ` (${details.join(' • ')})` : ''}`;
    return [...this.window.map((row) => fitRow(row, width)), `${spinner} ${cutToWidth(text, width - 2)}`];
  }

  /** Draws the live region (again), if the terminal is free for it. */
  private draw(): void {
    if (!this.status || this.held) return;
    const belowLine = !this.atLineStart;
    if (belowLine && this.column >= this.options.stderr.columns) {
      this.erase();
      return;
    }
    const rows = this.rows();
    const drawn = this.drawn;
    if (drawn && drawn.belowLine === belowLine && drawn.rows.length === rows.length) {
      // The same shape: only the rows that changed are written again (the spinner's, at least).
      let output = '';
      let cursor = rows.length - 1;
      for (let index = 0; index < rows.length; index++) {
        if (rows[index] === drawn.rows[index]) continue;
        output += `${moveRows(index - cursor)}\r${rows[index]}\u001b[K`;
        cursor = index;
      }
      if (output === '') return;
      this.options.stderr.write(output + moveRows(rows.length - 1 - cursor));
      this.drawn = { rows, belowLine };
      return;
    }
    this.erase();
    this.options.stderr.write(`${belowLine ? '\n' : '\r'}${rows.join('\u001b[K\n')}\u001b[K`);
    this.drawn = { rows, belowLine };
  }

  /** Erases the live region, if drawn; the cursor is back where the text left it. */
  private erase(): void {
    const drawn = this.drawn;
    if (!drawn) return;
    this.drawn = undefined;
    const up = drawn.rows.length - 1;
    this.options.stderr.write(
      `\r${moveRows(-up)}\u001b[J${drawn.belowLine ? `\u001b[A\u001b[${this.column + 1}G` : ''}`,
    );
  }

  /**
   * Runs `body` (a prompt or a menu on /dev/tty) as the terminal's only owner: one at a time, on a
   * line of its own, with every other write held until it is done.
   */
  exclusive<T>(body: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.erase();
      this.held ??= [];
      if (!this.atLineStart) {
        const stream: Stream = this.options.stdout.isTerminal && !this.options.stdout.atLineStart ? 'stdout' : 'stderr';
        this.writer(stream).write('\n');
        this.atLineStart = true;
        this.column = 0;
      }
      await Promise.all([this.options.stdout.flush(), this.options.stderr.flush()]);
      try {
        return await body();
      } finally {
        this.release();
      }
    };
    const result = this.exclusiveChain.then(run, run);
    this.exclusiveChain = result.catch(() => undefined);
    return result;
  }

  private release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    // A prompt ends on a line of its own.
    this.atLineStart = true;
    this.column = 0;
    this.lastWrite = Date.now();
    for (const entry of held) {
      this.writer(entry.stream).write(entry.text);
      this.wrote(entry.text);
    }
  }

  /** Resolves when no prompt or menu is open or waiting (their held output is released). */
  idle(): Promise<void> {
    return this.exclusiveChain.then(() => undefined);
  }

  /**
   * Waits for open prompts to close, clears the status line, and waits until everything written is handed to the OS.
   */
  async flush(): Promise<void> {
    await this.idle();
    this.setStatus(undefined);
    await Promise.all([this.options.stdout.flush(), this.options.stderr.flush()]);
  }
}

/** A row (perhaps coloured) cut to `width` cells, so that it never wraps. */
function fitRow(row: string, width: number): string {
  if (stringWidth(row) <= width) return row;
  return wrapAnsi(row, width, { hard: true, wordWrap: false, trim: false }).split('\n')[0]!;
}

/** The cursor `count` rows down (up when negative), in its column. */
function moveRows(count: number): string {
  if (count === 0) return '';
  return count > 0 ? `\u001b[${count}B` : `\u001b[${-count}A`;
}

function formatElapsed(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}
