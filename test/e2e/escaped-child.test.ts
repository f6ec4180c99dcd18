/**
 * A tool's time limit and `kill` hold when a child left the tool's process group holding its output
 * pipes (`setsid cmd &`): jp waits for the process it started, not for the pipes to close. Each
 * escaped child sleeps far longer than any safety limit, so a jp that waited for it would hang the
 * test (and fail it by the safety limit) instead of returning.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  eventually,
  processAlive,
  processesMatching,
  readEvents,
  runJp,
  type Sandbox,
  testProvider,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();

/** Pids of `sleep <seconds>` processes; each test uses its own odd durations to find its own. */
function sleepers(seconds: number): number[] {
  return processesMatching('sleep', String(seconds)).filter(
    (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] === String(seconds),
  );
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/**
 * A command line that starts `sleep <seconds>` in a new session, outside the tool's process group,
 * holding the tool's output pipes, and goes on only once it has left the group.
 */
function escapeChild(seconds: number, options: { clearEnvironment?: boolean } = {}): string {
  const file = `escaped-${seconds}.pid`;
  return `setsid ${options.clearEnvironment ? 'env -i ' : ''}/bin/sh -c 'echo $$ > ${file}; exec sleep ${seconds}' & while [ ! -s ${file} ]; do sleep 0.05; done; echo started`;
}

function runCommandScript(sandbox: Sandbox, command: string): string[] {
  return testProvider(sandbox, {
    steps: [{ parts: [{ tool_call: { name: 'run_command', arguments: { command } } }] }, { parts: [{ text: 'done' }] }],
  });
}

function registryEntry(sandbox: Sandbox, conversationId: string): Record<string, any> | undefined {
  const file = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.json`);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

describe('a tool whose child escaped its process group', () => {
  it('returns when the command ends, with its output, and the escaped child is gone', async () => {
    const sandbox = cleanup.sandbox();
    cleanup.add(() => killAll(sleepers(987001)));
    const result = await runJp(sandbox, [
      'query',
      '--json',
      ...runCommandScript(sandbox, escapeChild(987001)),
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'go',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const final = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    assert.equal(final.tools[0].status, 'ok');
    assert.match(final.tools[0].result, /started/);
    await eventually('the escaped child was killed', () => sleepers(987001).length === 0);
  });

  it('honours timeout_secs even when the escaped child is out of reach (env -i clears its marker)', async () => {
    const sandbox = cleanup.sandbox();
    cleanup.add(() => killAll([...sleepers(987002), ...sleepers(987003)]));
    // --sandbox off: the limit of an unconfined command; in the sandbox, its pid namespace ends such a child too (sandbox.test.ts).
    const result = await runJp(sandbox, [
      'query',
      '--json',
      '--sandbox',
      'off',
      ...runCommandScript(sandbox, `${escapeChild(987002, { clearEnvironment: true })}; sleep 987003`),
      '-c',
      'conversation.tools.run_command.run="unattended"',
      '-c',
      'conversation.tools.run_command.timeout_secs=2',
      'go',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const final = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    assert.equal(final.tools[0].status, 'error');
    assert.match(final.tools[0].result, /timed out after 2 s and was killed\nstarted/);
    assert.equal(sleepers(987003).length, 0, 'the command itself was killed');
    assert.equal(
      sleepers(987002).length,
      1,
      'an escaped child that cleared its environment is out of reach (documented)',
    );
  });

  it('`jp conversation kill` stops the run; the escaped child dies with it', async () => {
    const sandbox = cleanup.sandbox();
    cleanup.add(() => killAll([...sleepers(987004), ...sleepers(987005)]));
    const detached = await runJp(sandbox, [
      'query',
      '--detach',
      ...runCommandScript(sandbox, `${escapeChild(987004)}; sleep 987005`),
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'go',
    ]);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    await eventually('the escaped child runs', () => sleepers(987004).length === 1 && sleepers(987005).length === 1);
    const killed = await runJp(sandbox, ['conversation', 'kill', conversationId]);
    assert.equal(killed.code, 0, killed.stderr);
    assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationId])).code, 143);
    const last = readEvents(sandbox, conversationId).at(-1)!;
    assert.deepEqual([last.type, last.status], ['turn_end', 'interrupted']);
    await eventually(
      'the command and its escaped child are gone',
      () => sleepers(987004).length === 0 && sleepers(987005).length === 0,
    );
  });

  it('`kill --force` leaves no escaped process of the tool behind', async () => {
    const sandbox = cleanup.sandbox();
    cleanup.add(() => killAll([...sleepers(987006), ...sleepers(987007)]));
    const detached = await runJp(sandbox, [
      'query',
      '--detach',
      ...runCommandScript(sandbox, `${escapeChild(987006)}; sleep 987007`),
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'go',
    ]);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    await eventually('the escaped child runs', () => sleepers(987006).length === 1 && sleepers(987007).length === 1);
    const entry = await eventually('the registry knows the tool', () => {
      const current = registryEntry(sandbox, conversationId);
      return current?.tool_process_groups.length === 1 ? current : undefined;
    });
    const killed = await runJp(sandbox, ['conversation', 'kill', '--force', conversationId]);
    assert.equal(killed.code, 0, killed.stderr);
    await eventually('the server is gone', () => !processAlive(entry.pid));
    await eventually(
      'the command and its escaped child are gone',
      () => sleepers(987006).length === 0 && sleepers(987007).length === 0,
    );
  });
});
