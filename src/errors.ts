/**
 * The closed set of errors jp reports to its users, each bound to one run status and exit code
 * (DESIGN §2). Every message says what went wrong and where; `hint` says how to fix it.
 */
import path from 'node:path';

export type RunStatus = 'success' | 'error' | 'usage' | 'denied' | 'deferred' | 'locked' | 'retryable' | 'interrupted';

/** Exit code of each status. `interrupted` is 130 for SIGINT and 143 for SIGTERM. */
export function exitCodeOf(status: RunStatus, signal: 'SIGINT' | 'SIGTERM' = 'SIGINT'): number {
  switch (status) {
    case 'success':
      return 0;
    case 'error':
      return 1;
    case 'usage':
      return 2;
    case 'denied':
      return 3;
    case 'deferred':
      return 4;
    case 'locked':
      return 5;
    case 'retryable':
      return 6;
    case 'interrupted':
      return signal === 'SIGTERM' ? 143 : 130;
  }
}

/** Inverse of exitCodeOf, for results read back from disk or another process. */
export function statusOfExitCode(code: number): RunStatus {
  switch (code) {
    case 0:
      return 'success';
    case 2:
      return 'usage';
    case 3:
      return 'denied';
    case 4:
      return 'deferred';
    case 5:
      return 'locked';
    case 6:
      return 'retryable';
    case 130:
    case 143:
      return 'interrupted';
    default:
      return 'error';
  }
}

const brand = Symbol.for('jp.error');

export class JpError extends Error {
  readonly [brand] = true;
  /** Stable machine-readable code, e.g. `config_invalid`; part of the JSON result contract. */
  readonly code: string;
  readonly status: RunStatus;
  /** How to fix it, shown on its own line(s) after the message. */
  readonly hint: string | undefined;

  constructor(status: RunStatus, code: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.hint = options.hint;
  }

  get exitCode(): number {
    return exitCodeOf(this.status);
  }

  /** Works across bundles and realms, unlike instanceof. */
  static isInstance(value: unknown): value is JpError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}

/** The same error with `more` after its hint: status, code and message kept. */
export function withMoreHint(error: JpError, more: string): JpError {
  return new JpError(error.status, error.code, error.message, {
    hint: error.hint ? `${error.hint}\n${more}` : more,
    cause: error,
  });
}

/** Bad flags, bad input, anything the user can fix by changing the command line (exit 2). */
export class UsageError extends JpError {
  constructor(code: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('usage', code, message, options);
  }
}

/** Invalid configuration; the message names the file, line and key path (exit 2). */
export class ConfigError extends JpError {
  constructor(message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('usage', 'config_invalid', message, options);
  }
}

/** The conversation is held by another live process (exit 5). */
export class LockedError extends JpError {
  constructor(message: string, options: { hint?: string } = {}) {
    super('locked', 'conversation_locked', message, options);
  }
}

/** A provider failure that ended the turn (exit 1). */
export class ProviderError extends JpError {
  constructor(code: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('error', code, message, options);
  }
}

/** Rate limit, overload or network failure that outlasted every retry (exit 6). */
export class RetryableProviderError extends JpError {
  constructor(code: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('retryable', code, message, options);
  }
}

/** Anything else that ended a run (exit 1). */
export class RunError extends JpError {
  constructor(code: string, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super('error', code, message, options);
  }
}

/**
 * A file jp keeps (a conversation log, metadata, a lock) is not a regular file it can read: a
 * symlink, a directory, a FIFO, a device. It is reported and never written through (exit 1).
 */
export class DamagedFileError extends JpError {
  readonly file: string;
  /** What is wrong, e.g. "is a symbolic link". */
  readonly problem: string;

  constructor(file: string, problem: string, options: { hint?: string; cause?: unknown } = {}) {
    super('error', 'file_damaged', `${file} ${problem}`, {
      hint: options.hint ?? 'jp left it untouched. Move it away (or restore it), then run again.',
      cause: options.cause,
    });
    this.file = file;
    this.problem = problem;
  }
}

/** The disk or the user's quota is full (ENOSPC, EDQUOT); what was written before is kept (exit 1). */
export class DiskFullError extends JpError {
  readonly file: string;

