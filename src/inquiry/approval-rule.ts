/**
 * A lasting approval's rule (DESIGN §10, the user's side): what a person chose at a permission
 * prompt, "always in this workspace", as it crosses the wire in their answer and lies in the store.
 * Plain data: what it covers and how it is kept are approvals/ (rules.ts, store.ts).
 *
 * - `tool`: every call of the tool.
 * - `command`: run_command with exactly these words, as the shell will run them.
 * - `prefix`: run_command whose words start with these (`npm test` covers `npm test -- --watch`).
 * - `path`: a file tool writing under this directory of the workspace (`.`: anywhere in it).
 */
export type ApprovalRule =
  | { kind: 'tool'; tool: string }
  | { kind: 'command'; tool: string; words: string[] }
  | { kind: 'prefix'; tool: string; words: string[] }
  | { kind: 'path'; tool: string; path: string };

/** The tools whose commands a command or prefix rule covers, and the file tools a path rule covers. */
export const commandTools: readonly string[] = ['run_command'];
export const writingTools: readonly string[] = ['fs_create_file', 'fs_modify_file'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A workspace-relative path in one form (`.`, `src/lib`): `/` separators, no `.` or empty parts,
 * no trailing slash; undefined when it is absolute or leaves the workspace (`..`).
 */
export function workspacePath(relative: string): string | undefined {
  const text = relative.replace(/\\/g, '/');
  if (text.startsWith('/') || /^[A-Za-z]:/.test(text)) return undefined;
  const parts: string[] = [];
  for (const part of text.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.length === 0 ? '.' : parts.join('/');
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
      const where = typeof value.path === 'string' ? workspacePath(value.path) : undefined;
      return writingTools.includes(value.tool) && where !== undefined
        ? { kind: 'path', tool: value.tool, path: where }
        : undefined;
    }
    default:
      return undefined;
  }
}
