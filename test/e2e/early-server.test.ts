/**
 * A query starts its server before the command tree loads (cli/early-server.ts), in jp's private
 * `starting/` directory. A server no run takes (a usage error, --help) is ended and its output file
 * removed; one a run takes becomes that run's server, its output the run's log. Either way nothing
 * is left in `starting/` and no server outlives its client.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { eventually, runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

function startingDirectory(sandbox: Sandbox): string {
  return path.join(sandbox.dataHome, 'jp', 'starting');
}

function startingFiles(sandbox: Sandbox): string[] {
  const directory = startingDirectory(sandbox);
  return existsSync(directory) ? readdirSync(directory) : [];
}

/** Query servers (`jp __serve`) whose working directory is under the sandbox. */
function serversOf(sandbox: Sandbox): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readlinkSync(`/proc/${entry}/cwd`).startsWith(`${sandbox.root}/`)) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('__serve')) found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

describe('a query server started before the command tree', () => {
  for (const [what, args, code] of [
    ['a usage error', ['query', '--no-such-flag', 'hello'], 2],
    ['a bad value', ['query', '--max-turns', 'many', 'hello'], 2],
    ['--version after the command', ['query', '--version'], 0],
  ] as const) {
    it(`is ended, its output file removed, after ${what}`, async () => {
      const sandbox = cleanup.sandbox();
      const result = await runJp(sandbox, [...args]);
      assert.equal(result.code, code, result.stderr);
      assert.ok(existsSync(startingDirectory(sandbox)), 'the query started its server early');
      assert.deepEqual(startingFiles(sandbox), []);
      await eventually('no query server left', () => serversOf(sandbox).length === 0);
    });
  }

  it('becomes the run’s server: its output is the run’s log, nothing stays in starting/', async () => {
    const sandbox = cleanup.sandbox();
    // A script the test provider refuses: the run fails, and its server says why in its output, the run's log.
    const result = await runJp(sandbox, ['query', '--json', ...testProvider(sandbox, { steps: [] }), 'hello']);
    assert.notEqual(result.code, 0);
    const id = (JSON.parse(result.stdout.trim().split('\n').pop()!) as { conversation_id: string }).conversation_id;
    const runLog = readFileSync(path.join(sandbox.userDirectory(), 'processes', `${id}.log`), 'utf8');
    assert.match(runLog, new RegExp(`${id}: run ended`));
    assert.deepEqual(startingFiles(sandbox), []);
    await eventually('no query server left', () => serversOf(sandbox).length === 0);
  });
});

describe('output files of early servers whose client died', () => {
  it('are removed by the next query; one whose client lives stays', async () => {
    const sandbox = cleanup.sandbox();
    const directory = startingDirectory(sandbox);
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    // A client SIGKILLed before it handed its server a run: its pid is gone.
    const dead = spawnSync('true').pid!;
    writeFileSync(path.join(directory, `server-${dead}.starting`), 'left behind\n');
    // A client still starting its query (this test's own process stands for it).
    writeFileSync(path.join(directory, `server-${process.pid}.starting`), '');
    const result = await runJp(sandbox, [
      'query',
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'Answered.' }] }] }),
      'hello',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(startingFiles(sandbox), [`server-${process.pid}.starting`]);
  });
});
