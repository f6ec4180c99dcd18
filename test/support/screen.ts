/**
 * What a person sees at a terminal, for tests: a program runs in a real pseudo-terminal
 * (@lydell/node-pty) and everything it writes is fed to a real terminal emulator
 * (@xterm/headless), so tests assert on the rendered screen and its scrollback, not on bytes.
 *
 *   const screen = Screen.jp(sandbox, ['query', ...script, 'hello'], { columns: 100, rows: 30 });
 *   await screen.waitFor('Run fs_create_file?');          // anywhere in the scrollback
 *   await screen.waitFor(/\[y\/Y\/a\/n\/N\/p\/e\]/, { on: 'screen' });   // on the visible rows
 *   screen.press('y');                                    // keys go to the terminal, like typing
 *   const { exitCode } = await screen.exited;
 *   const lines = await screen.lines();                   // the whole scrollback, wrapped rows joined
 *
 * Waits have a generous safety limit that fails the test with what the screen showed; they never
 * measure time. The environment is the sandbox's minus CI and JP_NON_INTERACTIVE: a screen test
 * plays a human. Close every screen (`screen.close()`, or pass `cleanup` to have it done after the
 * test file).
 */
import { createRequire } from 'node:module';
import { holdTerminal, type HeldTerminal } from './held-terminal.ts';
import { jpBinary, type Sandbox } from './jp.ts';

const require = createRequire(import.meta.url);
const { Terminal } = require('@xterm/headless') as typeof import('@xterm/headless');

/** Keys as a terminal sends them. */
export const keys = {
  enter: '\r',
  escape: '\u001b',
  backspace: '\u007f',
  tab: '\t',
  up: '\u001b[A',
  down: '\u001b[B',
  right: '\u001b[C',
  left: '\u001b[D',
  ctrlC: '\u0003',
  ctrlD: '\u0004',
  ctrlZ: '\u001a',
} as const;

export interface ScreenOptions {
  /** Terminal size; 100×30 unless given. */
  columns?: number;
  rows?: number;
  /** Added to the sandbox environment (CI and JP_NON_INTERACTIVE are always removed). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Rows kept above the screen; large enough for long answers by default. */
  scrollback?: number;
  /** Registers `close()` to run after the test file (e.g. `useCleanup()` from jp.ts). */
  cleanup?: { add(cleanup: () => unknown): void };
  /**
   * The background colour the terminal reports when asked (OSC 11), e.g. `rgb:ffff/ffff/ffff`;
   * unset: it does not answer (as @xterm/headless, which only answers device attributes).
   */
  background?: string;
  /**
   * Measure characters as grapheme clusters with today's Unicode widths (emoji sequences, ✅ and
   * skin tones two cells), as modern terminals do; unset: @xterm/headless's own Unicode 6 widths.
   */
  graphemes?: boolean;
}

/** How the cells of a row are drawn. */
export interface RowStyle {
  /** Every non-blank cell is bold (underlined, italic). */
  bold: boolean;
  underline: boolean;
  italic: boolean;
  /** The xterm-256 palette index of the first non-blank cell's colour, or undefined for the default. */
  color: number | undefined;
}

export interface WaitOptions {
  /**
   * Where to look: the whole scrollback (default), only the rows now visible, or the scrollback
   * with jp's own wrapping undone (`flowedText()`, for a message matched whole at any width).
   */
  on?: 'scrollback' | 'screen' | 'flowed';
  /** Wait until the pattern occurs at least this many times (default 1). */
  times?: number;
  /** Safety limit; the test fails with the screen's content when it is reached. */
  limitMs?: number;
}

export class Screen {
  /** Resolves when the program has exited and everything it wrote has been drawn. */
  readonly exited: Promise<{ exitCode: number; signal?: number }>;
  private readonly terminal: import('@xterm/headless').Terminal;
  private readonly held: HeldTerminal;
  private readonly listeners = new Set<() => void>();
  private output = '';
  private byteCount = 0;
  private closed = false;
  private programExited = false;
  private readonly background: string | undefined;
  private readonly replies: string[] = [];
  /** Every window title the program set (OSC 0/2), in order. */
  readonly titles: string[] = [];

