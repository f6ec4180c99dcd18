/**
 * Word wrapping for streamed markdown (markdown.ts): text comes as runs (each a piece of text in
 * one style), and RowWriter lays their words out on rows of at most the terminal's width, read as
 * each word is placed. A word is written once it is complete, after one space when it fits on the
 * row, else on a new row that starts with the line's continuation (a hanging indent, a quote's
 * bars); a word longer than a whole row is cut at each row's end. Every row ends with its style
 * reset.
 */
import { resetAttributes } from '../output/sanitize.ts';
import stringWidth from 'string-width';
import { graphemes } from './graphemes.ts';

/** A piece of text drawn in one style (an SGR sequence, '' for plain). */
export interface Run {
  text: string;
  style: string;
}

/**
 * Lays out words on rows of at most `columns()` cells: a word is written when it is placed, after
 * one space when it fits on the row, else on a new row that starts with `continuation`.
 */
export class RowWriter {
  /** Cells used on the current row. */
  column: number;
  private space: Run | undefined;
  /** The style the terminal is in now (as far as this writer set it). */
  private current: string;

  constructor(
    private readonly write: (text: string) => void,
    private readonly columns: () => number,
    private readonly continuation: string,
    private readonly indentWidth: number,
    /** The style the row's prefix left the terminal in. */
    current = '',
  ) {
    this.column = indentWidth;
    this.current = current;
  }

  private styled(run: Run): string {
    if (run.style === this.current) return run.text;
    const switched = (this.current !== '' ? resetAttributes : '') + run.style;
    this.current = run.style;
    return switched + run.text;
  }

  private newRow(): void {
    this.write((this.current !== '' ? resetAttributes : '') + '\n' + this.continuation);
    this.current = '';
    this.column = this.indentWidth;
    this.space = undefined;
  }

  /** Writes runs of text: words placed as they fit, spaces between them kept only within a row. */
  runs(runs: readonly Run[]): void {
    let word: Run[] = [];
    let wordWidth = 0;
    const flushWord = (): void => {
      if (word.length > 0) this.place(word, wordWidth);
      word = [];
      wordWidth = 0;
    };
    for (const run of runs) {
      for (const part of run.text.split(/([ \t]+|\n)/)) {
        if (part === '') continue;
        if (part === '\n') {
          flushWord();
          this.newRow();
        } else if (part[0] === ' ' || part[0] === '\t') {
          flushWord();
          this.space = { text: ' ', style: run.style };
        } else {
          word.push({ text: part, style: run.style });
          wordWidth += stringWidth(part);
        }
      }
    }
    flushWord();
  }

  private place(word: Run[], width: number): void {
    const columns = Math.max(this.indentWidth + 10, this.columns());
    const atRowStart = this.column === this.indentWidth;
    if (!atRowStart && this.column + (this.space ? 1 : 0) + width > columns) this.newRow();
    let output = '';
    if (this.space && this.column > this.indentWidth) {
      output += this.styled(this.space);
      this.column++;
    }
    this.space = undefined;
    if (this.column + width <= columns) {
      for (const run of word) output += this.styled(run);
      this.column += width;
      this.write(output);
      return;
    }
    // Longer than a whole row: cut at each row's end.
    this.write(output);
    for (const run of word) {
      for (const character of graphemes(run.text)) {
        const cells = stringWidth(character);
        if (this.column + cells > columns && this.column > this.indentWidth) this.newRow();
        this.write(this.styled({ text: character, style: run.style }));
        this.column += cells;
      }
    }
  }

  /** Ends the line: the style is reset and the cursor goes to the next line. */
  end(): void {
    this.write((this.current !== '' ? resetAttributes : '') + '\n');
    this.current = '';
  }
}

export function runsWidth(runs: readonly Run[]): number {
  let width = 0;
  for (const run of runs) width += stringWidth(run.text);
  return width;
}
