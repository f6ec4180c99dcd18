/**
 * Streaming markdown for text-pretty (DESIGN §13): output is append-only. Nothing written is ever
 * rewritten, so an answer taller than the screen appears exactly once in the scrollback, and the
 * bytes and the work stay linear in the answer.
 *
 * - A line's kind (heading, list item, quote, table row, fence, rule, paragraph) is decided from its
 *   start, once that start is unambiguous (`##` waits for what follows: ` ` makes it a level-2
 *   heading, `#` a level-3 one, a letter a paragraph) or the line is complete; its prefix is
 *   written then. Headings keep their `#` marks (bold, underlined at level 1, with colour).
 * - Text streams as it arrives, in pieces cut where no inline markup is open (`**bold** and` can be
 *   written; `**bo` waits for its closing `**`, or for the end of its line), each piece rendered by
 *   marked's inline lexer.
 * - Lines are word-wrapped at the terminal's width (read as each word is placed, so a resize applies
 *   from the next word on): a word is written once it is complete and known to fit on the row, else
 *   it starts the next row. Wrapped rows get a hanging indent under the text of a list item, and a
 *   quote's bar is drawn on every row. A word longer than a whole row is cut at the row's end; no
 *   other word (URLs and inline code included) is ever cut.
 * - A code block's lines are written as each completes, highlighted with highlight.js (when its
 *   language is known), without waiting for the closing fence; the fences themselves are not drawn.
 *   A code line wider than the terminal is wrapped at spaces, each further row marked `↪ `.
 * - A table is held until its last row, then drawn in a box sized to its cells; when the box is
 *   wider than the terminal, each row is drawn as `header: value` lines instead.
 * - Without colour (NO_COLOR, TERM=dumb, or not a terminal without FORCE_COLOR) nothing is styled:
 *   no colour, no bold.
 *
 * This file decides each line's kind and streams it; its parts: row-writer.ts (word wrapping),
 * markdown-inline.ts (inline markup, where a piece may be cut), markdown-table.ts (tables),
 * code-highlight.ts (highlighted code); widths in cells are string-width's.
 *
 * The text given here is already made visible (sanitize.ts): every escape sequence written is jp's.
 * marked and highlight.js are imported only here, only for text-pretty (highlight.js only with
 * colour).
 */
import { resetAttributes } from '../output/sanitize.ts';
import { htmlToAnsi } from './code-highlight.ts';
import stringWidth from 'string-width';
import { InlineMarkdown, safeCut, styles, type LexInline } from './markdown-inline.ts';
import { drawTable } from './markdown-table.ts';
import { RowWriter } from './row-writer.ts';
import { wrapWords } from './word-wrap.ts';
import { palette as makePalette, type Palette } from './theme.ts';

type Highlighter = {
  highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string };
  getLanguage(name: string): unknown;
};

export interface MarkdownModules {
  lexInline: LexInline;
  /** Present when output is coloured. */
  highlighter: Highlighter | undefined;
}

/** Loads marked's inline lexer and, for coloured output, highlight.js (its common languages). */
export async function loadMarkdown(color: boolean): Promise<MarkdownModules> {
  const [{ Lexer }, highlight] = await Promise.all([
    import('marked'),
    color ? import('highlight.js/lib/common') : undefined,
  ]);
  return {
    lexInline: (source: string) => Lexer.lexInline(source, { gfm: true }),
    highlighter: highlight
      ? ((highlight as { default?: Highlighter }).default ?? (highlight as unknown as Highlighter))
      : undefined,
  };
}

export interface MarkdownStreamOptions {
  color: boolean;
  /** The terminal's width, read as each word is placed. */
  columns: () => number;
  /** The colours (dark unless given). */
  palette?: Palette;
}

/** What starts a line: its kind, and what is drawn before its first row and before each wrapped row. */
type LineStart =
  | { kind: 'paragraph'; first: string; continuation: string; indentWidth: number; style: string }
  | { kind: 'held' };

export class MarkdownStream {
  private readonly write: (text: string) => void;
  private readonly inline: InlineMarkdown;
  private readonly highlighter: Highlighter | undefined;
  private readonly color: boolean;
  private readonly columns: () => number;
  private readonly palette: Palette;
  /** The current line's text not yet written (its start while its kind is undecided). */
  private pending = '';
  /** The current line's kind, once decided, and its row writer. */
  private line: { start: LineStart; rows: RowWriter | undefined } | undefined;
  /** The open code block, if any. */
  private code: { language: string; fence: string } | undefined;
  /** The rows of the table being read, drawn when it ends. */
  private table: string[] | undefined;

