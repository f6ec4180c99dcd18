/**
 * Builtin file tools (DESIGN §9): fs_read_file, fs_list_files, fs_create_file, fs_modify_file.
 * Paths are relative to the workspace root and never leave it, and never reach jp's own
 * directories (paths.ts). Reads are bounded in memory; writes are atomic (a temporary file in the
 * same directory, renamed or linked into place), so a kill at any instant leaves the old content or
 * the new one, never a mix; a modified file keeps its mode.
 */
import { createCreateFileTool } from './create-file-tool.ts';
import type { FileToolScope } from './file-tool-common.ts';
import { createListFilesTool } from './list-files-tool.ts';
import { createModifyFileTool } from './modify-file-tool.ts';
import { createReadFileTool } from './read-file-tool.ts';
import type { Tool } from './tool.ts';

/** The four file tools, kept out of `scope.protectedDirectories` and any `.jp/`. */
export function createFileTools(scope: FileToolScope): Tool[] {
  return [
    createReadFileTool(scope),
    createListFilesTool(scope),
    createCreateFileTool(scope),
    createModifyFileTool(scope),
  ];
}
