/**
 * Inline markdown of a streamed line (markdown.ts): where a streamed piece may end (safeCut: where
 * no inline markup is open), and the piece rendered as runs (InlineMarkdown: bold, italic,
 * strikethrough, code spans in the palette's code colour, links underlined with their target,
 * images as `[image: alt] (src)`, HTML entities decoded). Without colour nothing is styled; a piece
 * the lexer cannot read is shown as it is.
 */
import type { Token, Tokens } from 'marked';
import type { Run } from './row-writer.ts';
import type { Palette } from './theme.ts';

export type LexInline = (source: string) => Token[];

export const styles = {
  bold: '\u001b[1m',
  italic: '\u001b[3m',
  underline: '\u001b[4m',
  strike: '\u001b[9m',
} as const;

/** Characters that may start inline markup; a piece without any is written as it is. */
const markupCharacters = /[*_`~[\]<>\\&!]/;

/** Renders inline markdown (emphasis, code spans, links…) as runs, through marked's inline lexer. */
export class InlineMarkdown {
  constructor(
    private readonly lexInline: LexInline,
    private readonly color: boolean,
    private readonly palette: Palette,
  ) {}

  /** Renders inline markdown as runs; `base` is the line's own style, under every span's. */
  runs(text: string, base: string): Run[] {
    if (text === '') return [];
    if (!markupCharacters.test(text)) return [{ text, style: base }];
    let tokens: Token[];
    try {
      tokens = this.lexInline(text);
    } catch {
      return [{ text, style: base }];
    }
    const runs: Run[] = [];
    this.tokens(tokens, base, runs);
    return runs;
  }

  private tokens(tokens: readonly Token[], active: string, runs: Run[]): void {
    const push = (text: string, style: string): void => {
      if (text !== '') runs.push({ text, style: this.color ? style : '' });
    };
    const span = (style: string, inner: readonly Token[] | undefined, fallback: string): void => {
      if (inner) this.tokens(inner, active + style, runs);
      else push(fallback, active + style);
    };
    for (const token of tokens) {
      switch (token.type) {
        case 'strong':
          span(styles.bold, (token as Tokens.Strong).tokens, token.text);
          break;
        case 'em':
          span(styles.italic, (token as Tokens.Em).tokens, token.text);
          break;
        case 'del':
          span(styles.strike, (token as Tokens.Del).tokens, token.text);
          break;
        case 'codespan':
          if (this.color) push(decodeEntities((token as Tokens.Codespan).text), active + this.palette.open('code'));
          else push(token.raw, active);
          break;
        case 'link': {
          const link = token as Tokens.Link;
          span(this.palette.open('title') + styles.underline, link.tokens, link.text);
          if (link.text !== link.href && this.tokensText(link.tokens) !== link.href) push(` (${link.href})`, active);
          break;
        }
        case 'image': {
          const image = token as Tokens.Image;
          push(`[image: ${image.text}] (${image.href})`, active);
          break;
        }
        case 'br':
          push('\n', active);
          break;
        case 'escape':
          push((token as Tokens.Escape).text, active);
          break;
        case 'text': {
          const inner = (token as Tokens.Text).tokens;
          if (inner && inner.length > 0 && !(inner.length === 1 && inner[0]!.type === 'text'))
            this.tokens(inner, active, runs);
          else push(decodeEntities(token.raw), active);
          break;
        }
        default:
          push(token.raw, active);
      }
    }
  }

  private tokensText(tokens: readonly Token[] | undefined): string {
    return (tokens ?? [])
      .map((token) => ('text' in token && typeof token.text === 'string' ? token.text : token.raw))
      .join('');
  }
}

/**
 * Where a streamed piece of a line may end: just after the last space at which no inline markup is
 * open (code span, emphasis, strikethrough, link, autolink or HTML). 0: nowhere yet.
 */
export function safeCut(text: string): number {
  let cut = 0;
  let codeRun = 0;
  // Emphasis delimiter runs (`*`, `**`, `_`…) still open: a run that can close closes the last
  // open one of its character, one that can only open opens one (CommonMark's flanking rules).
  const open = { '*': 0, _: 0 };
  let tildes = 0;
  let brackets = 0;
  let parentheses = 0;
  let angle = false;
  const wordCharacter = (character: string | undefined): boolean =>
    character !== undefined && /[\p{L}\p{N}]/u.test(character);
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
        const canOpen = after !== undefined && !/\s/.test(after);
        const canClose = before !== undefined && !/\s/.test(before);
        const intraword = character === '_' && wordCharacter(before) && wordCharacter(after);
        if (!intraword) {
          if (canClose && open[character] > 0) open[character]--;
          else if (canOpen) open[character]++;
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
        if (
          /\s/.test(character) &&
          open['*'] === 0 &&
          open._ === 0 &&
          tildes % 2 === 0 &&
          brackets === 0 &&
          parentheses === 0 &&
          !angle
        )
          cut = index + 1;
    }
  }
  return cut;
}

export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(
    /&(amp|lt|gt|quot|#39|#x27);/g,
    (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[name] ?? _,
  );
}
