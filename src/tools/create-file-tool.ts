/**
 * fs_create_file: a new file of the workspace with the given content, never group- or
 * world-writable; it fails when the file exists. The file appears whole or not at all (a synced
 * temporary linked into place, atomic-write.ts), or is written by the user's editor when it has one.
 */
import { existsSync, linkSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { counted } from '../plural.ts';
import { unlinkQuietly, writeTemporary } from './atomic-write.ts';
import { gitWriteEscalation, guard, pathDescription, type FileToolScope } from './file-tool-common.ts';
import { resolveForFileTool } from './paths.ts';
import { defineTool, type Tool } from './tool.ts';

export function createCreateFileTool(scope: FileToolScope): Tool {
  return defineTool({
    name: 'fs_create_file',
    description:
      'Create a new file in the workspace with the given content. Fails if the file exists (use fs_modify_file).',
    schema: z.strictObject({
      path: z.string().check(z.describe(pathDescription)),
      content: z.string().check(z.describe('The whole content of the new file')),
    }),
    sideEffects: true,
    escalation: ({ path: requested }, toolRoot) => gitWriteEscalation(toolRoot, requested),
    writesFile: ({ path: requested }) => requested,
    execute: ({ path: requested, content }, context) =>
      guard(requested, async () => {
        const file = resolveForFileTool(context.toolRoot, requested, scope.protectedDirectories);
        // Never group- or world-writable, whatever the umask (DESIGN §10).
        mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
        const editor = context.editorFiles?.write;
        if (editor) {
          if (existsSync(file))
            return { kind: 'error', message: `${requested} already exists; use fs_modify_file to change it` };
          await editor(file, content);
          return {
            kind: 'success',
            content: `created ${requested} (${counted(Buffer.byteLength(content), 'byte')}) in the user's editor`,
          };
        }
        const temporary = writeTemporary(file, content, 0o644, false);
        try {
          // link() fails if the file exists: it appears whole, or not at all.
          linkSync(temporary, file);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
            return { kind: 'error', message: `${requested} already exists; use fs_modify_file to change it` };
          }
          throw error;
        } finally {
          unlinkQuietly(temporary);
        }
        return { kind: 'success', content: `created ${requested} (${counted(Buffer.byteLength(content), 'byte')})` };
      }),
  });
}
