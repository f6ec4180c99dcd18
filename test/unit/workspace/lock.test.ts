/**
 * Conversation locks against real processes: a SIGKILLed holder's lock is reclaimed at once, a
 * lock naming a pid now owned by an unrelated live process (another start time) is reclaimed, a
 * live holder's lock is never taken, and racing reclaimers take it once.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { LockedError } from '../../../src/errors.ts';
import { acquireLock, lockHolder, takeOverLock } from '../../../src/workspace/lock.ts';
import { processStartTime } from '../../../src/workspace/process-identity.ts';
import { repositoryRoot } from '../../support/jp.ts';

const cid = 'jp-c1764000000000001';

function locksDirectory(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'jp-locks-'));
}

/** A separate process that takes the lock and reports "held", then sleeps. */
function holder(
  directory: string,
  exitAfterMilliseconds?: number,
): Promise<{ pid: number; kill(): void; exited: Promise<void> }> {
  const code = `
    import { acquireLock } from ${JSON.stringify(path.join(repositoryRoot, 'src/workspace/lock.ts'))};
    acquireLock(${JSON.stringify(directory)}, ${JSON.stringify(cid)}, { waitSeconds: 0, role: 'client' });
    process.stdout.write('held\\n');
    setInterval(() => {}, 1000);
    ${exitAfterMilliseconds === undefined ? '' : `setTimeout(() => process.kill(process.pid, 'SIGKILL'), ${exitAfterMilliseconds});`}
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: repositoryRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('held')) resolve({ pid: child.pid!, kill: () => child.kill('SIGKILL'), exited });
    });
    child.on('exit', (code) => reject(new Error(`holder exited with ${code} before taking the lock`)));
  });
}

describe('conversation locks', () => {
  it('contention fails at once with exit 5 naming the holder; a live holder is never robbed', async () => {
    const directory = locksDirectory();
    const live = await holder(directory);
    try {
      for (let attempt = 0; attempt < 20; attempt++) {
        assert.throws(
          () => acquireLock(directory, cid, { waitSeconds: 0, role: 'client' }),
          (error: unknown) =>
            error instanceof LockedError &&
            error.exitCode === 5 &&
            error.message.includes(`pid ${live.pid}`) &&
            /--fork/.test(error.hint ?? ''),
        );
      }
      assert.equal(lockHolder(directory, cid)?.pid, live.pid);
    } finally {
      live.kill();
      await live.exited;
    }
  });

  it('a SIGKILLed holder’s lock is reclaimed at once', async () => {
    const directory = locksDirectory();
    const dead = await holder(directory);
    dead.kill();
    await dead.exited;
    const lock = acquireLock(directory, cid, { waitSeconds: 0, role: 'client' });
    assert.equal(lock.holder.pid, process.pid);
    lock.release();
    assert.equal(lockHolder(directory, cid), undefined);
  });

  it('a lock whose pid now belongs to an unrelated live process (another start time) is reclaimed', () => {
    const directory = locksDirectory();
    // pid 1 is alive, but it did not start at this time: the recorded holder is dead.
    writeFileSync(
      path.join(directory, `${cid}.lock`),
      JSON.stringify({
        pid: 1,
        start_time: 'not-the-real-start-time',
        host: os.hostname(),
        acquired_at: new Date().toISOString(),
        role: 'client',
        detached: false,
      }),
    );
    assert.notEqual(processStartTime(1), undefined, 'pid 1 is alive');
    const lock = acquireLock(directory, cid, { waitSeconds: 0, role: 'client' });
    assert.equal(lock.holder.pid, process.pid);
    lock.release();
  });

  it('a lock held by this very process (pid and start time match) counts as live', () => {
    const directory = locksDirectory();
    const first = acquireLock(directory, cid, { waitSeconds: 0, role: 'client' });
    assert.throws(() => acquireLock(directory, cid, { waitSeconds: 0, role: 'client' }), LockedError);
    first.release();
  });

  it('JP_LOCK_WAIT-style waiting gets the lock once the holder exits', async () => {
    const directory = locksDirectory();
    // The waiting acquireLock blocks this thread, so the holder ends itself.
    await holder(directory, 300);
    const lock = acquireLock(directory, cid, { waitSeconds: 20, role: 'client' });
    assert.equal(lock.holder.pid, process.pid);
    lock.release();
  });

  it('hand-over rewrites the lock in place, only with the exact token', () => {
    const directory = locksDirectory();
    const lock = acquireLock(directory, cid, { waitSeconds: 0, role: 'client' });
    assert.throws(() => takeOverLock(directory, cid, 'wrong token', { waitSeconds: 0, role: 'server' }), LockedError);
    const taken = takeOverLock(directory, cid, lock.token, { waitSeconds: 0, role: 'server', detached: true });
    lock.forget();
    const content = JSON.parse(readFileSync(path.join(directory, `${cid}.lock`), 'utf8'));
    assert.equal(content.role, 'server');
    assert.equal(content.detached, true);
    taken.release();
  });

  it('many processes racing for a dead holder’s lock: exactly one wins', async () => {
    const directory = locksDirectory();
    writeFileSync(
      path.join(directory, `${cid}.lock`),
      JSON.stringify({
        pid: 999_999_999,
        start_time: 'x',
        host: os.hostname(),
        acquired_at: new Date().toISOString(),
        role: 'client',
        detached: false,
      }),
    );
    // Contenders start when they are told to (a line on stdin), all at once; a winner holds the lock
    // until the test ends it, however slowly the others start.
    const code = `
      import { acquireLock } from ${JSON.stringify(path.join(repositoryRoot, 'src/workspace/lock.ts'))};
      process.stdout.write('ready\\n');
      process.stdin.once('data', () => {
        try { acquireLock(${JSON.stringify(directory)}, ${JSON.stringify(cid)}, { waitSeconds: 0, role: 'client' }); process.stdout.write('won\\n'); setInterval(() => {}, 1000); }
        catch (error) { process.stdout.write((error.code === 'conversation_locked' ? 'locked' : 'error ' + error.message) + '\\n'); process.exit(0); }
      });
    `;
    const contenders = Array.from({ length: 12 }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
        cwd: repositoryRoot,
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const lines: string[] = [];
      const waiters: (() => void)[] = [];
      child.stdout!.on('data', (chunk: Buffer) => {
        lines.push(...chunk.toString().trim().split('\n'));
        for (const waiter of waiters.splice(0)) waiter();
      });
      const line = (index: number): Promise<string> =>
        new Promise((resolve) => {
          const check = (): void => (lines.length > index ? resolve(lines[index]!) : void waiters.push(check));
          check();
        });
      return { child, line };
    });
    await Promise.all(contenders.map((contender) => contender.line(0)));
    for (const contender of contenders) contender.child.stdin!.write('go\n');
    const outcomes = await Promise.all(contenders.map((contender) => contender.line(1)));
    for (const contender of contenders) contender.child.kill('SIGKILL');
    assert.equal(outcomes.filter((outcome) => outcome === 'won').length, 1, outcomes.join(', '));
    assert.equal(outcomes.filter((outcome) => outcome === 'locked').length, 11, outcomes.join(', '));
  });
});
