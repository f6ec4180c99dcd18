/**
 * The one place text is cut to size: tool output before it reaches the model and the log, and the
 * result's echo of the query. Cuts keep the head and the tail, never split a surrogate pair, and
 * say how much was left out.
 */
export function truncateOutput(text: string, limit: number, what = 'output'): string {
  if (text.length <= limit) return text;
  const keep = Math.max(0, limit - 120);
  let headEnd = Math.ceil(keep * 0.7);
  let tailStart = text.length - (keep - headEnd);
  if (isLowSurrogate(text.charCodeAt(headEnd))) headEnd--;
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  const omitted = tailStart - headEnd;
  return `${text.slice(0, headEnd)}\n[… ${omitted} characters omitted by jp: ${what} longer than ${limit} characters …]\n${text.slice(tailStart)}`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
