/**
 * The width of text on a terminal, in cells: what wrapping and cutting at the terminal's width
 * count (markdown, chrome lines).
 */

/**
 * How many terminal cells one character takes: East Asian wide and fullwidth characters and emoji
 * two, combining marks and zero-width characters none, everything else one.
 */
export function characterWidth(character: string): number {
  const code = character.codePointAt(0)!;
  if (/[\p{Mn}\p{Me}\u200b-\u200f]/u.test(character) || (code >= 0xfe00 && code <= 0xfe0f)) return 0;
  if (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf && code !== 0x303f) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** How many terminal cells `text` takes (characterWidth of each). */
export function displayWidth(text: string): number {
  if (/^[\u0020-\u007e]*$/.test(text)) return text.length;
  let width = 0;
  for (const character of text) width += characterWidth(character);
  return width;
}
