/**
 * A markdown table, drawn once its last row is read (markdown.ts): in a box sized to its cells
 * (the header bold, each column aligned as its delimiter row says), or, when the box is wider than
 * the terminal, each row as `header: value` lines, rows apart by a rule. Rows that are not a table
 * (no delimiter row) are drawn as text.
 */
import { resetAttributes } from '../output/sanitize.ts';
import stringWidth from 'string-width';
import { styles } from './markdown-inline.ts';
import { RowWriter, runsWidth, type Run } from './row-writer.ts';
import type { Palette } from './theme.ts';

/** Where and how a table is drawn: the stream's output, the terminal's width, its inline rendering and styles. */
export interface TableTarget {
  write: (text: string) => void;
  columns: () => number;
  palette: Palette;
  /** Inline markdown as runs; `base` is the style under every span's. */
  inline: (text: string, base: string) => Run[];
  /** The SGR codes joined, '' without colour. */
  style: (...codes: string[]) => string;
}

/** Draws `rows` as a table (see the file comment), or its rows as text when it is not a table. */
export function drawTable(rows: readonly string[], target: TableTarget): void {
  const cells = rows.map(splitRow);
  const delimiter = cells[1];
  const isTable =
    rows.length >= 2 && /^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(rows[1]!.trim()) && delimiter !== undefined;
  if (!isTable) {
    for (const row of rows) {
      const writer = new RowWriter(target.write, target.columns, '', 0);
      writer.runs(target.inline(row, ''));
      writer.end();
    }
    return;
  }
  const alignments = delimiter.map((cell) => (/^:-+:$/.test(cell) ? 'center' : /-:$/.test(cell) ? 'right' : 'left'));
  const header = cells[0]!;
  const body = cells.slice(2);
  const count = header.length;
  const rendered = [header, ...body].map((row) =>
    Array.from({ length: count }, (_, index) => target.inline(row[index] ?? '', '')),
  );
  const widths = Array.from({ length: count }, (_, index) =>
    Math.max(1, ...rendered.map((row) => runsWidth(row[index]!))),
  );
  const boxWidth = widths.reduce((sum, width) => sum + width + 3, 1);
  const muted = (text: string): string => target.palette.paint('muted', text);
  if (boxWidth <= target.columns()) {
    const border = (left: string, middle: string, right: string): string =>
      muted(left + widths.map((width) => '─'.repeat(width + 2)).join(middle) + right) + '\n';
    const row = (runs: Run[][], bold: boolean): string =>
      muted('│') +
      runs
        .map((cell, index) => {
          const free = widths[index]! - runsWidth(cell);
          const before =
            alignments[index] === 'right' ? free : alignments[index] === 'center' ? Math.floor(free / 2) : 0;
          const text = runsText(
            bold ? cell.map((run) => ({ text: run.text, style: target.style(styles.bold) + run.style })) : cell,
          );
          return ' ' + ' '.repeat(before) + text + ' '.repeat(free - before) + ' ' + muted('│');
        })
        .join('') +
      '\n';
    let output = border('┌', '┬', '┐') + row(rendered[0]!, true) + border('├', '┼', '┤');
    for (const cellsOfRow of rendered.slice(1)) output += row(cellsOfRow, false);
    target.write(output + border('└', '┴', '┘'));
    return;
  }
  // Too wide for the terminal: each row as `header: value` lines, rows apart by a rule.
  const headers = rendered[0]!.map((cell) => cell.map((run) => run.text).join(''));
  for (const [rowIndex, row] of rendered.slice(1).entries()) {
    if (rowIndex > 0) target.write(muted('─'.repeat(Math.max(3, Math.min(target.columns(), 40)))) + '\n');
    for (const [index, cell] of row.entries()) {
      const label = `${headers[index]}: `;
      const labelWidth = stringWidth(label);
      target.write(target.style(styles.bold) + label + target.style(resetAttributes));
      const writer = new RowWriter(target.write, target.columns, ' '.repeat(labelWidth), labelWidth);
      writer.runs(cell);
      writer.end();
    }
  }
}

/** Runs as styled text (no wrapping). */
function runsText(runs: readonly Run[]): string {
  let output = '';
  for (const run of runs) output += run.style !== '' ? run.style + run.text + resetAttributes : run.text;
  return output;
}

/** The cells of a table row: split at unescaped pipes, the outer pipes dropped, each trimmed. */
function splitRow(row: string): string[] {
  let text = row.trim();
  if (text.startsWith('|')) text = text.slice(1);
  if (text.endsWith('|') && !text.endsWith('\\|')) text = text.slice(0, -1);
  return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, '|'));
}
