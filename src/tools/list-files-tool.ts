/**
 * fs_list_files: the files under a directory of the workspace, recursively, optionally filtered by
 * a glob; .git, node_modules and .jp are skipped, and what a pattern could reach outside the root
 * or in jp's own directories is left out. At most 2000 are listed, with how many there are.
 */
import path from 'node:path';
import * as z from 'zod/mini';
import { counted } from '../plural.ts';
import { guard, pathDescription, type FileToolScope } from './file-tool-common.ts';
import { confinement, displayPath, resolveForFileTool } from './paths.ts';
import { defineTool, type Tool } from './tool.ts';

const ignoredDirectories = ['**/.git/**', '**/node_modules/**', '**/.jp/**'];
const maxListedEntries = 2000;

export function createListFilesTool(scope: FileToolScope): Tool {
  return defineTool({
    name: 'fs_list_files',
    description:
      'List files under a directory of the workspace (recursively), optionally filtered by a glob pattern such as ' +
      '"**/*.{ts,tsx}" or "src/[ab].ts". .git, node_modules and .jp are skipped.',
    schema: z.strictObject({
      path: z.optional(z.string().check(z.describe(`${pathDescription}; default: the root`))),
      pattern: z.optional(
        z.string().check(z.describe('Glob matched against paths relative to `path` (*, **, ?, [abc], {a,b})')),
      ),
    }),
    sideEffects: false,
    readOnly: true,
    execute: ({ path: requested, pattern }, context) =>
      guard(requested ?? '.', async () => {
        const base = resolveForFileTool(context.toolRoot, requested ?? '.', scope.protectedDirectories);
        if (pattern !== undefined && (path.isAbsolute(pattern) || /(^|[/{,])\.\.($|[/},])/.test(pattern))) {
          return {
            kind: 'error',
            message:
              `pattern ${JSON.stringify(pattern)} must be relative to the listed directory and stay inside it ` +
              `(no leading / and no ..)`,
          };
        }
        const { glob } = await import('tinyglobby');
        const matches = await glob(pattern ?? '**', {
          cwd: base,
          onlyFiles: true,
          dot: true,
          followSymbolicLinks: false,
          expandDirectories: false,
          ignore: ignoredDirectories,
          signal: context.signal,
        });
        // What a pattern could still reach (through braces, say) outside the root or in jp's directories is left out.
        const limits = confinement(context.toolRoot, scope.protectedDirectories);
        const found = matches.filter((relative) => limits.refusal(path.resolve(base, relative)) === undefined).sort();
        const shown = found.slice(0, maxListedEntries);
        const showing = found.length > shown.length ? ` (showing the first ${maxListedEntries})` : '';
        const header = `${counted(found.length, 'file')} under ${displayPath(context.toolRoot, base)}${showing}`;
        return { kind: 'success', content: [header, ...shown].join('\n') };
      }),
  });
}