  /** The built jp as the terminal's foreground process (no shell: Ctrl+Z and Ctrl+C reach jp's group). */
  static jp(sandbox: Sandbox, args: string[], options: ScreenOptions = {}): Screen {
    return new Screen(sandbox, process.execPath, [jpBinary, ...args], options);
  }

  /** A shell command line (`/bin/sh -c`), for pipelines: stdin and stdout may be pipes while /dev/tty is the terminal. */
  static shell(sandbox: Sandbox, commandLine: string, options: ScreenOptions = {}): Screen {
    return new Screen(sandbox, '/bin/sh', ['-c', commandLine], options);
  }

  /** Any program, e.g. an interactive `bash -i` with job control. */
  static program(sandbox: Sandbox, file: string, args: string[], options: ScreenOptions = {}): Screen {
    return new Screen(sandbox, file, args, options);
  }

  private constructor(sandbox: Sandbox, file: string, args: string[], options: ScreenOptions) {
    const columns = options.columns ?? 100;
    const rows = options.rows ?? 30;
    const environment = { ...sandbox.env, ...options.env } as Record<string, string>;
    delete environment.CI;
    delete environment.JP_NON_INTERACTIVE;
    delete environment.JP_NONINTERACTIVE;
    this.background = options.background;
    this.terminal = new Terminal({
      cols: columns,
      rows,
      scrollback: options.scrollback ?? 100_000,
      allowProposedApi: true,
    });
    if (options.graphemes) {
      const { UnicodeGraphemesAddon } =
        require('@xterm/addon-unicode-graphemes') as typeof import('@xterm/addon-unicode-graphemes');
      this.terminal.loadAddon(new UnicodeGraphemesAddon());
    }
    this.terminal.onTitleChange((title) => this.titles.push(title));
    this.held = holdTerminal(
      file,
      args,
      { cwd: options.cwd ?? sandbox.workspace, env: environment, columns, rows },
      (data) => this.record(data),
    );
    // Answers to the program's queries (cursor position, device attributes) go back as a terminal's would.
    this.terminal.onData((data) => {
      this.replies.push(data);
      if (!this.closed && !this.programExited) this.held.pty.write(data);
    });
    this.exited = this.held.exited.then(async (event) => {
      this.programExited = true;
      await this.drawn();
      this.held.release();
      this.notify();
      return event;
    });
    options.cleanup?.add(() => this.close());
  }

  private record(data: string): void {
    // A background query is answered before the emulator answers what follows it (as a terminal does).
    if (this.background !== undefined && data.includes('\u001b]11;?') && !this.closed && !this.programExited) {
      const reply = `\u001b]11;${this.background}\u0007`;
      this.replies.push(reply);
      this.held.pty.write(reply);
    }
    this.output += data;
    this.byteCount += Buffer.byteLength(data);
    this.terminal.write(data, () => this.notify());
  }

