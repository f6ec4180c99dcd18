/**
 * Exact replacements, as fs_modify_file applies them: each edit's old_string must occur exactly
 * once (or replace_all), edits apply in order, each to the result of the ones before, all or
 * none. When one cannot apply, the error says why in words the model can act on: where the same
 * text with other whitespace is, or the nearest line to the one it gave, or the lines of each
 * occurrence.
 */
import * as z from 'zod/mini';

export const editSchema = z.strictObject({
  old_string: z
    .string()
    .check(
      z.describe(
        'Exact text to replace (whitespace and indentation included); must occur exactly once unless replace_all',
      ),
    ),
  new_string: z.string().check(z.describe('Replacement text')),
  replace_all: z.optional(z.boolean().check(z.describe('Replace every occurrence instead of requiring exactly one'))),
});

type Edit = z.infer<typeof editSchema>;

/** Where `offset` is in `content`: its 1-based line number. */
function lineAt(content: string, offset: number): number {
  let line = 1;
  for (let index = content.indexOf('\n'); index !== -1 && index < offset; index = content.indexOf('\n', index + 1))
    line++;
  return line;
}

function collapseWhitespace(text: string): { text: string; offsets: number[] } {
  let collapsed = '';
  const offsets: number[] = [];
  let inWhitespace = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index]!;
    if (/\s/.test(character)) {
      if (inWhitespace) continue;
      inWhitespace = true;
      collapsed += ' ';
    } else {
      inWhitespace = false;
      collapsed += character;
    }
    offsets.push(index);
  }
  return { text: collapsed, offsets };
}

/** Letter pairs shared by two strings (Dice's coefficient): 1 for the same text, 0 for nothing in common. */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const pairs = new Map<string, number>();
  for (let index = 0; index < a.length - 1; index++) {
    const pair = a.slice(index, index + 2);
    pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
  }
  let shared = 0;
  for (let index = 0; index < b.length - 1; index++) {
    const pair = b.slice(index, index + 2);
    const left = pairs.get(pair) ?? 0;
    if (left > 0) {
      pairs.set(pair, left - 1);
      shared++;
    }
  }
  return (2 * shared) / (a.length + b.length - 2);
}

function quoteLine(line: string): string {
  const trimmed = line.trim();
  return JSON.stringify(trimmed.length > 120 ? `${trimmed.slice(0, 119)}…` : trimmed);
}

/** Why old_string was not found, and where the nearest text is, in words the model can act on. */
function nearestMatch(content: string, oldString: string): string {
  const collapsedContent = collapseWhitespace(content);
  const collapsedOld = collapseWhitespace(oldString).text.trim();
  const at = collapsedOld === '' ? -1 : collapsedContent.text.indexOf(collapsedOld);
  if (at !== -1) {
    const line = lineAt(content, collapsedContent.offsets[at]!);
    return (
      `the same text with different whitespace or indentation is at line ${line}; copy it exactly from ` +
      `fs_read_file (without the line-number prefix)`
    );
  }
  const wanted =
    oldString
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? '';
  let best = { line: 0, score: 0, text: '' };
  content.split('\n').forEach((line, index) => {
    const score = similarity(line.trim(), wanted);
    if (score > best.score) best = { line: index + 1, score, text: line };
  });
  if (best.score >= 0.5) return `the nearest line to its first line is line ${best.line}: ${quoteLine(best.text)}`;
  return 'nothing like it is in the file; read the file again, it may have changed';
}

/** The occurrences of `needle` in `content`, by offset. */
function occurrences(content: string, needle: string): number[] {
  const found: number[] = [];
  for (let index = content.indexOf(needle); index !== -1; index = content.indexOf(needle, index + needle.length))
    found.push(index);
  return found;
}

/** Applies the edits in order, each to the result of the ones before; the first that cannot apply is the error. */
export function applyEdits(
  content: string,
  edits: readonly Edit[],
  requested: string,
): { ok: true; content: string; replaced: number } | { ok: false; message: string } {
  let current = content;
  let replaced = 0;
  for (const [index, edit] of edits.entries()) {
    const which = edits.length > 1 ? `edit ${index + 1} of ${edits.length}: ` : '';
    const nothing = edits.length > 1 ? ' Nothing was changed: the edits apply all or none.' : '';
    if (edit.old_string === '')
      return { ok: false, message: `${which}old_string is empty; give the exact text to replace.${nothing}` };
    if (edit.old_string === edit.new_string)
      return {
        ok: false,
        message: `${which}old_string and new_string are the same; there is nothing to change.${nothing}`,
      };
    const found = occurrences(current, edit.old_string);
    if (found.length === 0) {
      const after = index > 0 ? ' (after the edits before it)' : '';
      return {
        ok: false,
        message:
          `${which}old_string was not found ` +
          `in ${requested}${after}: ${nearestMatch(current, edit.old_string)}.${nothing}`,
      };
    }
    if (found.length > 1 && edit.replace_all !== true) {
      const lines = found.slice(0, 10).map((offset) => lineAt(current, offset));
      return {
        ok: false,
        message:
          `${which}old_string occurs ${found.length} times in ${requested} (at ` +
          `lines ${lines.join(', ')}${found.length > 10 ? ', …' : ''}); include more of the surrounding text to ` +
          `make it unique, or set replace_all.${nothing}`,
      };
    }
    current = current.split(edit.old_string).join(edit.new_string);
    replaced += found.length;
  }
  return { ok: true, content: current, replaced };
}
