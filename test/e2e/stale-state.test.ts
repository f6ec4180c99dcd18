/**
 * What a dead run leaves behind is cleaned up, never reported as an error: `kill` on a stale
 * registry entry (RFD 024: "cleaned up silently"), on a conversation that is not running, and the
 * sweep of dead locks and per-run logs (`processes/<cid>.log`); a run that ends badly says why in
 * its run log.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider } from '../support/fake-provider.ts';
import {
  conversationIds,
  eventually,
  fakeModelArguments,
  readEvents,
  runJp,
  type Sandbox,
  testProvider,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();

/** A conversation with one complete turn. */
async function finishedConversation(sandbox: Sandbox): Promise<string> {
  const done = await runJp(sandbox, [
    'query',
    ...testProvider(sandbox, { steps: [{ parts: [{ text: 'done' }] }] }),
    'hi',
  ]);
  assert.equal(done.code, 0, done.stderr);
  return conversationIds(sandbox)[0]!;
}

/** Registry entry and lock of a run that died without cleaning up: this pid, another start time (a reused pid). */
function leaveDeadRun(sandbox: Sandbox, conversationId: string): { entry: string; socket: string; lock: string } {
  const processes = path.join(sandbox.userDirectory(), 'processes');
  const locks = path.join(sandbox.userDirectory(), 'locks');
  mkdirSync(processes, { recursive: true, mode: 0o700 });
  mkdirSync(locks, { recursive: true, mode: 0o700 });
  const socket = path.join(processes, `${conversationId}.sock`);
  writeFileSync(socket, '');
  const entry = path.join(processes, `${conversationId}.json`);
  writeFileSync(
    entry,
    JSON.stringify({
      conversation_id: conversationId,
      pid: process.pid,
      start_time: 'a-start-time-this-pid-never-had',
      socket_path: socket,
      started_at: new Date().toISOString(),
      version: '0.1.0',
      protocol_version: 1,
      detached: true,
      log_file: null,
      tool_process_groups: [],
    }),
  );
  const lock = path.join(locks, `${conversationId}.lock`);
  writeFileSync(
    lock,
    JSON.stringify({
      pid: process.pid,
      start_time: 'a-start-time-this-pid-never-had',
      host: os.hostname(),
      acquired_at: new Date().toISOString(),
      role: 'server',
      detached: true,
    }),
  );
  return { entry, socket, lock };
}

describe('conversation kill when nothing runs', () => {
  it('a stale entry (its process is dead) is cleaned up silently: exit 0, nothing printed, entry, socket and lock gone', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = await finishedConversation(sandbox);
    const left = leaveDeadRun(sandbox, conversationId);
    const killed = await runJp(sandbox, ['conversation', 'kill', conversationId]);
    assert.equal(killed.code, 0, killed.stderr);
    assert.equal(killed.stderr, '');
    assert.equal(killed.stdout, '');
    for (const file of Object.values(left)) assert.equal(existsSync(file), false, `${file} is left behind`);
  });

  it('a conversation that is not running is already stopped: exit 0, and one line says so', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = await finishedConversation(sandbox);
    const killed = await runJp(sandbox, ['conversation', 'kill', conversationId]);
    assert.equal(killed.code, 0, killed.stderr);
    assert.equal(killed.stdout, '');
    assert.equal(killed.stderr, `${conversationId} is not running; nothing to stop.\n`);
    const unknown = await runJp(sandbox, ['conversation', 'kill', 'jp-c1764000000000123']);
    assert.equal(unknown.code, 2, 'a conversation that does not exist is still a usage error');
    assert.match(unknown.stderr, /no conversation jp-c1764000000000123/);
  });
});

describe('per-run logs and dead locks', () => {
  it('a detached run that fails says why in its run log; a run that went well leaves no log', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: [{ status: 401, body: '{"error":{"message":"Incorrect API key provided"}}' }],
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const detached = await runJp(sandbox, ['query', '--detach', ...model.args, 'hi'], { env: model.env });
    assert.equal(detached.code, 0, detached.stderr);
    const failed = detached.stdout.trim();
    const waited = await runJp(sandbox, ['conversation', 'wait', failed]);
    assert.notEqual(waited.code, 0);
    const runLog = readFileSync(path.join(sandbox.userDirectory(), 'processes', `${failed}.log`), 'utf8');
    assert.match(runLog, new RegExp(`${failed}: run ended: \\w+ \\(exit ${waited.code}\\): .*(401|API key)`));

    const fine = await runJp(sandbox, [
      'query',
      '--new',
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'fine' }] }] }),
      'hello',
    ]);
    assert.equal(fine.code, 0, fine.stderr);
    const succeeded = conversationIds(sandbox).find((id) => id !== failed)!;
    assert.equal(existsSync(path.join(sandbox.userDirectory(), 'processes', `${succeeded}.log`)), false);
  });

  it("ls removes dead locks, stray lock temporaries, and run logs that are empty, a week old or orphaned; never a live run's", async () => {
    const sandbox = cleanup.sandbox();
    const done = await finishedConversation(sandbox);
    const script = testProvider(
      sandbox,
      { steps: [{ parts: [{ text: 'Started.\n\n' }, { delay_ms: 60_000 }] }] },
      'slow.json',
    );
    const detached = await runJp(sandbox, ['query', '--new', '--detach', ...script, 'long']);
    assert.equal(detached.code, 0, detached.stderr);
    const running = detached.stdout.trim();
    await eventually('streaming started', () =>
      readEvents(sandbox, running).some((event) => event.type === 'chat_response'),
    );

    const processes = path.join(sandbox.userDirectory(), 'processes');
    const locks = path.join(sandbox.userDirectory(), 'locks');
    const weekAgo = new Date(Date.now() - 8 * 24 * 60 * 60 * 1000);
    const deadLock = leaveDeadRun(sandbox, done).lock;
    const stray = path.join(locks, `${done}.lock.new-123-abcdef`);
    writeFileSync(stray, '{}');
    utimesSync(stray, weekAgo, weekAgo);
    const write = (name: string, content: string, old = false): void => {
      writeFileSync(path.join(processes, name), content);
      if (old) utimesSync(path.join(processes, name), weekAgo, weekAgo);
    };
    write(`${done}.log`, '');
    write('jp-c1764000000000123.log', 'a conversation that was removed\n');
    const kept = 'jp-c1764000000000456';
    write(`${kept}.log`, 'why the last run failed\n');
    write('jp-c1764000000000789.log', 'an old failure\n', true);
    mkdirSync(path.join(sandbox.workspace, '.jp', 'conversations', kept));
    mkdirSync(path.join(sandbox.workspace, '.jp', 'conversations', 'jp-c1764000000000789'));

    const listed = await runJp(sandbox, ['conversation', 'ls']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(existsSync(deadLock), false, 'the dead lock is gone');
    assert.equal(existsSync(stray), false, 'the stray lock temporary is gone');
    assert.deepEqual(
      readdirSync(processes)
        .filter((name) => name.endsWith('.log'))
        .sort(),
      [`${kept}.log`, `${running}.log`].sort(),
    );
    assert.ok(existsSync(path.join(locks, `${running}.lock`)), "the live run's lock stays");
    assert.equal((await runJp(sandbox, ['conversation', 'kill', running])).code, 0);
  });
});