  /** The program's pid (not the holder's): signals sent to it are what a person's `kill` would send. */
  get pid(): number {
    return this.held.programPid();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Resolves once everything received so far is drawn. */
  drawn(): Promise<void> {
    return new Promise((resolve) => this.terminal.write('', resolve));
  }

  /** Types keys (see `keys` for special ones), as a person at the terminal. */
  press(data: string): void {
    this.held.pty.write(data);
  }

  /** Resizes the terminal (the program gets SIGWINCH). */
  resize(columns: number, rows: number): void {
    this.terminal.resize(columns, rows);
    this.held.pty.resize(columns, rows);
  }

  /** Sends a signal to the program (SIGHUP unless given), as `kill` from another terminal would. */
  kill(signal: NodeJS.Signals = 'SIGHUP'): void {
    process.kill(this.pid, signal);
  }

  /** Bytes the program wrote to the terminal so far. */
  bytesWritten(): number {
    return this.byteCount;
  }

  /** Everything the program wrote, escape sequences included (for diagnostics). */
  raw(): string {
    return this.output;
  }

  get columns(): number {
    return this.terminal.cols;
  }

  /**
   * Logical lines of the whole buffer, scrollback first: rows the terminal wrapped are joined into
   * the line they continue, trailing spaces and trailing empty rows dropped.
   */
  lines(): string[] {
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let index = 0; index < buffer.length; index++) {
      const line = buffer.getLine(index)!;
      // A row the next one continues is taken whole: its trailing spaces are part of the line.
      const text = line.translateToString(false);
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    const trimmed = lines.map((line) => line.trimEnd());
    while (trimmed.length > 0 && trimmed[trimmed.length - 1] === '') trimmed.pop();
    return trimmed;
  }

  /** The rows now visible, each as the terminal shows it (no joining), trailing spaces dropped. */
  visibleRows(): string[] {
    const buffer = this.terminal.buffer.active;
    const rows: string[] = [];
    for (let index = 0; index < this.terminal.rows; index++)
      rows.push(buffer.getLine(buffer.viewportY + index)?.translateToString(true) ?? '');
    return rows;
  }

  /** Every physical row of the buffer, scrollback included, as drawn (wrapped rows not joined). */
  allRows(): string[] {
    const buffer = this.terminal.buffer.active;
    const rows: string[] = [];
    for (let index = 0; index < buffer.length; index++) rows.push(buffer.getLine(index)!.translateToString(true));
    return rows;
  }

  /** The text of the whole scrollback (`lines()` joined with newlines). */
  text(): string {
    return this.lines().join('\n');
  }

  /**
   * The scrollback's text with jp's own wrapping undone: jp wraps its lines at spaces and indents
   * the rows after the first, so a row that starts with spaces is joined to the row above with
   * one space. For matching a message whole, whatever the width.
   */
  flowedText(): string {
    return this.text().replace(/\n +/g, ' ');
  }

  /** The visible screen as text. */
  screenText(): string {
    return this.visibleRows().join('\n');
  }

  /**
   * The characters drawn with any style (bold, dim, italic, underline, inverse, or a colour other
   * than the default), in buffer order: '' when everything is plain.
   */
  styledText(): string {
    const buffer = this.terminal.buffer.active;
    const cell = buffer.getNullCell();
    let styled = '';
    for (let index = 0; index < buffer.length; index++) {
      const line = buffer.getLine(index)!;
      for (let column = 0; column < line.length; column++) {
        line.getCell(column, cell);
        const chars = cell.getChars();
        if (chars === '' || chars === ' ') continue;
        const plain =
          cell.isFgDefault() &&
          cell.isBgDefault() &&
          !cell.isBold() &&
          !cell.isDim() &&
          !cell.isItalic() &&
          !cell.isUnderline() &&
          !cell.isInverse();
        if (!plain) styled += chars;
      }
    }
    return styled;
  }

  /**
   * The foreground colours drawn anywhere in the buffer, each once: `N` for xterm-256 palette
   * colour N (0–15 are the terminal's own 16), `#rrggbb` for a true colour.
   */
  foregroundColors(): string[] {
    const buffer = this.terminal.buffer.active;
    const cell = buffer.getNullCell();
    const colors = new Set<string>();
    for (let index = 0; index < buffer.length; index++) {
      const line = buffer.getLine(index)!;
      for (let column = 0; column < line.length; column++) {
        line.getCell(column, cell);
        if (cell.getChars().trim() === '' || cell.isFgDefault()) continue;
        colors.add(cell.isFgRGB() ? `#${cell.getFgColor().toString(16).padStart(6, '0')}` : String(cell.getFgColor()));
      }
    }
    return [...colors].sort();
  }

  /** What the terminal answered the program's queries with (cursor position, device attributes, background), in order. */
  terminalReplies(): string[] {
    return [...this.replies];
  }

  /** The characters drawn invisible (SGR 8, conceal), in buffer order: '' when none is. */
  invisibleText(): string {
    const buffer = this.terminal.buffer.active;
    const cell = buffer.getNullCell();
    let hidden = '';
    for (let index = 0; index < buffer.length; index++) {
      const line = buffer.getLine(index)!;
      for (let column = 0; column < line.length; column++) {
        line.getCell(column, cell);
        if (cell.isInvisible() && cell.getChars().trim() !== '') hidden += cell.getChars();
      }
    }
    return hidden;
  }

  /** How each row whose text (trailing spaces dropped) is exactly `text` is drawn, in buffer order. */
  rowStyles(text: string): RowStyle[] {
    const buffer = this.terminal.buffer.active;
    const cell = buffer.getNullCell();
    const styles: RowStyle[] = [];
    for (let index = 0; index < buffer.length; index++) {
      const line = buffer.getLine(index)!;
      if (line.translateToString(true) !== text) continue;
      const style: RowStyle = { bold: true, underline: true, italic: true, color: undefined };
      let first = true;
      for (let column = 0; column < line.length; column++) {
        line.getCell(column, cell);
        if (cell.getChars().trim() === '') continue;
        style.bold &&= cell.isBold() !== 0;
        style.underline &&= cell.isUnderline() !== 0;
        style.italic &&= cell.isItalic() !== 0;
        if (first) style.color = cell.isFgDefault() ? undefined : cell.getFgColor();
        first = false;
      }
      styles.push(style);
    }
    return styles;
  }

  /** Every physical row of the buffer with the cell column just after its last non-blank cell (0 for a blank row). */
  rowEnds(): { row: string; end: number }[] {
    const buffer = this.terminal.buffer.active;
    const cell = buffer.getNullCell();
    const rows: { row: string; end: number }[] = [];
    for (let index = 0; index < buffer.length; index++) {
      const line = buffer.getLine(index)!;
      let end = 0;
      for (let column = 0; column < line.length; column++) {
        line.getCell(column, cell);
        if (cell.getChars().trim() !== '') end = column + cell.getWidth();
      }
      rows.push({ row: line.translateToString(true), end });
    }
    return rows;
  }

  /** The visible row the cursor is on, as drawn. */
  cursorRow(): string {
    const buffer = this.terminal.buffer.active;
    return buffer.getLine(buffer.baseY + buffer.cursorY)?.translateToString(true) ?? '';
  }

  /** How many times `pattern` occurs in the scrollback (or on the screen). */
  count(pattern: string | RegExp, on: WaitOptions['on'] = 'scrollback'): number {
    const text = on === 'screen' ? this.screenText() : on === 'flowed' ? this.flowedText() : this.text();
    if (typeof pattern === 'string') return pattern === '' ? 0 : text.split(pattern).length - 1;
    const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : pattern.flags + 'g');
    return [...text.matchAll(global)].length;
  }

