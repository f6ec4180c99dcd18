/**
 * The one place where text that jp did not write itself (the model's answer, tool output, file
 * contents, log replays, titles, server descriptions, questions) is made safe to draw on a terminal
 * (DESIGN §10, "what the user sees is what runs"). Every control character and escape sequence is
 * neutralised by showing it visibly, so only jp's own styling ever reaches the terminal:
 *
 * - C0 controls and DEL in caret notation (`ESC` → `^[`, `CR` → `^M`, `BEL` → `^G`, `DEL` → `^?`);
 *   newline and tab are kept unless the caller asks for one line (`singleLine`), and so is a line
 *   ending `CR LF` (as a newline: a carriage return right before a newline overwrites nothing).
 * - C1 controls (U+0080–U+009F, which some terminals obey as CSI/OSC introducers) as `\x9b`.
 * - Bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which can make a command
 *   read differently from what runs, as `<U+202E>`.
 * - With `invisible` (what a person approves or trusts: permission payloads, questions, `jp trust`),
 *   every other invisible or format character too (Unicode Cf and default-ignorable code points:
 *   U+200B, U+2060, U+FEFF, U+3164, variation selectors, tags…) as `<U+200B>`: a command with a
 *   zero-width character in it must not look like the one without.
 *
 * Pure: the same input gives the same output; text with nothing to neutralise is returned as is.
 * `--format json` output is data and never passes through here.
 */

export interface VisibleOptions {
  /** Newlines and tabs are shown as `^J` / `^I` too (titles, one-line summaries). */
  singleLine?: boolean;
  /** Invisible and format characters are shown as `<U+…>` too (see the file comment). */
  invisible?: boolean;
}

// C0 (but not what is kept), DEL, C1, bidi controls.
const unsafe = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u0009]/;
const unsafeGlobal = new RegExp(unsafe.source, 'g');

function show(character: string, singleLine: boolean): string {
  const code = character.charCodeAt(0);
  if (!singleLine && (character === '\n' || character === '\t')) return character;
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return '^?';
  if (code <= 0x9f) return `\\x${code.toString(16)}`;
  return `<U+${code.toString(16).toUpperCase()}>`;
}

// Unicode Cf and default-ignorable code points (the bidi controls among them are `unsafe` already).
const invisibleGlobal = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/** `text` with every control character and escape sequence shown visibly (see the file comment). */
export function visible(text: string, options: VisibleOptions = {}): string {
  const shown = options.invisible
    ? text.replace(invisibleGlobal, (character) =>
        unsafe.test(character) ? character : `<U+${codePointHex(character)}>`,
      )
    : text;
  if (!unsafe.test(shown)) return shown;
  const singleLine = options.singleLine === true;
  const lines = singleLine ? shown : shown.replace(/\r\n/g, '\n');
  return lines.replace(unsafeGlobal, (character) => show(character, singleLine));
}

function codePointHex(character: string): string {
  return character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

/** Whether `text` holds anything `visible` would change (newline and tab kept). */
export function hasControlCharacters(text: string): boolean {
  return /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(text);
}

/** Resets every attribute (colour, bold, conceal, reverse…): drawn before each prompt. */
export const resetAttributes = '\u001b[0m';
