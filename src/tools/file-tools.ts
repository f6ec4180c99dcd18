/**
 * Builtin file tools (DESIGN §9): fs_read_file, fs_list_files, fs_create_file, fs_modify_file.
 * Paths are relative to the workspace root and never leave it.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { displayPath, PathOutsideRootError, resolveInsideRoot } from './paths.ts';
import { defineTool, type Tool, type ToolResult } from './tool.ts';

function guard(run: () => ToolResult): Promise<ToolResult> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    if (error instanceof PathOutsideRootError) return Promise.resolve({ kind: 'error', message: error.message });
    const code = (error as NodeJS.ErrnoException).code;
    const message = (error as Error).message;
    const explanation =
      code === 'ENOENT' ? 'no such file or directory' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : message;
    return Promise.resolve({ kind: 'error', message: explanation });
  }
}

const pathDescription = 'Path relative to the workspace root';

export const readFileTool: Tool = defineTool({
  name: 'fs_read_file',
  description: 'Read a UTF-8 text file of the workspace.',
  schema: z.strictObject({ path: z.string().check(z.describe(pathDescription)) }),
  sideEffects: false,
  execute: ({ path: requested }, context) =>
    guard(() => {
      const file = resolveInsideRoot(context.toolRoot, requested);
      const content = readFileSync(file);
      if (content.includes(0)) return { kind: 'error', message: `${requested} looks like a binary file; only text files can be read` };
      return { kind: 'success', content: content.toString('utf8') };
    }),
});

const skippedDirectories = new Set(['.git', 'node_modules', '.jp']);
const maxListedEntries = 2000;

/** `*` matches within a path segment, `**` across segments, `?` one character. */
export function globToRegExp(pattern: string): RegExp {
  let source = '';
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index]!;
    if (character === '*') {
      if (pattern[index + 1] === '*') {
        index++;
        if (pattern[index + 1] === '/') {
          index++;
          source += '(?:.*/)?';
        } else source += '.*';
      } else source += '[^/]*';
    } else if (character === '?') source += '[^/]';
    else source += character.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

export const listFilesTool: Tool = defineTool({
  name: 'fs_list_files',
  description: 'List files under a directory of the workspace (recursively), optionally filtered by a glob pattern such as "**/*.ts".',
  schema: z.strictObject({
    path: z.optional(z.string().check(z.describe(`${pathDescription}; default: the root`))),
    pattern: z.optional(z.string().check(z.describe('Glob matched against paths relative to `path`'))),
  }),
  sideEffects: false,
  execute: ({ path: requested, pattern }, context) =>
    guard(() => {
      const base = resolveInsideRoot(context.toolRoot, requested ?? '.');
      const matcher = pattern ? globToRegExp(pattern) : undefined;
      const found: string[] = [];
      let truncated = false;
      const walk = (directory: string): void => {
        for (const entry of readdirSync(directory, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
          if (found.length >= maxListedEntries) {
            truncated = true;
            return;
          }
          const absolute = path.join(directory, entry.name);
          const relative = path.relative(base, absolute);
          if (entry.isDirectory()) {
            if (!skippedDirectories.has(entry.name)) walk(absolute);
          } else if (!matcher || matcher.test(relative)) {
            found.push(relative);
          }
        }
      };
      if (!statSync(base).isDirectory()) return { kind: 'error', message: `${requested} is not a directory` };
      walk(base);
      const header = `${found.length} file(s) under ${displayPath(context.toolRoot, base)}${truncated ? ` (stopped at ${maxListedEntries})` : ''}`;
      return { kind: 'success', content: [header, ...found].join('\n') };
    }),
});

export const createFileTool: Tool = defineTool({
  name: 'fs_create_file',
  description: 'Create a new file in the workspace with the given content. Fails if the file exists (use fs_modify_file).',
  schema: z.strictObject({
    path: z.string().check(z.describe(pathDescription)),
    content: z.string().check(z.describe('The whole content of the new file')),
  }),
  sideEffects: true,
  execute: ({ path: requested, content }, context) =>
    guard(() => {
      const file = resolveInsideRoot(context.toolRoot, requested);
      mkdirSync(path.dirname(file), { recursive: true });
      try {
        writeFileSync(file, content, { flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
          return { kind: 'error', message: `${requested} already exists; use fs_modify_file to change it` };
        }
        throw error;
      }
      return { kind: 'success', content: `created ${requested} (${Buffer.byteLength(content)} bytes)` };
    }),
});

export const modifyFileTool: Tool = defineTool({
  name: 'fs_modify_file',
  description: 'Replace one exact occurrence of old_string with new_string in a file of the workspace.',
  schema: z.strictObject({
    path: z.string().check(z.describe(pathDescription)),
    old_string: z.string().check(z.describe('Exact text to replace; must occur exactly once')),
    new_string: z.string().check(z.describe('Replacement text')),
  }),
  sideEffects: true,
  execute: ({ path: requested, old_string: oldString, new_string: newString }, context) =>
    guard(() => {
      const file = resolveInsideRoot(context.toolRoot, requested);
      const content = readFileSync(file, 'utf8');
      if (oldString === '') return { kind: 'error', message: 'old_string is empty; give the exact text to replace' };
      const first = content.indexOf(oldString);
      if (first === -1) return { kind: 'error', message: `old_string was not found in ${requested}` };
      if (content.indexOf(oldString, first + 1) !== -1) {
        return { kind: 'error', message: `old_string occurs more than once in ${requested}; include more context to make it unique` };
      }
      writeFileSync(file, content.slice(0, first) + newString + content.slice(first + oldString.length));
      return { kind: 'success', content: `modified ${requested}` };
    }),
});
