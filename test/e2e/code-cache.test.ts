/**
 * The code caches of the program and of the query server (src/cli/code-cache.ts): written by the
 * first run, used as is by the next, rebuilt when damaged, and never a reason for a command to fail.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { codeCacheDirectory as cacheDirectory, codeCacheFiles as cacheFiles, eventually, jpBinary, processesMatching, runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

/** Servers of this sandbox still alive (the cache is written as a server exits, after its client). */
function serversOf(sandbox: Sandbox): number[] {
  return processesMatching(jpBinary, '__serve').filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`XDG_DATA_HOME=${sandbox.dataHome}`);
    } catch {
      return false;
    }
  });
}

async function query(sandbox: Sandbox, message: string): Promise<void> {
  const result = await runJp(sandbox, ['query', ...testProvider(sandbox, { steps: [{ parts: [{ text: `answer to ${message}` }] }] }), message]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, `answer to ${message}\n`);
  await eventually('the server has exited', () => serversOf(sandbox).length === 0);
}

describe('the code caches', () => {
  it('the first server writes it (0600 in a 0700 directory); the next one uses it without rewriting it', async () => {
    const sandbox = cleanup.sandbox();
    assert.deepEqual(cacheFiles(sandbox), []);
    await query(sandbox, 'one');
    const [file, ...others] = cacheFiles(sandbox);
    assert.ok(file, 'a cache file was written');
    assert.deepEqual(others, [], 'one server cache');
    assert.equal(cacheFiles(sandbox, 'client-query-').length, 1, 'and one for the query command');
    assert.deepEqual(cacheFiles(sandbox, '').filter((name) => name.endsWith('.tmp')), [], 'no temporary file left behind');
    assert.match(path.basename(file), new RegExp(`^server-[0-9a-f]{16}-${process.version.replace(/\./g, '\\.')}-${process.arch}\\.bin$`));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(cacheDirectory(sandbox)).mode & 0o777, 0o700);
    const written = readFileSync(file);
    const writtenAt = statSync(file).mtimeMs;

    const [clientFile] = cacheFiles(sandbox, 'client-query-');
    const clientWrittenAt = statSync(clientFile!).mtimeMs;

    await query(sandbox, 'two');
    assert.deepEqual(cacheFiles(sandbox), [file]);
    assert.equal(statSync(file).mtimeMs, writtenAt, 'V8 accepted the cache, so nothing rewrote it');
    assert.ok(readFileSync(file).equals(written));
    assert.equal(statSync(clientFile!).mtimeMs, clientWrittenAt, 'the command cache was accepted too');
  });

  it('each command has its own cache, made by its first run', async () => {
    const sandbox = cleanup.sandbox();
    const listed = await runJp(sandbox, ['conversation', 'ls', '--format', 'json']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(cacheFiles(sandbox, 'client-conversation-ls-').length, 1);
    assert.deepEqual(cacheFiles(sandbox, 'client-query-'), []);
    const version = await runJp(sandbox, ['--version']);
    assert.equal(version.code, 0);
    assert.equal(cacheFiles(sandbox, '').length, 1, '--version runs no bundle and writes no cache');
  });

  it("writing a cache removes the same purpose's caches of other builds and Node versions, nothing else", async () => {
    const sandbox = cleanup.sandbox();
    mkdirSync(cacheDirectory(sandbox), { recursive: true, mode: 0o700 });
    const outdated = path.join(cacheDirectory(sandbox), 'server-0123456789abcdef-v20.0.0-x64.bin');
    const otherPurpose = path.join(cacheDirectory(sandbox), 'client-conversation-ls-0123456789abcdef-v20.0.0-x64.bin');
    const notOurs = path.join(cacheDirectory(sandbox), 'server-notes.txt');
    for (const file of [outdated, otherPurpose, notOurs]) writeFileSync(file, 'old');
    await query(sandbox, 'one');
    assert.equal(existsSync(outdated), false, 'the outdated server cache is gone');
    assert.equal(existsSync(otherPurpose), true, 'a cache for another command stays');
    assert.equal(existsSync(notOurs), true, 'a file jp did not name stays');
    assert.equal(cacheFiles(sandbox).filter((file) => file.endsWith('.bin')).length, 1);
  });

  it('a damaged cache is rejected, the query still answers, and the cache is rebuilt', async () => {
    const sandbox = cleanup.sandbox();
    await query(sandbox, 'one');
    const [file] = cacheFiles(sandbox);
    const [clientFile] = cacheFiles(sandbox, 'client-query-');
    assert.ok(file && clientFile);
    const garbage = Buffer.alloc(4096, 0x5a);
    writeFileSync(file, garbage);
    writeFileSync(clientFile, garbage);
    await query(sandbox, 'two');
    assert.ok(!readFileSync(file).equals(garbage), 'the damaged server cache was replaced');
    assert.ok(!readFileSync(clientFile).equals(garbage), 'the damaged command cache was replaced');
    await query(sandbox, 'three');
  });

  it('a cache directory that cannot be written costs nothing but time', async () => {
    const sandbox = cleanup.sandbox();
    const cacheHome = path.join(sandbox.root, 'read-only-cache');
    sandbox.env.XDG_CACHE_HOME = cacheHome;
    writeFileSync(cacheHome, 'a file where the cache directory would be');
    await query(sandbox, 'one');
    await query(sandbox, 'two');
    assert.equal(readFileSync(cacheHome, 'utf8'), 'a file where the cache directory would be');
  });
});