  constructor(file: string, options: { cause?: unknown } = {}) {
    super('error', 'disk_full', `disk full while writing ${file}`, {
      hint: 'Free some space on that file system and run again; everything saved before is intact.',
      cause: options.cause,
    });
    this.file = file;
  }
}

/** Whether an error is the file system saying it has no room left. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** Rethrows a disk-full error as DiskFullError naming `file`; anything else unchanged. */
export function asDiskFull(error: unknown, file: string): unknown {
  return isDiskFull(error) && !JpError.isInstance(error) ? new DiskFullError(file, { cause: error }) : error;
}

/**
 * The machine refused something jp needs (exit 1): a read-only file system, a permission, a file
 * where a directory should be, something else at a socket's path, too many open files. The message
 * names the path and the cause, the hint the fix; `code` is the errno's (`EROFS`...) in lower case
 * with `system_` before it (`system_erofs`).
 */
export class SystemError extends JpError {
  constructor(errno: string, message: string, options: { hint: string; cause?: unknown }) {
    super('error', `system_${errno.toLowerCase()}`, message, options);
  }
}

/** The system errors jp explains (SystemError), by errno; others stay internal errors. */
export function asSystemError(error: unknown): SystemError | undefined {
  const errno = error as NodeJS.ErrnoException & { address?: string };
  if (typeof errno?.code !== 'string') return undefined;
  const file = errno.path ?? errno.address;
  const where = file ? ` ${file}` : '';
  const doing = errno.syscall ? ` (${errno.syscall})` : '';
  switch (errno.code) {
    case 'EROFS':
      return new SystemError(errno.code, `cannot write${where}: the file system is read-only${doing}`, {
        hint:
          'jp writes its conversations in .jp/ of the workspace and its state under $XDG_DATA_HOME/jp. Run it ' +
          'where both can be written: point XDG_DATA_HOME at a writable directory (XDG_DATA_HOME=~/.local/share is ' +
          'the default), or use another workspace (`jp init` in a writable directory).',
        cause: error,
      });
    case 'EACCES':
    case 'EPERM':
      return new SystemError(errno.code, `permission denied${where ? ` on${where}` : ''}${doing}`, {
        hint:
          `Check who owns it and its directory, and their modes (ls ` +
          `-ld${file ? ` ${file} ${path.dirname(file)}` : ''}); make them writable by you, or point jp elsewhere ` +
          `(--log-file, XDG_DATA_HOME).`,
        cause: error,
      });
    case 'EEXIST':
    case 'ENOTDIR':
      return new SystemError(
        errno.code,
        `${file ?? 'a path'} is in the way: a file is where jp needs a directory${doing}`,
        {
          hint: `Move${where} away (it is not jp's), then run again.`,
          cause: error,
        },
      );
    case 'EADDRINUSE':
      return new SystemError(errno.code, `cannot listen on the socket${where}: something else is at that path`, {
        hint: `Remove what is there (rm -r${where}) if it is not a running jp, then run again.`,
        cause: error,
      });
    case 'EMFILE':
    case 'ENFILE':
      return new SystemError(
        errno.code,
        `too many open files${where ? ` (opening${where})` : ''}: ` +
          `the ${errno.code === 'EMFILE' ? 'per-process limit (ulimit -n)' : 'system-wide limit'} is reached`,
        {
          hint: 'Raise the limit (`ulimit -n 1024` or more) and run again.',
          cause: error,
        },
      );
    default:
      return undefined;
  }
}

/** Turns any thrown value into a JpError, keeping the original as `cause`. */
export function toJpError(error: unknown): JpError {
  if (JpError.isInstance(error)) return error;
  if (isDiskFull(error)) return new DiskFullError((error as NodeJS.ErrnoException).path ?? 'a file', { cause: error });
  const system = asSystemError(error);
  if (system) return system;
  const message = error instanceof Error ? error.message : String(error);
  return new RunError('internal_error', `internal error: ${message}`, {
    hint: 'This is a bug in jp; the log file (run with -vvv) has the details.',
    cause: error,
  });
}

/** The text printed on stderr for an error: message, then the hint indented. */
export function formatErrorForHumans(error: JpError): string {
  const lines = [`error: ${error.message}`];
  if (error.hint) for (const line of error.hint.split('\n')) lines.push(`  ${line}`);
  return lines.join('\n');
}
