/**
 * `jp init` in a repository: conversations stay out of `git add .` (they are the user's to commit
 * or not), the config goes in; inside another workspace the new one nests, and jp says so.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { conversationIds, runJp, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

describe('jp init', () => {
  it('writes an ignore file: after an hour of queries, `git add .` stages the config but no conversation', async () => {
    const sandbox = cleanup.sandbox({ init: false });
    git(sandbox.workspace, 'init', '-q');
    const initialized = await runJp(sandbox, ['init']);
    assert.equal(initialized.code, 0, initialized.stderr);
    assert.match(initialized.stderr, /Conversations are left out of `git add \.` \(\.jp\/\.gitignore\)/);
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    for (const message of ['one', 'two', 'three'])
      assert.equal((await runJp(sandbox, ['query', '--new', ...script, message])).code, 0);
    assert.equal(conversationIds(sandbox).length, 3);
    git(sandbox.workspace, 'add', '.');
    const staged = git(sandbox.workspace, 'diff', '--cached', '--name-only').trim().split('\n').sort();
    assert.deepEqual(staged, ['.jp/.gitignore', '.jp/config.toml', 'script.json']);
    assert.match(readFileSync(path.join(sandbox.workspace, '.jp', '.gitignore'), 'utf8'), /^\/conversations\/$/m);
  });

  it('in a subdirectory of a workspace: the new one nests, and jp says so and where', async () => {
    const sandbox = cleanup.sandbox();
    const inner = path.join(sandbox.workspace, 'packages', 'app');
    mkdirSync(inner, { recursive: true });
    const nested = await runJp(sandbox, ['init'], { cwd: inner });
    assert.equal(nested.code, 0, nested.stderr);
    assert.match(nested.stderr, new RegExp(`Initialized a jp workspace in ${inner}/\\.jp`));
    assert.match(nested.stderr, new RegExp(`It nests inside the workspace at ${sandbox.workspace}: `));
    const json = await runJp(sandbox, ['init', '--json'], { cwd: path.join(sandbox.workspace, 'packages') });
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).nested_in, sandbox.workspace);
    const top = await runJp(sandbox, ['init'], { cwd: sandbox.root });
    assert.equal(top.code, 0, top.stderr);
    assert.doesNotMatch(top.stderr, /nests/, 'a workspace with none above it does not nest');
  });
});
