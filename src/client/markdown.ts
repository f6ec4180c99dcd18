/**
 * Streaming markdown for text-pretty (DESIGN §13): output is append-only. Nothing written is ever
 * rewritten, so an answer taller than the screen appears exactly once in the scrollback, and the
 * bytes and the work stay linear in the answer.
 *
 * - A line's kind (heading, list item, quote, table row, fence, rule, paragraph) is decided from its
 *   first few characters; its prefix is written then.
 * - Text streams as it arrives, in pieces cut where no inline markup is open (`**bold** and` can be
 *   written; `**bo` waits for its closing `**`, or for the end of its line), each piece rendered by
 *   marked's inline lexer.
 * - A code block's lines are written as each completes, highlighted with highlight.js (when its
 *   language is known), without waiting for the closing fence. Table rows and rules are written
 *   when complete.
 * - Lines are not wrapped here: the terminal wraps them, and reflows them on resize, so lines stay
 *   whole at any width.
 * - Without colour (NO_COLOR, or not a terminal without FORCE_COLOR) nothing is styled: no colour,
 *   no bold; headings keep their `#` marks.
 *
 * marked and highlight.js are imported only here, only for text-pretty (highlight.js only with
 * colour).
 */
import type { Token, Tokens } from 'marked';

type LexInline = (source: string) => Token[];
type Highlighter = { highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string }; getLanguage(name: string): unknown };

export interface MarkdownModules {
  lexInline: LexInline;
  /** Present when output is coloured. */
  highlighter: Highlighter | undefined;
}

/** Loads marked's inline lexer and, for coloured output, highlight.js (its common languages). */
export async function loadMarkdown(color: boolean): Promise<MarkdownModules> {
  const [{ Lexer }, highlight] = await Promise.all([import('marked'), color ? import('highlight.js/lib/common') : undefined]);
  return {
    lexInline: (source: string) => Lexer.lexInline(source, { gfm: true }),
    highlighter: highlight ? ((highlight as { default?: Highlighter }).default ?? (highlight as unknown as Highlighter)) : undefined,
  };
}

const reset = '\u001b[0m';
const styles = {
  bold: '\u001b[1m',
  dim: '\u001b[2m',
  italic: '\u001b[3m',
  underline: '\u001b[4m',
  strike: '\u001b[9m',
  red: '\u001b[31m',
  green: '\u001b[32m',
  yellow: '\u001b[33m',
  blue: '\u001b[34m',
  magenta: '\u001b[35m',
  cyan: '\u001b[36m',
  gray: '\u001b[90m',
} as const;

/** highlight.js scopes → styles. */
const scopeStyles: Record<string, string> = {
  keyword: styles.magenta,
  built_in: styles.cyan,
  type: styles.cyan,
  literal: styles.yellow,
  number: styles.yellow,
  string: styles.green,
  regexp: styles.red,
  comment: styles.gray,
  doc: styles.gray,
  meta: styles.gray,
  title: styles.blue,
  'title.function': styles.blue,
  'title.class': styles.cyan,
  attr: styles.cyan,
  attribute: styles.cyan,
  property: styles.cyan,
  variable: styles.red,
  'template-variable': styles.red,
  params: '',
  symbol: styles.yellow,
  tag: styles.blue,
  name: styles.blue,
  addition: styles.green,
  deletion: styles.red,
  section: styles.bold,
};

