/**
 * What a dead run leaves behind is cleaned up, never reported as an error: `kill` on a stale
 * registry entry (RFD 024: "cleaned up silently"), on a conversation that is not running, and the
 * sweep of dead locks and per-run logs (`processes/<cid>.log`).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { conversationIds, runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

/** A conversation with one complete turn. */
async function finishedConversation(sandbox: Sandbox): Promise<string> {
  const done = await runJp(sandbox, ['query', ...testProvider(sandbox, { steps: [{ parts: [{ text: 'done' }] }] }), 'hi']);
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
  writeFileSync(lock, JSON.stringify({ pid: process.pid, start_time: 'a-start-time-this-pid-never-had', host: os.hostname(), acquired_at: new Date().toISOString(), role: 'server', detached: true }));
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
