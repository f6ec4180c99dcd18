/**
 * The one owner of what this client shows at a terminal (DESIGN §13). Everything the client writes
 * goes through it: the answer (stdout), chrome (stderr), a transient status line (a spinner with
 * "thinking" or the running tool and its elapsed time), and prompts and menus (on /dev/tty, through
 * `exclusive`). Contracts:
 * - While a prompt or menu is open, nothing else draws on the terminal: writes to a stream that is a
 *   terminal are held, in order, and released when it closes. A stream that is not a terminal (a
 *   pipe, a file) is written at once.
 * - A prompt starts on a line of its own, never after a status line or an unfinished line of text.
 * - The status line is the only thing ever redrawn. It is drawn on stderr only when stderr is a
 *   terminal, the cursor is at the start of a line and nothing is held, it never takes more than one
 *   row, and it is erased before anything else is written to the terminal.
 */
import type { SafeWriter } from '../output/channels.ts';
import type { ThemeName } from './theme.ts';

export interface TerminalOutputOptions {
  stdout: SafeWriter;
  stderr: SafeWriter;
  /** Show the status line (stderr is a terminal in the foreground, not quiet). */
  statusLine: boolean;
  /** Colour in chrome (the status line's spinner). */
  color: boolean;
  /** The spinner's colour when `color` (cyan unless given). */
  spinnerStyle?: string;
  /** The colours' theme this client chose (its prompts draw in it too); unset when it draws no colour. */
  theme?: ThemeName;
}

export interface Status {
  text: string;
  /** When set, the elapsed time since then is shown after the text. */
  since?: number;
  /** Shown after the elapsed time: how to interrupt. */
  hint?: string;
}

type Stream = 'stdout' | 'stderr';

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const frameMilliseconds = 80;

export class TerminalOutput {
  private readonly options: TerminalOutputOptions;
  /** Whether the terminal's cursor is at the start of a line (as far as this process wrote to it). */
  private atLineStart = true;
  /** Writes to the terminal held while a prompt is open, in order. */
  private held: { stream: Stream; text: string }[] | undefined;
  /** Prompts wait for one another: one at a time. */
  private exclusiveChain: Promise<unknown> = Promise.resolve();
  private status: Status | undefined;
  private statusShown = false;
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
    this.eraseStatus();
    this.writer(stream).write(text);
    this.atLineStart = text.endsWith('\n');
    this.drawStatus();
  }

  /**
   * Sets (or clears, with undefined) the status line. It shows whenever the terminal is free and at
   * the start of a line, and animates until it is cleared.
   */
  setStatus(status: Status | undefined): void {
    if (!this.options.statusLine) return;
    this.status = status;
    if (!status) {
      this.eraseStatus();
      this.stopTimer();
      return;
    }
    this.drawStatus();
  }

  private drawStatus(): void {
    if (!this.status || this.held || !this.atLineStart) return;
    const details = [
      this.status.since === undefined ? undefined : formatElapsed(Date.now() - this.status.since),
      this.status.hint,
    ].filter(Boolean);
    const limit = Math.max(10, this.options.stderr.columns - 4);
    const text = `${this.status.text}${details.length > 0 ? ` (${details.join(' • ')})` : ''}`;
    const shown = [...text].length > limit ? [...text].slice(0, limit - 1).join('') + '…' : text;
    const frame = frames[this.frame % frames.length]!;
    this.options.stderr.write(
      `\r${this.options.color ? `${this.options.spinnerStyle ?? '\u001b[36m'}${frame}\u001b[39m` : frame} ${shown}\u001b[K`,
    );
    this.statusShown = true;
    this.timer ??= setInterval(() => {
      this.frame++;
      this.drawStatus();
    }, frameMilliseconds).unref();
  }

  private eraseStatus(): void {
    if (!this.statusShown) return;
    this.options.stderr.write('\r\u001b[K');
    this.statusShown = false;
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Runs `body` (a prompt or a menu on /dev/tty) as the terminal's only owner: one at a time, on a
   * line of its own, with every other write held until it is done.
   */
  exclusive<T>(body: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.held ??= [];
      this.eraseStatus();
      this.stopTimer();
      if (!this.atLineStart) {
        const stream: Stream = this.options.stdout.isTerminal && !this.options.stdout.atLineStart ? 'stdout' : 'stderr';
        this.writer(stream).write('\n');
        this.atLineStart = true;
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
    for (const entry of held) {
      this.writer(entry.stream).write(entry.text);
      this.atLineStart = entry.text.endsWith('\n');
    }
    this.drawStatus();
  }

  /** Resolves when no prompt or menu is open or waiting (their held output is released). */
  idle(): Promise<void> {
    return this.exclusiveChain.then(() => undefined);
  }

  /** Waits for open prompts to close, clears the status line, and waits until everything written is handed to the OS. */
  async flush(): Promise<void> {
    await this.idle();
    this.setStatus(undefined);
    await Promise.all([this.options.stdout.flush(), this.options.stderr.flush()]);
  }
}

function formatElapsed(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}
