/**
 * Puts files of a directory back as a checkpoint holds them: each file with its exact bytes and
 * permission bits (a symbolic link as a link), each file the checkpoint does not hold removed, and
 * directories left empty by a removal removed too. Never writes through a symbolic link: a path
 * whose parent directory is a link, or is not a directory, is refused before anything is written.
 * A file is replaced whole (a temporary file renamed over it).
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { RunError } from '../errors.ts';
import type { CheckpointStore, TreeEntry } from './store.ts';

export interface RestoreTarget {
  /** Relative to the root. */
  path: string;
  /** The entry to write; undefined: the file must not exist. */
  entry: TreeEntry | undefined;
  /** Exact permission bits recorded for it (else git's 0644 or 0755). */
  mode: number | undefined;
}

export async function restoreFiles(
  store: CheckpointStore,
  root: string,
  targets: readonly RestoreTarget[],
): Promise<void> {
  const removals = targets.filter((target) => !target.entry).sort((a, b) => depth(b.path) - depth(a.path));
  const writes = targets.filter((target) => target.entry).sort((a, b) => depth(a.path) - depth(b.path));
  for (const target of removals) {
    const file = inside(root, target.path);
    assertParents(root, target.path);
    const stat = lstatSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isDirectory()) removeEmptyDirectory(file);
    else unlinkSync(file);
    removeEmptyParents(root, path.dirname(file));
  }
  for (const target of writes) {
    const entry = target.entry!;
    const file = inside(root, target.path);
    makeParents(root, target.path);
    const existing = lstatSync(file, { throwIfNoEntry: false });
    if (existing?.isDirectory()) removeEmptyDirectory(file);
    const temporary = path.join(
      path.dirname(file),
      `.${path.basename(file)}.jp-undo-${randomBytes(4).toString('hex')}`,
    );
    const content = await store.blob(entry.object);
    try {
      if (entry.gitMode === '120000') symlinkSync(content.toString('utf8'), temporary);
      else {
        const mode = target.mode ?? (entry.gitMode === '100755' ? 0o755 : 0o644);
        writeFileSync(temporary, content, { mode, flag: 'wx' });
        chmodSync(temporary, mode);
      }
      renameSync(temporary, file);
    } catch (error) {
      try {
        unlinkSync(temporary);
      } catch {
        // not made
      }
      throw error;
    }
  }
}

function depth(file: string): number {
  return file.split('/').length;
}

/** The absolute path of a root-relative path; one that leaves the root is refused. */
function inside(root: string, relative: string): string {
  const file = path.resolve(root, relative);
  const back = path.relative(root, file);
  if (back === '' || back.startsWith('..') || path.isAbsolute(back))
    throw new RunError('undo_path_outside', `refusing to restore ${relative}: it is not inside ${root}`);
  return file;
}

/** Every parent of the path under the root is a real directory or does not exist (then nothing below it does). */
function assertParents(root: string, relative: string): void {
  let directory = root;
  for (const part of relative.split('/').slice(0, -1)) {
    directory = path.join(directory, part);
    const stat = lstatSync(directory, { throwIfNoEntry: false });
    if (!stat) return;
    if (!stat.isDirectory()) throw refusedParent(directory, relative, stat.isSymbolicLink());
  }
}

/** Makes the parents of the path that are missing; refuses one that is a link or not a directory. */
function makeParents(root: string, relative: string): void {
  let directory = root;
  for (const part of relative.split('/').slice(0, -1)) {
    directory = path.join(directory, part);
    const stat = lstatSync(directory, { throwIfNoEntry: false });
    if (!stat) mkdirSync(directory, { mode: 0o755 });
    else if (!stat.isDirectory()) throw refusedParent(directory, relative, stat.isSymbolicLink());
  }
}

function refusedParent(directory: string, relative: string, link: boolean): RunError {
  return new RunError(
    'undo_blocked',
    `cannot restore ${relative}: ${directory} is ${link ? 'a symbolic link' : 'not a directory'} now, and undo never ` +
      `writes through ${link ? 'a link' : 'it'}`,
    { hint: `Move ${directory} away, then run the undo again.` },
  );
}

function removeEmptyDirectory(directory: string): void {
  if (readdirSync(directory).length > 0)
    throw new RunError('undo_blocked', `cannot restore ${directory}: a directory with files is in its place`, {
      hint: `Move ${directory} away, then run the undo again.`,
    });
  rmdirSync(directory);
}

function removeEmptyParents(root: string, directory: string): void {
  let current = directory;
  while (current !== root && current.startsWith(root + path.sep)) {
    try {
      if (readdirSync(current).length > 0) return;
      rmdirSync(current);
    } catch {
      return;
    }
    current = path.dirname(current);
  }
}
