/**
 * Atomic writes of the file tools: the new content goes to a synced temporary next to the file
 * (hidden, named after it and after jp's process), which is then renamed or linked into place by the
 * caller, so a kill at any instant leaves the old content or the new one, never a mix. Temporaries
 * a killed jp left behind are removed once their process is gone.
 */
import { processExists } from '../workspace/process-identity.ts';
import { closeSync, constants, fchmodSync, fsyncSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { writeAll } from '../workspace/files.ts';

/** A fresh name for a temporary next to `file`, hidden, named after it. */
function temporaryNextTo(file: string): string {
  return path.join(
    path.dirname(file),
    `.${path.basename(file)}.jp-${process.pid}-${Math.random().toString(36).slice(2, 8)}.tmp`,
  );
}

/** Removes temporaries of `file` that a killed jp left next to it (their process is gone). */
export function removeAbandonedTemporaries(file: string): void {
  const prefix = `.${path.basename(file)}.jp-`;
  let names: string[];
  try {
    names = readdirSync(path.dirname(file));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || processExists(pid)) continue;
    unlinkQuietly(path.join(path.dirname(file), name));
  }
}

/**
 * Writes `content` to a new temporary next to `file`, synced; returns its name. Its mode is `mode`
 * less the umask, or exactly `mode` when `exact` (a modified file keeps the mode it had).
 */
export function writeTemporary(file: string, content: string, mode: number, exact: boolean): string {
  const temporary = temporaryNextTo(file);
  const fd = openSync(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    exact ? 0o600 : mode,
  );
  try {
    if (exact) fchmodSync(fd, mode);
    writeAll(fd, Buffer.from(content, 'utf8'));
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkQuietly(temporary);
    throw error;
  }
  closeSync(fd);
  return temporary;
}

export function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