/** Characters that may start inline markup; a piece without any is written as it is. */
const markupCharacters = /[*_`~[\]<>\\&!]/;

export interface MarkdownStreamOptions {
  color: boolean;
  /** Width for rules (`---`); read when a rule is drawn. */
  columns: () => number;
}

export class MarkdownStream {
  private readonly write: (text: string) => void;
  private readonly lexInline: LexInline;
  private readonly highlighter: Highlighter | undefined;
  private readonly color: boolean;
  private readonly columns: () => number;
  /** The current line's text not yet written (its start while its kind is undecided). */
  private pending = '';
  /** The current line's kind, once decided. */
  private line: { kind: 'paragraph'; style: string } | { kind: 'held' } | undefined;
  /** The open code block, if any. */
  private code: { language: string; fence: string } | undefined;

  constructor(modules: MarkdownModules, write: (text: string) => void, options: MarkdownStreamOptions) {
    this.lexInline = modules.lexInline;
    this.highlighter = modules.highlighter;
    this.write = write;
    this.color = options.color;
    this.columns = options.columns;
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

  /** Ends the unfinished line, if any (end of a step, before chrome, at the end of the run). */
  end(): void {
    if (this.pending !== '' || this.line !== undefined) this.completeLine();
  }

  /** Whether nothing of the current line is written or waiting. */
  get atLineStart(): boolean {
    return this.pending === '' && this.line === undefined;
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
      this.line = decided;
    }
    if (this.line.kind === 'held') return;
    const cut = safeCut(this.pending);
    if (cut === 0 && this.pending.length < 4096) return;
    const piece = cut === 0 ? this.pending : this.pending.slice(0, cut);
    this.pending = this.pending.slice(piece.length);
    this.write(this.inline(piece, this.line.style));
  }

  private completeLine(): void {
    if (this.code) {
      const text = this.pending;
      this.pending = '';
      this.write(this.codeLine(text) + '\n');
      return;
    }
    const line = this.line ?? this.classify(this.pending, true)!;
    const text = this.pending;
    this.pending = '';
    this.line = undefined;
    if (line.kind === 'held') {
      this.write(this.heldLine(text) + '\n');
      return;
    }
    this.write(this.inline(text, line.style) + (this.color && line.style !== '' ? reset : '') + '\n');
  }

  /**
   * The kind of a line from its start: a paragraph-like line (written as it streams) once its
   * prefix is written, 'held' for lines written whole (fences, table rows, rules), undefined while
   * more characters are needed to tell. `complete`: the line has ended.
   */
  private classify(start: string, complete: boolean): { kind: 'paragraph'; style: string } | { kind: 'held' } | undefined {
    const indentLength = start.length - start.trimStart().length;
    const rest = start.slice(indentLength);
    if (!complete && rest === '') return undefined;
    const could = (pattern: RegExp): boolean => !complete && pattern.test(rest);
    // Fences and table rows are written whole.
    if (/^(`{3,}|~{3,})/.test(rest) || rest.startsWith('|')) return { kind: 'held' };
    if (could(/^(`{1,2}|~{1,2})$/)) return undefined;
    // A rule (---, ***, ___) or a list item, told apart by what follows the first character.
    if (/^([-*_])( *\1){2,} *$/.test(rest) && complete) return { kind: 'held' };
    if (could(/^([-*_])( *\1)* *$/)) return undefined;
    const indent = start.slice(0, indentLength);
    let prefix: string;
    let style = '';
    let marker: RegExpExecArray | null;
    if ((marker = /^(#{1,6})( |$)/.exec(rest))) {
      const level = marker[1]!.length;
      // Without colour a heading keeps its marks; with colour it is bold (and underlined at level 1).
      prefix = this.color ? '' : marker[0];
      style = this.style(styles.bold, level === 1 ? styles.underline : '');
    } else if (could(/^#{1,6}$/)) {
      return undefined;
    } else if ((marker = /^[-*+] /.exec(rest))) {
      prefix = '• ';
    } else if ((marker = /^\d{1,9}[.)] /.exec(rest))) {
      prefix = marker[0];
    } else if (could(/^\d{1,9}[.)]?$/)) {
      return undefined;
    } else if ((marker = /^> ?/.exec(rest))) {
      prefix = this.style(styles.gray) + '│ ' + this.style(reset);
      style = this.style(styles.italic);
    } else {
      prefix = '';
    }
    this.pending = rest.slice(marker ? marker[0].length : 0);
    this.write(indent + prefix + style);
    return { kind: 'paragraph', style };
  }

  /** A line written whole: a fence (opening or closing a code block), a table row or a rule. */
  private heldLine(text: string): string {
    const rest = text.trimStart();
    const fence = /^(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(rest);
    if (fence) {
      this.code = { language: fence[2]!.toLowerCase(), fence: fence[1]! };
      return this.style(styles.gray) + text + this.style(reset);
    }
    if (/^([-*_])( *\1){2,} *$/.test(rest)) return this.style(styles.gray) + '─'.repeat(Math.max(3, Math.min(this.columns(), 80))) + this.style(reset);
    if (rest.startsWith('|')) {
      if (/^\|[\s:|-]+\|?\s*$/.test(rest)) return this.style(styles.gray) + text + this.style(reset);
      return text
        .split(/(?<!\\)\|/)
        .map((cell) => this.inline(cell, ''))
        .join(this.style(styles.gray) + '|' + this.style(reset));
    }
    return this.inline(text, '');
  }

  private codeLine(text: string): string {
    const code = this.code!;
    const rest = text.trimStart();
    if (rest.startsWith(code.fence[0]!.repeat(code.fence.length)) && new RegExp(`^\\${code.fence[0]}{${code.fence.length},}\\s*$`).test(rest)) {
      this.code = undefined;
      return this.style(styles.gray) + text + this.style(reset);
    }
    const hljs = this.highlighter;
    if (!this.color || !hljs || text === '') return text;
    if (code.language === '' || !hljs.getLanguage(code.language)) return text;
    try {
      return htmlToAnsi(hljs.highlight(text, { language: code.language, ignoreIllegals: true }).value);
    } catch {
      return text;
    }
  }

  /** Renders inline markdown; `base` is the line's own style, restored after each styled span. */
  private inline(text: string, base: string): string {
    if (text === '') return '';
    if (!markupCharacters.test(text)) return text;
    let tokens: Token[];
    try {
      tokens = this.lexInline(text);
    } catch {
      return text;
    }
    return this.tokens(tokens, base);
  }

  private tokens(tokens: readonly Token[], active: string): string {
    let output = '';
    const span = (style: string, inner: readonly Token[] | undefined, fallback: string): string => {
      if (!this.color) return inner ? this.tokens(inner, '') : fallback;
      const styled = active + style;
      return styled + (inner ? this.tokens(inner, styled) : fallback) + reset + active;
    };
    for (const token of tokens) {
      switch (token.type) {
        case 'strong':
          output += span(styles.bold, (token as Tokens.Strong).tokens, token.text);
          break;
        case 'em':
          output += span(styles.italic, (token as Tokens.Em).tokens, token.text);
          break;
        case 'del':
          output += span(styles.strike, (token as Tokens.Del).tokens, token.text);
          break;
        case 'codespan':
          output += this.color ? span(styles.yellow, undefined, decodeEntities((token as Tokens.Codespan).text)) : token.raw;
          break;
        case 'link': {
          const link = token as Tokens.Link;
          const label = this.color ? span(styles.blue + styles.underline, link.tokens, link.text) : this.tokens(link.tokens, '');
          output += label === link.href || link.text === link.href ? label : `${label} (${link.href})`;
          break;
        }
        case 'image': {
          const image = token as Tokens.Image;
          output += `[image: ${image.text}] (${image.href})`;
          break;
        }
        case 'br':
          output += '\n';
          break;
        case 'escape':
          output += (token as Tokens.Escape).text;
          break;
        case 'text': {
          const inner = (token as Tokens.Text).tokens;
          output += inner && inner.length > 0 && !(inner.length === 1 && inner[0]!.type === 'text') ? this.tokens(inner, active) : decodeEntities(token.raw);
          break;
        }
        default:
          output += token.raw;
      }
    }
    return output;
  }
}

/**
 * Where a streamed piece of a line may end: just after the last space at which no inline markup is
 * open (code span, emphasis, strikethrough, link, autolink or HTML). 0: nowhere yet.
 */
export function safeCut(text: string): number {
  let cut = 0;
  let codeRun = 0;
  let stars = 0;
  let underscores = 0;
  let tildes = 0;
  let brackets = 0;
  let parentheses = 0;
  let angle = false;
  const wordCharacter = (character: string | undefined): boolean => character !== undefined && /[\p{L}\p{N}]/u.test(character);
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (codeRun > 0) {
      if (character === '`') {
        let run = 1;
        while (text[index + run] === '`') run++;
        if (run === codeRun) codeRun = 0;
        index += run - 1;
      }
      continue;
    }
    switch (character) {
      case '\\':
        index++;
        continue;
      case '`': {
        let run = 1;
        while (text[index + run] === '`') run++;
        codeRun = run;
        index += run - 1;
        continue;
      }
      case '*':
      case '_': {
        let run = 1;
        while (text[index + run] === character) run++;
        const before = text[index - 1];
        const after = text[index + run];
        const spaced = (before === undefined || /\s/.test(before)) && (after === undefined || /\s/.test(after));
        const intraword = character === '_' && wordCharacter(before) && wordCharacter(after);
        if (!spaced && !intraword) {
          if (character === '*') stars += run;
          else underscores += run;
        }
        index += run - 1;
        continue;
      }
      case '~': {
        let run = 1;
        while (text[index + run] === '~') run++;
        if (run >= 2) tildes++;
        index += run - 1;
        continue;
      }
      case '[':
        brackets++;
        continue;
      case ']':
        if (brackets > 0) brackets--;
        if (text[index + 1] === '(') {
          parentheses++;
          index++;
        }
        continue;
      case ')':
        if (parentheses > 0) parentheses--;
        continue;
      case '<':
        if (/[A-Za-z/!]/.test(text[index + 1] ?? '')) angle = true;
        continue;
      case '>':
        angle = false;
        continue;
      default:
        if (/\s/.test(character) && stars % 2 === 0 && underscores % 2 === 0 && tildes % 2 === 0 && brackets === 0 && parentheses === 0 && !angle) cut = index + 1;
    }
  }
  return cut;
}

function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[name] ?? _);
}

/** highlight.js HTML (spans with hljs-<scope> classes, escaped text) → ANSI. */
function htmlToAnsi(html: string): string {
  const stack: string[] = [];
  let output = '';
  const pattern = /<span class="([^"]*)">|<\/span>|([^<]+)/g;
  for (const match of html.matchAll(pattern)) {
    if (match[1] !== undefined) {
      const scope = match[1].split(' ')[0]!.replace(/^hljs-/, '').replace(/_$/, '');
      const style = scopeStyles[scope] ?? scopeStyles[scope.split('.')[0]!] ?? '';
      stack.push(style);
      output += style;
    } else if (match[0] === '</span>') {
      stack.pop();
      output += reset + stack.join('');
    } else {
      output += decodeEntities(match[2]!);
    }
  }
  return output + (stack.length > 0 ? reset : '');
}

