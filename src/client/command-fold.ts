/**
 * A command's result (run_command's content) as drawn under its `↳` line: its status (`exit code
 * N`, `killed by SIGTERM`, a time-out) for the header, then its lines. Live, the lines are folded
 * so that the outcome is on screen:
 * - a success stays short: its first lines, then `… +N lines`;
 * - a failure keeps its first and last lines around `… +N lines`, the last lines of its stderr
 *   under `stderr:`, and jp's own notes (`[jp: …]`: the sandbox stopped it, a decision made
 *   without a human) whole.
 * A replay (`print`, the history of `attach`) shows every line.
 */
import { visible } from '../output/sanitize.ts';
import { cutToWidth, oneLine } from './chrome-text.ts';

export interface FoldedRow {
  text: string;
  /** jp's own note (drawn as a warning) rather than the command's output (drawn muted). */
  note?: true;
}

export interface CommandFold {
  /** The status line: `exit code 3`, `killed by SIGKILL`, `timed out after 10 s and was killed`. */
  status: string | undefined;
  rows: FoldedRow[];
}

/** Rows of a successful command's output shown live. */
const successRows = 5;
/** A failed command's first and last rows, and the last rows of its stderr, shown live. */
const failureHead = 3;
const failureTail = 5;
const stderrTail = 5;

const isStatus = (line: string | undefined): boolean =>
  line !== undefined && /^(exit code -?\d+|killed by \w+)$/.test(line);

/** The parts of a command's result, as run_command writes it. */
export function commandParts(content: string): {
  status: string | undefined;
  stdout: string[];
  stderr: string[];
  notes: string[];
} {
  const lines = content.split('\n');
  const notes: string[] = [];
  // jp's notes come last, after a blank line.
  while (lines.length > 0 && (lines[lines.length - 1] === '' || lines[lines.length - 1]!.startsWith('[jp: '))) {
    const line = lines.pop()!;
    if (line !== '') notes.unshift(line);
  }
  let status: string | undefined;
  if (isStatus(lines[lines.length - 1])) status = lines.pop();
  else if (/^(timed out after .*|stopped: .*)$/.test(lines[0] ?? '')) status = lines.shift();
  else if (isStatus(lines[0])) status = lines.shift();
  const split = lines.indexOf('[stderr]');
  const stdout = split === -1 ? lines : lines.slice(0, split);
  const stderr = split === -1 ? [] : lines.slice(split + 1);
  for (const part of [stdout, stderr]) while (part.length > 0 && part[part.length - 1] === '') part.pop();
  return { status, stdout, stderr, notes };
}

export function foldCommand(content: string, options: { failed: boolean; all: boolean }): CommandFold {
  const { status, stdout, stderr, notes } = commandParts(content);
  const rows: FoldedRow[] = [];
  const output = (lines: string[]): void => {
    for (const line of lines) rows.push({ text: line });
  };
  const withStderr = stderr.length > 0 ? ['[stderr]', ...stderr] : [];
  if (options.all) {
    output(stdout);
    output(withStderr);
  } else if (!options.failed) {
    const lines = [...stdout, ...withStderr];
    output(lines.slice(0, successRows));
    if (lines.length > successRows) rows.push({ text: `… +${lines.length - successRows} lines` });
  } else {
    if (stdout.length <= failureHead + failureTail + 1) output(stdout);
    else {
      output(stdout.slice(0, failureHead));
      rows.push({ text: `… +${stdout.length - failureHead - failureTail} lines` });
      output(stdout.slice(-failureTail));
    }
    if (stderr.length > 0) {
      rows.push({ text: 'stderr:' });
      if (stderr.length > stderrTail) rows.push({ text: `… +${stderr.length - stderrTail} lines` });
      output(stderr.slice(-stderrTail));
    }
  }
  for (const note of notes) rows.push({ text: note, note: true });
  // A lone line of output says it all in the header (`↳ run_command: ok — done`).
  return { status, rows };
}

/**
 * A command's result as chrome blocks for the text renderer: the `↳` line (in the caller's role),
 * then its folded output (muted, each row cut to `width` live) and jp's notes (warnings), in order.
 */
export function commandBlocks(
  event: { content: string; is_error: boolean },
  name: string,
  outcome: string,
  options: { replayed: boolean; quiet: boolean; width: number },
): { text: string; role?: 'muted' | 'warning' }[] {
  const fold = foldCommand(event.content, { failed: event.is_error, all: options.replayed });
  const single = fold.status === undefined && fold.rows.length === 1 && !fold.rows[0]!.note;
  const header = fold.status ?? (single ? fold.rows.shift()!.text : undefined);
  const blocks: { text: string; role?: 'muted' | 'warning' }[] = [
    { text: `  ↳ ${oneLine(name)}: ${outcome}${header ? ` — ${oneLine(header)}` : ''}` },
  ];
  if (options.quiet) return blocks;
  let output: string[] = [];
  const flush = (): void => {
    if (output.length > 0) blocks.push({ text: output.join('\n'), role: 'muted' });
    output = [];
  };
  for (const row of fold.rows) {
    if (row.note) {
      flush();
      blocks.push({ text: `    ${oneLine(row.text)}`, role: 'warning' });
      continue;
    }
    const text = visible(row.text.replace(/\t/g, '    '), { singleLine: true });
    output.push(`    ${options.replayed ? text : cutToWidth(text, options.width)}`);
  }
  flush();
  return blocks;
}