  constructor(modules: MarkdownModules, write: (text: string) => void, options: MarkdownStreamOptions) {
    this.highlighter = modules.highlighter;
    this.write = write;
    this.color = options.color;
    this.columns = options.columns;
    this.palette = options.palette ?? makePalette('dark', options.color);
    this.inline = new InlineMarkdown(modules.lexInline, this.color, this.palette);
  }

  push(text: string): void {
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      if (newline === -1) {
        this.pending += text.slice(start);
        this.progress();
        return;
      }
      this.pending += text.slice(start, newline);
      this.completeLine();
      start = newline + 1;
    }
  }

  /** Ends the unfinished line and a table being read, if any (end of a step, before chrome, at the end of the run). */
  end(): void {
    if (this.pending !== '' || this.line !== undefined) this.completeLine();
    this.endTable();
  }

  private style(...codes: string[]): string {
    return this.color ? codes.join('') : '';
  }

  /** Decides the current line's kind from its start, writing its prefix, when its start allows. */
  private progress(): void {
    if (this.code) return; // code lines are written when complete
    if (this.line === undefined) {
      const decided = this.classify(this.pending, false);
      if (!decided) return;
      this.begin(decided);
    }
    const line = this.line!;
    if (line.start.kind === 'held') return;
    const cut = safeCut(this.pending);
    if (cut === 0 && this.pending.length < 4096) return;
    const piece = cut === 0 ? this.pending : this.pending.slice(0, cut);
    this.pending = this.pending.slice(piece.length);
    line.rows!.runs(this.inline.runs(piece, line.start.style));
  }

  /** A line's kind is decided: a table being read ends unless this is one of its rows; the prefix is written. */
  private begin(start: LineStart): void {
    if (this.table && !(start.kind === 'held' && this.pending.trimStart().startsWith('|'))) this.endTable();
    if (start.kind === 'held') {
      this.line = { start, rows: undefined };
      return;
    }
    this.write(start.first);
    this.line = {
      start,
      rows: new RowWriter(this.write, this.columns, start.continuation, start.indentWidth, start.style),
    };
  }

  private completeLine(): void {
    if (this.code) {
      const text = this.pending;
      this.pending = '';
      const line = this.codeLine(text);
      if (line !== undefined) this.write(this.codeRows(line).join('\n') + '\n');
      return;
    }
    if (this.line === undefined) this.begin(this.classify(this.pending, true)!);
    const line = this.line!;
    const text = this.pending;
    this.pending = '';
    this.line = undefined;
    if (line.start.kind === 'held') {
      this.heldLine(text);
      return;
    }
    line.rows!.runs(this.inline.runs(text, line.start.style));
    line.rows!.end();
  }

  /**
   * The kind of a line from its start: a paragraph-like line (written as it streams) once its
   * prefix is known, 'held' for lines written whole (fences, table rows, rules), undefined while
   * more characters are needed to tell. `complete`: the line has ended. Consumes the prefix from
   * `pending`.
   */
  private classify(start: string, complete: boolean): LineStart | undefined {
    const could = (pattern: RegExp, rest: string): boolean => !complete && pattern.test(rest);
    const indentLength = start.length - start.trimStart().length;
    let index = indentLength;
    // Quote markers, nested: `> > text`.
    let quotes = 0;
    while (start[index] === '>') {
      if (!complete && index + 1 === start.length) return undefined;
      quotes++;
      index++;
      if (start[index] === ' ') index++;
      while (start[index] === ' ' && start[index + 1] === '>') index++;
    }
    const rest = start.slice(index);
    if (!complete && rest === '') return undefined;
    if (quotes === 0) {
      // Fences, table rows and rules are written whole.
      if (/^(`{3,}|~{3,})/.test(rest) || rest.startsWith('|')) return { kind: 'held' };
      if (could(/^(`{1,2}|~{1,2})$/, rest)) return undefined;
      if (/^([-*_])( *\1){2,} *$/.test(rest) && complete) return { kind: 'held' };
    }
    if (could(/^([-*_])( *\1)* *$/, rest)) return undefined;
    const indent = start.slice(0, indentLength).replace(/\t/g, '    ');
    const bars = quotes > 0 ? this.palette.open('muted') + '│ '.repeat(quotes) + this.style(resetAttributes) : '';
    const barsWidth = 2 * quotes;
    let marker: RegExpExecArray | null;
    let first = '';
    let markerWidth = 0;
    let style = quotes > 0 ? this.style(styles.italic) : '';
    if ((marker = /^(#{1,6})( +|$)/.exec(rest)) && (complete || marker[2] !== '')) {
      const level = marker[1]!.length;
      style = this.style(styles.bold, level === 1 ? styles.underline : '', quotes > 0 ? styles.italic : '');
      first = style + marker[1]! + (rest.length > marker[1]!.length ? ' ' : '');
      markerWidth = level + 1;
    } else if (could(/^#{1,6}$/, rest)) {
      return undefined;
    } else if ((marker = /^[-*+] /.exec(rest))) {
      first = '• ';
      markerWidth = 2;
    } else if ((marker = /^\d{1,9}[.)] /.exec(rest))) {
      first = marker[0];
      markerWidth = marker[0].length;
    } else if (could(/^\d{1,9}[.)]?$/, rest)) {
      return undefined;
    } else {
      marker = null;
    }
    this.pending = rest.slice(marker ? marker[0].length : 0);
    if (quotes > 0 && marker === null && this.pending === '') {
      // An empty quote line: the bars without their trailing space.
      return {
        kind: 'paragraph',
        first: indent + bars.replace(/ (?=[^ ]*$)/, ''),
        continuation: '',
        indentWidth: 0,
        style: '',
      };
    }
    const indentWidth = stringWidth(indent) + barsWidth + markerWidth;
    return {
      kind: 'paragraph',
      first: indent + bars + (first === '' ? style : first + (first.startsWith(style) ? '' : style)),
      continuation: indent + bars + ' '.repeat(markerWidth),
      indentWidth,
      style,
    };
  }

  /** A line written whole: a fence (opening or closing a code block), a table row or a rule. */
  private heldLine(text: string): void {
    const rest = text.trimStart();
    const fence = /^(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(rest);
    if (fence) {
      // The fence itself is not drawn: the code's lines are.
      this.code = { language: fence[2]!.toLowerCase(), fence: fence[1]! };
      return;
    }
    if (/^([-*_])( *\1){2,} *$/.test(rest)) {
      this.write(this.palette.paint('muted', '─'.repeat(Math.max(3, Math.min(this.columns(), 80)))) + '\n');
      return;
    }
    (this.table ??= []).push(text);
  }

  /** Draws the table read so far (markdown-table.ts), if any. */
  private endTable(): void {
    const rows = this.table;
    this.table = undefined;
    if (!rows) return;
    drawTable(rows, {
      write: this.write,
      columns: this.columns,
      palette: this.palette,
      inline: (text, base) => this.inline.runs(text, base),
      style: (...codes) => this.style(...codes),
    });
  }

  /**
   * A code line as rows of the terminal's width: broken at spaces, each row after the first
   * starting with a muted `↪ ` that says it continues the line above (a word wider than a row is
   * cut at its end). Tabs are laid out at the terminal's tab stops first.
   */
  private codeRows(line: string): string[] {
    let text = line;
    if (text.includes('\t')) {
      let column = 0;
      text = text.replace(/\u001b\[[\d;]*m|\t|[^\t\u001b]+/g, (part) => {
        if (part.startsWith('\u001b')) return part;
        if (part !== '\t') {
          column += stringWidth(part);
          return part;
        }
        const spaces = 8 - (column % 8);
        column += spaces;
        return ' '.repeat(spaces);
      });
    }
    return wrapWords(text, this.columns(), this.palette.paint('muted', '↪ '));
  }

  /** A code block's line, highlighted; undefined for its closing fence (not drawn). */
  private codeLine(text: string): string | undefined {
    const code = this.code!;
    const rest = text.trimStart();
    if (
      rest.startsWith(code.fence[0]!.repeat(code.fence.length)) &&
      new RegExp(`^\\${code.fence[0]}{${code.fence.length},}\\s*$`).test(rest)
    ) {
      this.code = undefined;
      return undefined;
    }
    const hljs = this.highlighter;
    if (!this.color || !hljs || text === '') return text;
    if (code.language === '' || !hljs.getLanguage(code.language)) return text;
    try {
      return htmlToAnsi(hljs.highlight(text, { language: code.language, ignoreIllegals: true }).value, (role) =>
        role === 'bold' ? styles.bold : role === '' ? '' : this.palette.open(role),
      );
    } catch {
      return text;
    }
  }
}
