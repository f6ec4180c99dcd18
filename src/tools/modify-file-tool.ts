/**
 * fs_modify_file: a regular file of the workspace changed by exact replacements (exact-edits.ts),
 * one (old_string, new_string) or several (edits), all or nothing. The file is replaced atomically
 * (a synced temporary renamed into place, atomic-write.ts) and keeps its mode; a file the user's
 * editor has open is changed in the editor's buffer instead.
 */
import { accessSync, closeSync, constants, fstatSync, openSync, readFileSync, renameSync, type Stats } from 'node:fs';
import * as z from 'zod/mini';
import { describeFileType } from '../workspace/files.ts';
import { counted } from '../plural.ts';
import { removeAbandonedTemporaries, unlinkQuietly, writeTemporary } from './atomic-write.ts';
import { applyEdits, editSchema } from './exact-edits.ts';
import { editorMayOpen, gitWriteEscalation, guard, pathDescription, type FileToolScope } from './file-tool-common.ts';
import { resolveForFileTool } from './paths.ts';
import { defineTool, type Tool } from './tool.ts';

export function createModifyFileTool(scope: FileToolScope): Tool {
  return defineTool({
    name: 'fs_modify_file',
    description:
      'Change a file of the workspace by exact replacement: {path, old_string, new_string} replaces the one ' +
      'occurrence of old_string; {path, edits: [{old_string, new_string, replace_all?}, ...]} applies several ' +
      'replacements in order, all or nothing.',
    schema: z.strictObject({
      path: z.string().check(z.describe(pathDescription)),
      old_string: z.optional(
        z.string().check(z.describe('Exact text to replace; must occur exactly once (with new_string; or use edits)')),
      ),
      new_string: z.optional(z.string().check(z.describe('Replacement text (with old_string)'))),
      edits: z.optional(
        z.array(editSchema).check(z.minLength(1), z.describe('Several replacements, applied in order, all or nothing')),
      ),
    }),
    sideEffects: true,
    escalation: ({ path: requested }, toolRoot) => gitWriteEscalation(toolRoot, requested),
    writesFile: ({ path: requested }) => requested,
    execute: ({ path: requested, old_string: oldString, new_string: newString, edits }, context) =>
      guard(requested, async () => {
        const single = oldString !== undefined || newString !== undefined;
        if (single === (edits !== undefined) || (single && (oldString === undefined || newString === undefined))) {
          return {
            kind: 'error',
            message:
              'give either old_string and new_string, or edits: [{old_string, new_string, replace_all?}, ...], not ' +
              'both',
          };
        }
        const file = resolveForFileTool(context.toolRoot, requested, scope.protectedDirectories);
        const replacements = edits ?? [{ old_string: oldString!, new_string: newString! }];
        // The user's editor, when it has the file and can write it: its buffer is what is changed.
        const inEditor =
          context.editorFiles?.write && editorMayOpen(file) ? await context.editorFiles.read?.(file) : undefined;
        if (inEditor !== undefined) {
          const applied = applyEdits(inEditor, replacements, requested);
          if (!applied.ok) return { kind: 'error', message: applied.message };
          await context.editorFiles!.write!(file, applied.content);
          return { kind: 'success', content: `modified ${requested} in the user's editor` };
        }
        // Replacing the file by rename needs only the directory's permission: ask the file's own.
        accessSync(file, constants.W_OK);
        const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
        let content: string;
        let stat: Stats;
        try {
          stat = fstatSync(fd);
          if (!stat.isFile())
            return {
              kind: 'error',
              message: `${requested} is ${describeFileType(stat)}; fs_modify_file changes regular files only`,
            };
          content = readFileSync(fd, 'utf8');
        } finally {
          closeSync(fd);
        }
        const applied = applyEdits(content, replacements, requested);
        if (!applied.ok) return { kind: 'error', message: applied.message };
        removeAbandonedTemporaries(file);
        const temporary = writeTemporary(file, applied.content, stat.mode & 0o7777, true);
        try {
          renameSync(temporary, file);
        } catch (error) {
          unlinkQuietly(temporary);
          throw error;
        }
        return {
          kind: 'success',
          content:
            edits === undefined
              ? `modified ${requested}`
              : `modified ${requested}: ${counted(edits.length, 'edit')}, ${counted(applied.replaced, 'replacement')}`,
        };
      }),
  });
}
