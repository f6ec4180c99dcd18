/**
 * What the file tools (file-tools.ts) share: their scope (the directories they never touch), the
 * description of their `path` parameter, how a failure reads to the model (guard: an error result
 * naming the path, never a throw), and whether the user's editor may be asked to open a path.
 */
import { statSync } from 'node:fs';
import { isDiskFull } from '../errors.ts';
import type { EscalationNeed } from '../inquiry/types.ts';
import { gitExecutedWrite, PathOutsideRootError, ProtectedPathError } from './paths.ts';
import type { ToolResult } from './tool.ts';

export interface FileToolScope {
  /** Directories file tools never read or change besides any `.jp/`: the user's jp config directory, jp's data. */
  protectedDirectories: readonly string[];
}

export async function guard(requested: string, run: () => ToolResult | Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof PathOutsideRootError || error instanceof ProtectedPathError)
      return { kind: 'error', message: error.message };
    const code = (error as NodeJS.ErrnoException).code;
    if (isDiskFull(error))
      return { kind: 'error', message: `disk full while writing ${requested}; nothing was changed` };
    const explanation =
      code === 'ENOENT'
        ? 'no such file or directory'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES' || code === 'EPERM'
            ? 'permission denied'
            : (error as Error).message;
    return { kind: 'error', message: `${requested}: ${explanation}` };
  }
}

/**
 * A write inside `.git/` (or of a `.git` file) is asked of a human, whatever the `run` policy (paths.ts
 * gitExecutedWrite).
 */
export function gitWriteEscalation(
  toolRoot: string,
  requested: string,
): { needs: EscalationNeed; justification: string } | undefined {
  const justification = gitExecutedWrite(toolRoot, requested);
  return justification === undefined ? undefined : { needs: 'git', justification };
}

export const pathDescription = 'Path relative to the workspace root';

/**
 * A path the editor may be asked to open: a regular file, or nothing yet (a FIFO or device is refused by the disk path,
 * never handed to the editor).
 */
export function editorMayOpen(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return true;
  }
}
