/**
 * Approvals that last (DESIGN §10, the user's side): a rule the user chose at a permission prompt,
 * "always in this workspace", kept in user-local state (workspace/approvals.ts) and applied to later
 * calls, with a human at the terminal or not. Plain data and pure functions, no I/O. A rule covers
 * running a tool, never leaving the sandbox (an escalation is always asked).
 *
 * - `tool`: every call of the tool.
 * - `command`: run_command with exactly these words, as the shell will run them.
 * - `prefix`: run_command whose words start with these (`npm test` covers `npm test -- --watch`).
 * - `path`: a file tool writing under this directory of the workspace (`.`: anywhere in it).
 *
 * A command is matched on its words, parsed by a real shell-words parser (shell-quote), and only a
 * simple command has words: one with an operator (`;`, `&&`, `|`, a redirection), an expansion
 * (`$`, a backquote, a glob, `~`, braces), a backslash, a newline or a comment has none, so no
 * command or prefix rule ever covers `npm test; rm -rf ~`.
 */
import path from 'node:path';
import { parse } from 'shell-quote';

export type ApprovalRule =
  | { kind: 'tool'; tool: string }
  | { kind: 'command'; tool: string; words: string[] }
  | { kind: 'prefix'; tool: string; words: string[] }
  | { kind: 'path'; tool: string; path: string };

/** The tools whose commands a command or prefix rule covers, and the file tools a path rule covers. */
const commandTools = ['run_command'];
const writingTools = ['fs_create_file', 'fs_modify_file'];

/** Characters a simple command's text never holds outside what shell-quote models safely. */
const unsafe = /[`$\\\n\r[\]{}~!*?#]/;

/** The words the shell runs for `command`, when it is one simple command; undefined otherwise. */
export function commandWords(command: string): string[] | undefined {
  if (unsafe.test(command)) return undefined;
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(command, (name) => ({ op: `$${name}` }) as never);
  } catch {
    return undefined;
  }
  if (parsed.length === 0 || !parsed.every((word): word is string => typeof word === 'string')) return undefined;
  // A quote left open is a syntax error for the shell: nothing it holds is a word of a command.
  const quotes = command.replace(/'[^']*'|"[^"]*"/g, '');
  if (/['"]/.test(quotes)) return undefined;
  return parsed;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A rule read from outside (a client's answer, the store's file); undefined when it is not one. */
export function parseApprovalRule(value: unknown): ApprovalRule | undefined {
  if (!isRecord(value) || typeof value.tool !== 'string' || value.tool === '') return undefined;
  const words =
    Array.isArray(value.words) && value.words.length > 0 && value.words.every((word) => typeof word === 'string')
      ? (value.words as string[])
      : undefined;
  switch (value.kind) {
    case 'tool':
      return { kind: 'tool', tool: value.tool };
    case 'command':
    case 'prefix':
      return commandTools.includes(value.tool) && words ? { kind: value.kind, tool: value.tool, words } : undefined;
    case 'path': {
      const where = typeof value.path === 'string' ? normalizedPath(value.path) : undefined;
      return writingTools.includes(value.tool) && where !== undefined
        ? { kind: 'path', tool: value.tool, path: where }
        : undefined;
    }
    default:
      return undefined;
  }
}

/** A workspace-relative directory in one form (`.`, `src/lib`); undefined when it leaves the workspace. */
function normalizedPath(relative: string): string | undefined {
  if (path.isAbsolute(relative)) return undefined;
  const normal = path.posix.normalize(relative.replace(/\\/g, '/')).replace(/\/+$/, '') || '.';
  return normal === '..' || normal.startsWith('../') ? undefined : normal;
}

/** Whether `rule` covers a call of `tool` with `argumentsValue` (never one that asks to leave the sandbox). */
export function ruleCovers(rule: ApprovalRule, tool: string, argumentsValue: unknown): boolean {
  if (rule.tool !== tool) return false;
  if (isRecord(argumentsValue) && argumentsValue.escalate === true) return false;
  switch (rule.kind) {
    case 'tool':
      return true;
    case 'command':
    case 'prefix': {
      const command = isRecord(argumentsValue) ? argumentsValue.command : undefined;
      const words = typeof command === 'string' ? commandWords(command) : undefined;
      if (!words) return false;
      if (rule.kind === 'command' && words.length !== rule.words.length) return false;
      return rule.words.every((word, index) => words[index] === word);
    }
    case 'path': {
      const file =
        isRecord(argumentsValue) && typeof argumentsValue.path === 'string' ? argumentsValue.path : undefined;
      const where = file === undefined ? undefined : normalizedPath(file);
      if (where === undefined || where === '.') return false;
      return rule.path === '.' || where.startsWith(`${rule.path}/`);
    }
  }
}

/** The rules a prompt offers for this call, narrowest first. */
export function rulesFor(tool: string, argumentsValue: unknown): ApprovalRule[] {
  const rules: ApprovalRule[] = [];
  const record = isRecord(argumentsValue) ? argumentsValue : {};
  if (commandTools.includes(tool) && typeof record.command === 'string') {
    const words = commandWords(record.command);
    if (words) {
      rules.push({ kind: 'command', tool, words });
      for (let length = words.length - 1; length >= 1; length--)
        rules.push({ kind: 'prefix', tool, words: words.slice(0, length) });
    }
  }
  if (writingTools.includes(tool) && typeof record.path === 'string') {
    const file = normalizedPath(record.path);
    if (file !== undefined && file !== '.') {
      for (let directory = path.posix.dirname(file); ; directory = path.posix.dirname(directory)) {
        rules.push({ kind: 'path', tool, path: directory });
        if (directory === '.') break;
      }
    }
  }
  rules.push({ kind: 'tool', tool });
  return rules;
}

/** A rule in words, e.g. `run_command: commands that start with npm test`. */
export function describeRule(rule: ApprovalRule): string {
  const quoted = (words: string[]): string =>
    words.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word))).join(' ');
  switch (rule.kind) {
    case 'tool':
      return `${rule.tool}: every call`;
    case 'command':
      return `${rule.tool}: the command ${quoted(rule.words)}`;
    case 'prefix':
      return `${rule.tool}: commands that start with ${quoted(rule.words)}`;
    case 'path':
      return `${rule.tool}: writes ${rule.path === '.' ? 'anywhere in this workspace' : `under ${rule.path}/`}`;
  }
}
