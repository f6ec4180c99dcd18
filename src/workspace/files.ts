/**
 * File helpers with the guarantees DESIGN §6 asks for: whole-file writes are atomic (temp file,
 * fsync, rename), user-local state is private (directories 0700, files 0600, whatever the umask).
 */
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync, chmodSync } from 'node:fs';
import { RunError } from '../errors.ts';

/** Writes `content` to `file` atomically; readers see the old or the new content, never a mix. */
export function writeFileAtomic(file: string, content: string, mode = 0o600): void {
  const temporary = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const fd = openSync(temporary, 'w', mode);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, file);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // the rename error below is the one worth reporting
    }
    throw error;
  }
}

/** Creates a directory (and parents) with mode 0700, fixing the mode of the last one if needed. */
export function ensurePrivateDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const stat = lstatSync(directory);
  if ((stat.mode & 0o777) !== 0o700 && stat.uid === process.getuid?.()) chmodSync(directory, 0o700);
}

/**
 * Refuses a directory that others could use to tamper with our sockets: it must be a real
 * directory (not a symlink), owned by us, with no group or other permissions (the tmux rule).
 */
export function assertSafeDirectory(directory: string): void {
  const stat = lstatSync(directory);
  const uid = process.getuid?.();
  const problems: string[] = [];
  if (!stat.isDirectory()) problems.push('it is not a directory');
  if (uid !== undefined && stat.uid !== uid) problems.push(`it is owned by uid ${stat.uid}, not ${uid}`);
  if ((stat.mode & 0o077) !== 0) problems.push(`its mode is ${(stat.mode & 0o777).toString(8)}, readable or writable by others`);
  if (problems.length > 0) {
    throw new RunError('unsafe_directory', `refusing to use ${directory}: ${problems.join('; ')}`, {
      hint: `Run \`chmod 700 ${directory}\` if it is yours, or remove it so jp can create it safely.`,
    });
  }
}
