/**
 * Conversation locks (DESIGN §7). A lock is a file `locks/<cid>.lock` naming its holder (pid,
 * process start time, host). It is created atomically with link(2), so it is never seen half
 * written. A lock is reclaimed only when its holder is proven dead (pid and start time), and only
 * under a short-lived guard directory so two reclaimers cannot both remove it. A live holder's lock
 * is never taken. The holder may hand the lock to another process (the query server) by rewriting
 * it in place with rename(2): the file exists at every instant, so nobody can slip in.
 */
import {
  closeSync,
  constants,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asDiskFull, LockedError } from '../errors.ts';
import { readRegularFile, removeQuietly, temporaryNameFor, writeAll, writeFileAtomic } from './files.ts';
import { isSameProcessAlive, ownProcessStartTime } from './process-identity.ts';

export interface LockOwner {
  pid: number;
  start_time: string;
  host: string;
  acquired_at: string;
  /** `client` while a `jp query` prepares the run, `server` once the query server holds it. */
  role: 'client' | 'server' | 'in-process';
  detached: boolean;
}

export interface AcquireOptions {
  /** Seconds to wait for a live holder (JP_LOCK_WAIT); 0 fails at once. */
  waitSeconds: number;
  role: LockOwner['role'];
  detached?: boolean;
}

/** Guards older than this are left over from a reclaimer that died; a live one holds it for microseconds. */
const staleGuardMilliseconds = 10_000;

export class ConversationLock {
  readonly file: string;
  readonly conversationId: string;
  private owner: LockOwner;
  private content: string;
  private released = false;

  constructor(file: string, conversationId: string, owner: LockOwner, content: string) {
    this.file = file;
    this.conversationId = conversationId;
    this.owner = owner;
    this.content = content;
  }

  get holder(): LockOwner {
    return this.owner;
  }

  /** The exact file content; a process taking the lock over checks it to prove the hand-over. */
  get token(): string {
    return this.content;
  }

  /** Removes the lock if it is still ours. Safe to call more than once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    try {
      if (readRegularFile(this.file)?.toString('utf8') === this.content) unlinkSync(this.file);
    } catch {
      // already gone
    }
  }

  /** Marks the lock as released without touching the file (it now belongs to another process). */
  forget(): void {
    this.released = true;
  }
}

function lockFile(locksDirectory: string, conversationId: string): string {
  return path.join(locksDirectory, `${conversationId}.lock`);
}

function makeOwner(options: AcquireOptions): LockOwner {
  return {
    pid: process.pid,
    start_time: ownProcessStartTime(),
    host: os.hostname(),
    acquired_at: new Date().toISOString(),
    role: options.role,
    detached: options.detached ?? false,
  };
}

export function readLockOwner(file: string): { owner: LockOwner | undefined; content: string } | undefined {
  // A lock file that is not a regular file (a symlink, a FIFO...) throws DamagedFileError.
  const bytes = readRegularFile(file);
  if (bytes === undefined) return undefined;
  const content = bytes.toString('utf8');
  try {
    const owner = JSON.parse(content) as LockOwner;
    if (typeof owner.pid === 'number' && typeof owner.start_time === 'string') return { owner, content };
  } catch {
    // unparsable: treated as held by nobody provable, see isHolderDead
  }
  return { owner: undefined, content };
}

/** A holder is dead when it is on this host and its pid no longer runs with the same start time. */
function isHolderDead(owner: LockOwner | undefined): boolean {
  if (!owner) return true;
  if (owner.host !== os.hostname()) return false;
  return !isSameProcessAlive(owner.pid, owner.start_time);
}

