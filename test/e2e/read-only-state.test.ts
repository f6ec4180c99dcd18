/**
 * jp's own directories on a read-only file system (issue 35, attack 9): `$XDG_DATA_HOME` bind-mounted
 * read-only with bubblewrap, before jp made anything there and after it did. Every command that
 * needs to write there says what it could not write, where, and how to fix it, with exit code 1
 * (README, Exit codes: "the machine refused something"); on main a fresh one said "This is a bug in jp".
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { collect, jpBinary, runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();
const bwrap = '/usr/bin/bwrap';

/** jp with `readOnly` mounted read-only over itself, everything else as it is. */
function jpOnReadOnly(sandbox: Sandbox, readOnly: string, args: string[]) {
  const child = spawn(
    bwrap,
    ['--dev-bind', '/', '/', '--ro-bind', readOnly, readOnly, '--', process.execPath, jpBinary, ...args],
    { cwd: sandbox.workspace, env: sandbox.env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return collect(child, args, 60_000);
}

describe('jp’s state on a read-only file system', () => {
  assert.ok(existsSync(bwrap), 'bubblewrap is installed at /usr/bin/bwrap');

  for (const state of ['fresh', 'made before'] as const) {
    it(`XDG_DATA_HOME read-only (${state}): a clear error naming the path and the fix, exit 1`, async () => {
      const sandbox = cleanup.sandbox();
      const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'Hello.' }] }] });
      // Fresh: the directory is there, empty, and read-only; else jp made its state there first.
      if (state === 'made before') assert.equal((await runJp(sandbox, ['query', ...script, 'hi'])).code, 0);
      else mkdirSync(sandbox.dataHome);
      for (const args of [
        ['query', ...script, 'hello'],
        ['query', '--no-server', ...script, 'hello'],
        ['query', '--detach', ...script, 'hello'],
        ['seal', 'rotate'],
      ]) {
        const result = await jpOnReadOnly(sandbox, sandbox.dataHome, args);
        const where = `jp ${args.join(' ')}:\n${result.stderr}`;
        assert.equal(result.code, 1, where);
        assert.doesNotMatch(result.stderr, /bug in jp|internal error/, where);
        assert.ok(
          result.stderr.includes(`error: cannot write ${sandbox.dataHome}${path.sep}`) ||
            result.stderr.includes(`error: cannot write ${sandbox.dataHome}: `),
          where,
        );
        assert.match(
          result.stderr,
          /: the file system is read-only \((mkdir|open)\)\n {2}.*\$XDG_DATA_HOME\/jp/,
          where,
        );
      }
    });
  }
});