  /** Resolves when `pattern` is drawn (see WaitOptions); fails with the screen's content after the safety limit. */
  waitFor(pattern: string | RegExp, options: WaitOptions = {}): Promise<void> {
    const on = options.on ?? 'scrollback';
    const times = options.times ?? 1;
    const matches = (): boolean => this.count(pattern, on) >= times;
    return this.waitUntil(
      `${String(pattern)}${times > 1 ? ` ${times} times` : ''} on the ${on}`,
      matches,
      options.limitMs,
    );
  }

  /** Resolves when `check()` holds on the drawn screen; fails with the screen's content after the safety limit. */
  async waitUntil(what: string, check: () => boolean, limitMs = 30_000): Promise<void> {
    await this.drawn();
    if (check()) return;
    let exited = false;
    void this.exited.then(() => (exited = true));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(
          new Error(
            `the terminal never showed ${what}; the screen:\n${this.screenText()}\n(last 40 lines of scrollback:\n${this.lines().slice(-40).join('\n')})`,
          ),
        );
      }, limitMs);
      const listener = (): void => {
        if (check()) {
          clearTimeout(timer);
          this.listeners.delete(listener);
          resolve();
        } else if (exited) {
          clearTimeout(timer);
          this.listeners.delete(listener);
          reject(
            new Error(
              `the program exited and the terminal never showed ${what}; the screen:\n${this.screenText()}\n(last 40 lines of scrollback:\n${this.lines().slice(-40).join('\n')})`,
            ),
          );
        }
      };
      this.listeners.add(listener);
      void this.exited.then(listener);
    });
  }

  /** Kills the program if it still runs and frees the terminal. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.programExited) {
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        // already gone, or never started
      }
    }
    this.held.release();
    this.terminal.dispose();
  }
}

/** `Screen.jp` for a test file: every screen it opens is closed by the file's `cleanup` (useCleanup). */
export function jpScreens(
  cleanup: NonNullable<ScreenOptions['cleanup']>,
): (sandbox: Sandbox, args: string[], options?: ScreenOptions) => Screen {
  return (sandbox, args, options = {}) => Screen.jp(sandbox, args, { cleanup, ...options });
}