function tryCreate(file: string, content: string): boolean {
  const temporary = temporaryNameFor(file, 'new');
  try {
    const fd = openSync(
      temporary,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      writeAll(fd, Buffer.from(content, 'utf8'));
    } finally {
      closeSync(fd);
    }
    linkSync(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw asDiskFull(error, file);
  } finally {
    removeQuietly(temporary);
  }
}

/** Removes `file` if it still has `staleContent`, under the reclaim guard. */
function reclaimIfUnchanged(file: string, staleContent: string): void {
  const guard = `${file}.reclaim`;
  try {
    mkdirSync(guard, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    try {
      if (Date.now() - statSync(guard).mtimeMs > staleGuardMilliseconds) rmdirSync(guard);
    } catch {
      // another reclaimer removed it first
    }
    return;
  }
  try {
    const current = readLockOwner(file);
    if (current && current.content === staleContent) unlinkSync(file);
  } finally {
    rmdirSync(guard);
  }
}

export function describeHolder(owner: LockOwner | undefined): string {
  if (!owner) return 'an unreadable lock file';
  const kind = owner.role === 'server' ? (owner.detached ? 'a detached jp query' : 'a jp query server') : 'a jp query';
  return `pid ${owner.pid} (${kind}, since ${owner.acquired_at} on ${owner.host})`;
}

function lockedError(conversationId: string, owner: LockOwner | undefined): LockedError {
  return new LockedError(`conversation ${conversationId} is locked by ${describeHolder(owner)}`, {
    hint: [
      `jp conversation kill ${conversationId}   stop the process that holds it`,
      `jp conversation attach ${conversationId} watch it or answer its questions`,
      '--fork                               branch from this conversation instead',
      '--new                                start a new conversation',
      'JP_LOCK_WAIT=<seconds>               wait for the holder to finish',
    ].join('\n'),
  });
}

function sleep(milliseconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, milliseconds);
}

/**
 * Takes the lock of a conversation, or throws LockedError (exit 5) naming the holder. With
 * `waitSeconds` > 0, polls until the holder is gone or the time is up.
 */
export function acquireLock(locksDirectory: string, conversationId: string, options: AcquireOptions): ConversationLock {
  const file = lockFile(locksDirectory, conversationId);
  const owner = makeOwner(options);
  const content = JSON.stringify(owner);
  const deadline = Date.now() + Math.max(0, options.waitSeconds) * 1000;
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(file, content)) return new ConversationLock(file, conversationId, owner, content);
    const current = readLockOwner(file);
    if (!current) continue; // released between our attempt and the read
    if (isHolderDead(current.owner)) {
      reclaimIfUnchanged(file, current.content);
      if (attempt < 1000) continue;
    }
    if (Date.now() >= deadline) throw lockedError(conversationId, current.owner);
    sleep(Math.min(100, Math.max(1, deadline - Date.now())));
  }
}

/** Reads who holds a conversation's lock, if anyone alive does. Never modifies anything. */
export function lockHolder(locksDirectory: string, conversationId: string): LockOwner | undefined {
  const current = readLockOwner(lockFile(locksDirectory, conversationId));
  if (!current || isHolderDead(current.owner)) return undefined;
  return current.owner;
}

/**
 * The live run that holds a conversation's lock (a query server, or a run inside a `jp query`),
 * if any: how a run is still found when its registry entry (processes/) was removed under it.
 */
export function runningByLock(locksDirectory: string, conversationId: string): LockOwner | undefined {
  const owner = lockHolder(locksDirectory, conversationId);
  return owner && owner.role !== 'client' ? owner : undefined;
}

/**
 * The error acquireLock would throw right now (no waiting) because a live process holds the lock,
 * or undefined. Never modifies anything.
 */
export function refusalIfHeld(locksDirectory: string, conversationId: string): LockedError | undefined {
  const owner = lockHolder(locksDirectory, conversationId);
  return owner ? lockedError(conversationId, owner) : undefined;
}

/**
 * Takes over a lock held by the process that spawned us, proving the hand-over with its exact
 * content. The file is replaced atomically, so it exists at every instant.
 */
export function takeOverLock(
  locksDirectory: string,
  conversationId: string,
  expectedContent: string,
  options: AcquireOptions,
): ConversationLock {
  const file = lockFile(locksDirectory, conversationId);
  const current = readLockOwner(file);
  if (!current || current.content !== expectedContent) throw lockedError(conversationId, current?.owner);
  const owner = makeOwner(options);
  const content = JSON.stringify(owner);
  writeFileAtomic(file, content);
  return new ConversationLock(file, conversationId, owner, content);
}

/** Moves a lock file aside for `--force` cleanup of a dead holder; never touches a live one. */
export function removeDeadLock(locksDirectory: string, conversationId: string): boolean {
  const file = lockFile(locksDirectory, conversationId);
  const current = readLockOwner(file);
  if (!current || !isHolderDead(current.owner)) return false;
  reclaimIfUnchanged(file, current.content);
  return true;
}

/** A `<lock>.new-*` or `.tmp-*` file older than this was left by a process that died writing a lock. */
const strayTemporaryMilliseconds = 60_000;

/**
 * Removes every lock whose holder is proven dead (left by a SIGKILL or a crash), and temporary
 * files of lock creations that died half way. Live holders' locks are never touched.
 */
export function removeDeadLocks(locksDirectory: string, now = Date.now()): void {
  let names: string[];
  try {
    names = readdirSync(locksDirectory);
  } catch {
    return;
  }
  for (const name of names) {
    if (name.endsWith('.lock')) removeDeadLock(locksDirectory, name.slice(0, -'.lock'.length));
    else if (/\.lock\.(new|tmp)-/.test(name)) {
      const file = path.join(locksDirectory, name);
      try {
        if (now - statSync(file).mtimeMs > strayTemporaryMilliseconds) unlinkSync(file);
      } catch {
        // its creator removed it
      }
    }
  }
}
