/**
 * File helpers with the guarantees DESIGN §6 and §10 ask for: whole-file writes are atomic (temp
 * file, fsync, rename) and leave no temporary behind, even on a full disk; files jp keeps are opened
 * without following a symlink and without blocking on a FIFO, and anything but a regular file is
 * reported as damage, never read through or written through; user-local state is private
 * (directories 0700, files 0600, whatever the umask).
 */
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import path from 'node:path';
import { asDiskFull, ConfigError, DamagedFileError, RunError } from '../errors.ts';
import { assertOwnFile } from './ownership.ts';

/** Added to every open of a file jp keeps: never follow a final symlink, never wait on a FIFO. */
const safeFlags = constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** "a directory", "a FIFO"...: what a non-regular file is, for messages. */
export function describeFileType(stat: Stats): string {
  if (stat.isFile()) return 'a file';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return 'not a regular file';
}

/**
 * Opens a file jp keeps with `flags` (O_RDONLY, or O_RDWR|O_CREAT|O_APPEND...), refusing a symlink,
 * anything but a regular file, and a file another user owns or could write (ownership.ts) with
 * DamagedFileError. Returns undefined when it does not exist
 * (and `flags` does not create it).
 */
export function openRegularFile(file: string, flags: number, mode = 0o600): number | undefined {
  let fd: number;
  try {
    fd = openSync(file, flags | safeFlags, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' || code === 'EMLINK') {
      throw new DamagedFileError(file, 'is a symbolic link, not a regular file', {
        hint:
          'jp never follows a symbolic link for its own files, and left this one untouched. Move it away (or put ' +
          'the file itself there), then run again.',
        cause: error,
      });
    }
    if (code === 'EISDIR') throw new DamagedFileError(file, 'is a directory, not a file', { cause: error });
    if (code === 'ENXIO')
      throw new DamagedFileError(file, 'is a FIFO or a device, not a regular file', { cause: error });
    if (code === 'ENOTDIR')
      throw new DamagedFileError(file, 'cannot be opened: a part of its path is not a directory', { cause: error });
    throw asDiskFull(error, file);
  }
  let stat: Stats;
  try {
    stat = fstatSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (!stat.isFile()) {
    closeSync(fd);
    throw new DamagedFileError(file, `is ${describeFileType(stat)}, not a regular file`);
  }
  try {
    assertOwnFile(file, stat);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/**
 * The content of a file jp keeps, or undefined when it does not exist; see openRegularFile. With
 * `limitBytes`, a larger file is damage too (a small record that grew is not one jp wrote).
 */
export function readRegularFile(file: string, limitBytes?: number): Buffer | undefined {
  const fd = openRegularFile(file, constants.O_RDONLY);
  if (fd === undefined) return undefined;
  try {
    if (limitBytes !== undefined) {
      const content = readAtMost(fd, limitBytes + 1);
      if (content.length > limitBytes)
        throw new DamagedFileError(file, `is larger than ${limitBytes} bytes, more than jp ever writes there`);
      return content;
    }
    return readFileSync(fd);
  } catch (error) {
    throw new DamagedFileError(
      file,
      `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      { cause: error },
    );
  } finally {
    closeSync(fd);
  }
}

/** Reads from `fd` until its end or `limit` bytes, whichever comes first. */
export function readAtMost(fd: number, limit: number): Buffer {
  const buffer = Buffer.alloc(Math.min(limit, 64 * 1024));
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < limit) {
    const count = readSync(fd, buffer, 0, Math.min(buffer.length, limit - total), null);
    if (count === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, count)));
    total += count;
  }
  return Buffer.concat(chunks);
}

/** The most a config file may hold: far more than any real one, little enough to read at once. */
export const configFileLimitBytes = 1024 * 1024;

/**
 * The text of a config file (`.jp/config.toml`, the user's config), or undefined when there is
 * none. It may be a symbolic link (dotfiles), but only to a regular file of at most
 * configFileLimitBytes: a FIFO, a device (`/dev/zero`, `/dev/urandom`), a directory or a larger
 * file is a ConfigError naming it (exit 2), found without blocking (O_NONBLOCK, then fstat) and
 * without reading more than the limit.
 */
export function readConfigFile(file: string): string | undefined {
  const hint = 'Put a regular TOML file there (or remove it).';
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'EISDIR')
      throw new ConfigError(`cannot read config file ${file}: it is a directory, not a file`, { hint, cause: error });
    throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message}`, {
      hint: 'Check the file permissions, or move the file away.',
      cause: error,
    });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile())
      throw new ConfigError(`cannot read config file ${file}: it is ${describeFileType(stat)}, not a regular file`, {
        hint,
      });
    const content = readAtMost(fd, configFileLimitBytes + 1);
    if (content.length > configFileLimitBytes) {
      throw new ConfigError(
        `cannot read config file ${file}: it is larger than ${configFileLimitBytes / 1024 / 1024} MiB, the most a ` +
          `config file may be`,
        { hint },
      );
    }
    return content.toString('utf8');
  } catch (error) {
    if (ConfigError.isInstance(error)) throw error;
    throw new ConfigError(`cannot read config file ${file}: ${(error as Error).message}`, {
      hint: 'Check the file, or move it away.',
      cause: error,
    });
  } finally {
    closeSync(fd);
  }
}

/** Writes all of `content` at the file's current position (or its end, with O_APPEND). */
export function writeAll(fd: number, content: Buffer): void {
  let written = 0;
  while (written < content.length) written += writeSync(fd, content, written);
}

/** A fresh name next to `file` for a temporary copy. */
export function temporaryNameFor(file: string, label = 'tmp'): string {
  return `${file}.${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Writes `content` to `file` atomically; readers see the old or the new content, never a mix. The
 * temporary is created exclusively (never through a planted symlink) and removed on any failure; a
 * full disk is reported as DiskFullError naming `file`.
 */
export function writeFileAtomic(file: string, content: string | Buffer, mode = 0o600): void {
  const temporary = temporaryNameFor(file);
  try {
    const fd = openSync(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      mode,
    );
    try {
      writeAll(fd, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
  } catch (error) {
    removeQuietly(temporary);
    throw asDiskFull(error, file);
  }
}

/** Removes a file if it is there; never throws. */
export function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone, or never created
  }
}

/**
 * `mkdir -p` with `mode`. A failure is the real one of the first directory that could not be made
 * (EROFS, EACCES, ENOSPC...), with its path: Node's recursive mkdir says ENOENT of the last one when
 * a missing parent could not be created, which names neither the cause nor the place.
 */
export function makeDirectories(directory: string, mode: number): void {
  try {
    mkdirSync(directory, { recursive: true, mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const missing: string[] = [];
    for (let current = directory; !existsSync(current); current = path.dirname(current)) {
      missing.unshift(current);
      if (path.dirname(current) === current) break;
    }
    for (const one of missing) mkdirSync(one, { mode });
    throw error;
  }
}

/** Creates a directory (and parents) with mode 0700, fixing the mode of the last one if needed. */
export function ensurePrivateDirectory(directory: string): void {
  makeDirectories(directory, 0o700);
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
  if ((stat.mode & 0o077) !== 0)
    problems.push(`its mode is ${(stat.mode & 0o777).toString(8)}, readable or writable by others`);
  if (problems.length > 0) {
    throw new RunError('unsafe_directory', `refusing to use ${directory}: ${problems.join('; ')}`, {
      hint: `Run \`chmod 700 ${directory}\` if it is yours, or remove it so jp can create it safely.`,
    });
  }
}
