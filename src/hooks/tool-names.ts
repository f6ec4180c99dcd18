/**
 * jp's tools as the common hook contract names them, so that a script written for it works
 * unchanged: the shell tool is `Bash` (as Codex names its own), the file tools `Write`, `Edit` and
 * `Read`, and a file tool's input carries the contract's absolute `file_path` beside jp's `path`.
 * MCP tools already have the contract's names (`mcp__<server>__<tool>`). A matcher matches the
 * common name or jp's own.
 */
import path from 'node:path';

const commonNames: Readonly<Record<string, string>> = {
  run_command: 'Bash',
  fs_create_file: 'Write',
  fs_modify_file: 'Edit',
  fs_read_file: 'Read',
};

/** The name a hook is given in `tool_name`: the common one when jp's tool has one, else jp's own. */
export function commonToolName(tool: string): string {
  return commonNames[tool] ?? tool;
}

export function matchesTool(matcher: RegExp | undefined, tool: string): boolean {
  return matcher === undefined || matcher.test(tool) || matcher.test(commonToolName(tool));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `tool_input`: jp's arguments, and for a file tool the absolute `file_path` of its `path`. */
export function commonToolInput(tool: string, argumentsValue: unknown, toolRoot: string): unknown {
  if (!isRecord(argumentsValue) || !(tool in commonNames) || typeof argumentsValue.path !== 'string')
    return argumentsValue;
  return { ...argumentsValue, file_path: path.resolve(toolRoot, argumentsValue.path) };
}

/**
 * A hook's `updatedInput` in jp's shape. It replaces the input whole, as in the common contract; a
 * file tool's `file_path` becomes its `path` when the hook changed it (or gave no `path`), and the
 * field jp added is dropped.
 */
export function jpArguments(tool: string, updated: unknown, original: unknown, toolRoot: string): unknown {
  if (!isRecord(updated) || !(tool in commonNames) || !('file_path' in updated)) return updated;
  const { file_path: given, ...rest } = updated;
  const before = isRecord(original) && typeof original.path === 'string' ? path.resolve(toolRoot, original.path) : '';
  if (typeof given === 'string' && (given !== before || rest.path === undefined)) rest.path = given;
  return rest;
}
