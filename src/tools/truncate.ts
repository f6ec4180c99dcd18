/**
 * The one place text is cut to size: every tool's output before it reaches the model and the log
 * (at `conversation.tools.defaults.output_limit` characters), and the result's echo of the query.
 * Cuts keep the head and the tail, at line boundaries when there are any near the cut, never split
 * a surrogate pair, and say how many lines and characters were left out.
 */
import { counted } from '../plural.ts';

/** Room kept for the mark that says what was left out. */
const markRoom = 160;

export function truncateOutput(text: string, limit: number, what = 'output'): string {
  if (text.length <= limit) return text;
  const keep = Math.max(0, limit - markRoom);
  const headLength = Math.ceil(keep * 0.7);
  const tailLength = keep - headLength;
  let headEnd = headLength;
  let tailStart = text.length - tailLength;
  // Whole lines when a line boundary is near: the head ends after a newline, the tail starts a line.
  const headLineEnd = text.lastIndexOf('\n', headEnd - 1) + 1;
  const wholeHead = headLineEnd > 0 && headLineEnd >= headLength / 2;
  if (wholeHead) headEnd = headLineEnd;
  else if (isLowSurrogate(text.charCodeAt(headEnd))) headEnd--;
  const wholeTail =
    text[tailStart - 1] === '\n' ||
    (text.indexOf('\n', tailStart) !== -1 && text.indexOf('\n', tailStart) + 1 - tailStart <= tailLength / 2);
  if (wholeTail && text[tailStart - 1] !== '\n') tailStart = text.indexOf('\n', tailStart) + 1;
  else if (!wholeTail && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  const omitted = text.slice(headEnd, tailStart);
  const newlines = omitted.split('\n').length - 1;
  const amount =
    wholeHead && wholeTail
      ? `${counted(newlines, 'line')} (${counted(omitted.length, 'character')})`
      : counted(omitted.length, 'character');
  const head = text.slice(0, headEnd);
  return (
    `${head}${head.endsWith('\n') ? '' : '\n'}[… jp omitted ${amount} here: the ${what} is longer than ${limit} ` +
    `characters …]\n${text.slice(tailStart)}`
  );
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
