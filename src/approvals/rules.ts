/**
 * What a lasting approval's rule (inquiry/approval-rule.ts) covers. Pure: no I/O. A rule covers
 * running a tool, never leaving the sandbox (an escalation is always asked).
 *
 * A command is matched on its words, parsed by a real shell-words parser (shell-quote), and only a
 * simple command has words: one with an operator (`;`, `&&`, `|`, a redirection), an expansion
 * (`$`, a backquote, a glob, `~`, braces), a backslash, a newline or a comment has none, so no
 * command or prefix rule ever covers `npm test; rm -rf ~`.
 */
import { parse } from 'shell-quote';
import { type ApprovalRule, commandTools, workspacePath, writingTools } from '../inquiry/approval-rule.ts';

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
      const where = file === undefined ? undefined : workspacePath(file);
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
    const file = workspacePath(record.path);
    if (file !== undefined && file !== '.') {
      const parts = file.split('/');
      for (let length = parts.length - 1; length >= 0; length--)
        rules.push({ kind: 'path', tool, path: length === 0 ? '.' : parts.slice(0, length).join('/') });
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
