/**
 * `npm run demo` (scripts/demo.mjs): runs offline, says where its workspace is, and reuses that one
 * directory instead of leaving a new one in the temporary directory at every run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { collect, repositoryRoot, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

describe('npm run demo', () => {
  it('uses one workspace in the temporary directory, emptied at each run, and names it', async () => {
    const sandbox = cleanup.sandbox({ init: false });
    const temporary = path.join(sandbox.root, 'tmp');
    mkdirSync(temporary);
    const workspace = path.join(temporary, `jp-demo-${os.userInfo().username}`);
    for (let run = 0; run < 2; run++) {
      const child = spawn(process.execPath, [path.join(repositoryRoot, 'scripts', 'demo.mjs')], {
        cwd: repositoryRoot,
        env: { ...sandbox.env, TMPDIR: temporary, CI: 'true' },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const result = await collect(child, ['demo'], 60_000);
      assert.equal(result.code, 0, result.stderr);
      assert.ok(result.stderr.includes(`workspace: ${workspace}`), result.stderr);
      assert.match(result.stderr, /jp exited 3/);
      assert.deepEqual(readdirSync(temporary), [path.basename(workspace)], `run ${run + 1} left only its workspace`);
      assert.equal(readdirSync(path.join(workspace, '.jp', 'conversations')).length, 1, 'the previous run was cleared');
    }
    assert.ok(existsSync(path.join(workspace, '.jp')));
  });
});
