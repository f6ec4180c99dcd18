/**
 * Where a query server listens: `processes/<cid>.sock`, mode 0600 in a 0700 directory owned by the
 * user. Unix socket paths are limited to about 107 bytes; a longer path falls back to a short
 * per-user runtime directory (`$XDG_RUNTIME_DIR/jp`, else `/tmp/jp-<uid>`), checked the same way.
 */
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { assertSafeDirectory } from '../workspace/files.ts';

/** sun_path is 108 bytes on Linux (104 on macOS), including the terminating NUL. */
const maxSocketPathBytes = 100;

export function socketPathFor(processesDirectory: string, conversationId: string, workspaceId: string, environment: NodeJS.ProcessEnv): string {
  const preferred = path.join(processesDirectory, `${conversationId}.sock`);
  if (Buffer.byteLength(preferred) <= maxSocketPathBytes) return preferred;
  const runtime = environment.XDG_RUNTIME_DIR ? path.join(environment.XDG_RUNTIME_DIR, 'jp') : path.join(os.tmpdir(), `jp-${process.getuid?.() ?? 'user'}`);
  const short = createHash('sha256').update(`${workspaceId}/${conversationId}`).digest('hex').slice(0, 16);
  return path.join(runtime, `${short}.sock`);
}

/** Creates the socket's directory if needed and refuses an unsafe one (the tmux rule). */
export function prepareSocketDirectory(socketPath: string): void {
  const directory = path.dirname(socketPath);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  assertSafeDirectory(directory);
}
