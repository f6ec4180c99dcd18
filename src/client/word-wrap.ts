/**
 * jp's own text at a terminal (chrome lines, a prompt's keys and hints, errors) laid out in rows of
 * the terminal's width, broken at spaces (wrap-ansi: colours carry over to the next row). A word is
 * cut only when it is wider than a whole row. `together()` keeps a phrase on one row (a key and what
 * it does), breaking only around it.
 */
import stringWidth from 'string-width';
import wrapAnsi from 'wrap-ansi';

const noBreakSpace = '\u00a0';

/** `phrase` as one word for wrapping: its spaces do not break (they show as spaces). */
export function together(phrase: string): string {
  return phrase.replace(/ /g, noBreakSpace);
}

/** Items (each kept together) joined with ` · `, a row breaking only after a separator. */
export function listed(items: readonly string[]): string {
  return items.map(together).join(`${noBreakSpace}· `);
}

/**
 * The rows of `text` (one line, perhaps coloured) at most `width` cells wide: its leading spaces
 * start the first row, and `continuation` (a hanging indent, a marker) starts each next one.
 */
export function wrapWords(text: string, width: number, continuation = ''): string[] {
  // Leading spaces may follow the line's opening colour: they stay on the first row only.
  const [, codes = '', spaces = ''] = /^((?:\u001b\[[\d;]*m)*)( *)/.exec(text)!;
  const body = codes + text.slice(codes.length + spaces.length);
  if (spaces.length + stringWidth(body) <= width) return [text.replaceAll(noBreakSpace, ' ')];
  const room = Math.max(4, width - Math.max(spaces.length, stringWidth(continuation)));
  return wrapAnsi(body, room, { hard: true, trim: true })
    .split('\n')
    .map((row, index) => (index === 0 ? spaces : continuation) + row.replaceAll(noBreakSpace, ' '));
}

/** Each line of `text` wrapped (wrapWords), continuation rows indented two cells past the line's own indent. */
export function wrapLines(text: string, width: number): string {
  return text
    .split('\n')
    .map((line) => {
      const indent = /^(?:\u001b\[[\d;]*m)*( *)/.exec(line)![1]!.length;
      return wrapWords(line, width, ' '.repeat(indent + 2)).join('\n');
    })
    .join('\n');
}
