/**
 * What a permission prompt shows of a call (DESIGN §10, "what the user sees is what runs"): pure
 * functions from a tool's name and arguments to a title and the lines of its payload.
 * - fs_modify_file: a unified diff with line numbers, for one edit (`old_string`/`new_string`) or a
 *   list (`edits: [{old_string, new_string, replace_all?}]`), computed against the file as it is now.
 * - fs_create_file: the content, line by line.
 * - run_command: the command, whole.
 * - any other tool: its arguments as indented JSON.
 * Everything the model wrote passes through `visible()`; payload lines are wrapped at spaces to the width,
 * and `fitPayload` cuts only at the end, saying how many lines were left out.
 */
import { wrapWords } from './word-wrap.ts';
import { visible } from '../output/sanitize.ts';

export type LineKind = 'context' | 'removed' | 'added' | 'hunk' | 'plain' | 'note';

export interface PayloadLine {
  kind: LineKind;
  text: string;
}

export interface CallView {
  /** The tool and what it acts on, e.g. `fs_modify_file notes.txt`. */
  title: string;
  lines: PayloadLine[];
}

export interface Edit {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

/** Reads a file of the workspace for a preview; undefined when it cannot be read. */
export type ReadForPreview = (path: string) => string | undefined;

const contextLines = 2;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The edits of an fs_modify_file call, in either form; undefined when the arguments have neither. */
export function editsOf(argumentsValue: unknown): Edit[] | undefined {
  if (!isRecord(argumentsValue)) return undefined;
  const { edits } = argumentsValue;
  if (Array.isArray(edits)) {
    const list = edits.filter(
      (edit): edit is Edit =>
        isRecord(edit) && typeof edit.old_string === 'string' && typeof edit.new_string === 'string',
    );
    return list.length === edits.length ? list : undefined;
  }
  if (typeof argumentsValue.old_string === 'string' && typeof argumentsValue.new_string === 'string') {
    return [
      {
        old_string: argumentsValue.old_string,
        new_string: argumentsValue.new_string,
        ...(argumentsValue.replace_all === true ? { replace_all: true } : {}),
      },
    ];
  }
  return undefined;
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * A unified diff of `edits` applied in order to `content`, with old and new line numbers; when
 * the content is unknown or an edit does not apply, the edit is shown as removed and added text
 * with a note saying why there are no line numbers.
 */
export function diffLines(content: string | undefined, edits: readonly Edit[], path: string): PayloadLine[] {
  const out: PayloadLine[] = [];
  let current = content;
  for (const edit of edits) {
    const index = current === undefined || edit.old_string === '' ? -1 : current.indexOf(edit.old_string);
    if (current === undefined || index === -1) {
      out.push({
        kind: 'note',
        text:
          current === undefined
            ? `(${path} cannot be read here: no line numbers)`
            : `(this text is not in ${path} now: the edit will fail)`,
      });
      for (const line of splitLines(edit.old_string)) out.push({ kind: 'removed', text: `- ${line}` });
      for (const line of splitLines(edit.new_string)) out.push({ kind: 'added', text: `+ ${line}` });
      continue;
    }
    const next = edit.replace_all
      ? current.split(edit.old_string).join(edit.new_string)
      : current.slice(0, index) + edit.new_string + current.slice(index + edit.old_string.length);
    out.push(...hunk(splitLines(current), splitLines(next)));
    current = next;
  }
  return out;
}

/**
 * One hunk from the first changed line to the last, with context around it: lines that differ
 * are removed and added, equal lines in between are context (runs of them shortened to `…`).
 */
function hunk(before: readonly string[], after: readonly string[]): PayloadLine[] {
  let prefix = 0;
  while (prefix < before.length && prefix < after.length && before[prefix] === after[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < before.length - prefix &&
    suffix < after.length - prefix &&
    before[before.length - 1 - suffix] === after[after.length - 1 - suffix]
  )
    suffix++;
  const oldEnd = before.length - suffix;
  const newEnd = after.length - suffix;
  const first = Math.max(0, prefix - contextLines);
  const lastOld = Math.min(before.length, oldEnd + contextLines);
  const lastNew = Math.min(after.length, newEnd + contextLines);
  const width = String(Math.max(lastOld, lastNew)).length;
  const number = (line: number): string => String(line + 1).padStart(width);
  const lines: PayloadLine[] = [
    { kind: 'hunk', text: `@@ -${first + 1},${lastOld - first} +${first + 1},${lastNew - first} @@` },
  ];
  for (let line = first; line < prefix; line++)
    lines.push({ kind: 'context', text: `${number(line)}   ${before[line]}` });
  if (oldEnd - prefix === newEnd - prefix) {
    let equalRun = 0;
    for (let offset = 0; prefix + offset < oldEnd; offset++) {
      const line = prefix + offset;
      if (before[line] === after[line]) {
        equalRun++;
        if (equalRun <= contextLines || before[line + 1] !== after[line + 1])
          lines.push({ kind: 'context', text: `${number(line)}   ${before[line]}` });
        else if (equalRun === contextLines + 1) lines.push({ kind: 'context', text: `${' '.repeat(width)}   …` });
        continue;
      }
      equalRun = 0;
      lines.push({ kind: 'removed', text: `${number(line)} - ${before[line]}` });
      lines.push({ kind: 'added', text: `${number(line)} + ${after[line]}` });
    }
  } else {
    for (let line = prefix; line < oldEnd; line++)
      lines.push({ kind: 'removed', text: `${number(line)} - ${before[line]}` });
    for (let line = prefix; line < newEnd; line++)
      lines.push({ kind: 'added', text: `${number(line)} + ${after[line]}` });
  }
  for (let offset = 0; newEnd + offset < lastNew; offset++)
    lines.push({ kind: 'context', text: `${number(newEnd + offset)}   ${after[newEnd + offset]}` });
  return lines;
}

function plainLines(text: string): PayloadLine[] {
  return splitLines(text).map((line) => ({ kind: 'plain', text: line }));
}

/** The title and payload of a permission prompt for `tool` called with `argumentsValue`. */
export function describeCall(tool: string, argumentsValue: unknown, read: ReadForPreview): CallView {
  const record = isRecord(argumentsValue) ? argumentsValue : undefined;
  const path = typeof record?.path === 'string' ? record.path : undefined;
  const safeTool = visible(tool, { singleLine: true, invisible: true });
  let view: CallView;
  if (tool === 'fs_modify_file' && path !== undefined && editsOf(argumentsValue)) {
    view = { title: `${safeTool} ${path}`, lines: diffLines(read(path), editsOf(argumentsValue)!, path) };
  } else if (tool === 'fs_create_file' && path !== undefined && typeof record?.content === 'string') {
    const lines = plainLines(record.content);
    view = {
      title: `${safeTool} ${path} (${lines.length} line${lines.length === 1 ? '' : 's'})`,
      lines: lines.map((line) => ({ kind: 'added', text: `+ ${line.text}` })),
    };
  } else if (tool === 'run_command' && typeof record?.command === 'string') {
    const rest = Object.fromEntries(Object.entries(record).filter(([key]) => key !== 'command'));
    const lines: PayloadLine[] = splitLines(record.command).map((line, index) => ({
      kind: 'plain',
      text: `${index === 0 ? '$' : '>'} ${line}`,
    }));
    if (Object.keys(rest).length > 0)
      lines.push(...plainLines(JSON.stringify(rest, null, 2)).map((line) => ({ ...line, kind: 'note' as const })));
    view = { title: safeTool, lines };
  } else {
    view = { title: safeTool, lines: plainLines(JSON.stringify(argumentsValue, null, 2) ?? 'null') };
  }
  return {
    title: visible(view.title, { singleLine: true, invisible: true }),
    lines: view.lines.map((line) => ({
      kind: line.kind,
      text: visible(line.text, { singleLine: true, invisible: true }),
    })),
  };
}

/**
 * Payload lines wrapped at spaces to `width` columns, continuation rows indented (a word wider than
 * a row is cut at its end); each row keeps its line's kind.
 */
export function wrapPayload(lines: readonly PayloadLine[], width: number): PayloadLine[] {
  return lines.flatMap((line) => wrapWords(line.text, width, '    ').map((text) => ({ kind: line.kind, text })));
}

/** The first rows that fit in `maxRows`, and how many were left out (all at the end, never in the middle). */
export function fitPayload(rows: readonly PayloadLine[], maxRows: number): { shown: PayloadLine[]; hidden: number } {
  if (rows.length <= maxRows) return { shown: [...rows], hidden: 0 };
  const shown = rows.slice(0, Math.max(1, maxRows - 1));
  return { shown, hidden: rows.length - shown.length };
}
