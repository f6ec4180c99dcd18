/**
 * Where a query server listens: `processes/<cid>.sock`, mode 0600 in a 0700 directory owned by the
 * user. Unix socket paths are limited to about 107 bytes; a longer path falls back to a short
 * per-user runtime directory (`$XDG_RUNTIME_DIR/jp`, else `/tmp/jp-<uid>`), checked the same way;
 * one another user owns is skipped for a private directory of our own (prepareSocketDirectory).
 */
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { socketRuntimeDirectory } from '../config/paths.ts';
import { assertSafeDirectory, makeDirectories } from '../workspace/files.ts';

/** sun_path is 108 bytes on Linux (104 on macOS), including the terminating NUL. */
const maxSocketPathBytes = 100;

export function socketPathFor(
  processesDirectory: string,
  conversationId: string,
  workspaceId: string,
  environment: NodeJS.ProcessEnv,
): string {
  const preferred = path.join(processesDirectory, `${conversationId}.sock`);
  if (Buffer.byteLength(preferred) <= maxSocketPathBytes) return preferred;
  const runtime = socketRuntimeDirectory(environment);
  const short = createHash('sha256').update(`${workspaceId}/${conversationId}`).digest('hex').slice(0, 16);
  return path.join(runtime, `${short}.sock`);
}

/**
 * Creates the socket's directory if needed and refuses an unsafe one (the tmux rule); returns the
 * socket path to listen on. The shared runtime directory (`/tmp/jp-<uid>`) is one another user can
 * make first: then a fresh private directory of our own is used instead, never a dead end (the path
 * is reported to the client and kept in the registry entry, so it need not be predictable).
 */
export function prepareSocketDirectory(socketPath: string, processesDirectory: string): string {
  const directory = path.dirname(socketPath);
  makeDirectories(directory, 0o700);
  try {
    assertSafeDirectory(directory);
    return socketPath;
  } catch (error) {
    if (directory === processesDirectory) throw error;
    // Next to the taken one (the same temporary or runtime directory), under a name no one can guess.
    const own = mkdtempSync(path.join(path.dirname(directory), `jp-${process.getuid?.() ?? 'user'}-`));
    assertSafeDirectory(own);
    return path.join(own, path.basename(socketPath));
  }
}
