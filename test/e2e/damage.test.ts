/**
 * Damage on disk stays where it is (DESIGN §6, §10): a conversation whose log is a directory, a
 * FIFO or a symlink is listed as damaged, and `print` and `query` on it give a clear error, never a
 * hang, while every other conversation keeps working; a symlinked log's target is never written; a
 * damaged metadata.json is kept aside and rebuilt, never silently overwritten; `ls` reads a long
 * last event right.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createAjv, schemaProblem } from '../support/schemas.ts';
import {
  conversationIds,
  eventually,
  processAlive,
  readEvents,
  runJp,
  testProvider,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';

const cleanup = useCleanup();

interface Listed {
  id: string;
  title: string | null;
  status: string;
  state: string;
}

async function ls(sandbox: Sandbox): Promise<Listed[]> {
  // The safety limit only turns a hang into a failure; nothing here is timed.
  const result = await runJp(sandbox, ['conversation', 'ls', '--json'], { timeoutMs: 20_000 });
  assert.equal(result.code, 0, result.stderr);
  const listed = JSON.parse(result.stdout) as Listed[];
  assert.equal(schemaProblem(createAjv(), 'conversation-list.schema.json', listed), undefined);
  return listed;
}

async function newConversation(sandbox: Sandbox, message: string): Promise<string> {
  const before = new Set(conversationIds(sandbox));
  const result = await runJp(sandbox, [
    'query',
    '--new',
    ...testProvider(sandbox, { steps: [{ parts: [{ text: 'Noted.' }] }] }),
    message,
  ]);
  assert.equal(result.code, 0, result.stderr);
  const created = conversationIds(sandbox).filter((id) => !before.has(id));
  assert.equal(created.length, 1);
  return created[0]!;
}

function logPath(sandbox: Sandbox, id: string, name = 'events.ndjson'): string {
  return path.join(sandbox.workspace, '.jp', 'conversations', id, name);
}

describe('a damaged conversation log', () => {
  it('a directory, a FIFO and a symlink to /dev/zero: ls lists every conversation; print and query on a damaged one fail clearly', async () => {
    const sandbox = cleanup.sandbox();
    const healthy = await newConversation(sandbox, 'the healthy one');
    const asDirectory = await newConversation(sandbox, 'log became a directory');
    const asFifo = await newConversation(sandbox, 'log became a fifo');
    const asZero = await newConversation(sandbox, 'log became /dev/zero');
    rmSync(logPath(sandbox, asDirectory));
    mkdirSync(logPath(sandbox, asDirectory));
    rmSync(logPath(sandbox, asFifo));
    execFileSync('mkfifo', [logPath(sandbox, asFifo)]);
    rmSync(logPath(sandbox, asZero));
    symlinkSync('/dev/zero', logPath(sandbox, asZero));

    const listed = new Map((await ls(sandbox)).map((entry) => [entry.id, entry]));
    assert.equal(listed.get(healthy)?.state, 'idle');
    assert.equal(listed.get(healthy)?.title, 'the healthy one');
    assert.match(listed.get(asDirectory)!.status, /^damaged \(events\.ndjson is a directory/);
    assert.match(listed.get(asFifo)!.status, /^damaged \(events\.ndjson .*FIFO/);
    assert.match(listed.get(asZero)!.status, /^damaged \(events\.ndjson is a symbolic link/);
    for (const id of [asDirectory, asFifo, asZero]) assert.equal(listed.get(id)!.state, 'damaged');
    assert.equal(listed.get(asFifo)!.title, 'log became a fifo', 'the title still comes from metadata.json');

    const text = await runJp(sandbox, ['conversation', 'ls'], { timeoutMs: 20_000 });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`${asFifo} .* damaged \\(events\\.ndjson`));

    for (const [id, what] of [
      [asDirectory, /is a directory/],
      [asFifo, /FIFO/],
      [asZero, /symbolic link/],
    ] as const) {
      const printed = await runJp(sandbox, ['conversation', 'print', id], { timeoutMs: 20_000 });
      assert.equal(printed.code, 1, printed.stderr);
      assert.match(printed.stderr, new RegExp(`${id}/events\\.ndjson`));
      assert.match(printed.stderr, what);
      assert.doesNotMatch(printed.stderr, /bug in jp/);
      for (const mode of [[], ['--no-server']]) {
        const queried = await runJp(
          sandbox,
          ['query', ...mode, `--id=${id}`, ...testProvider(sandbox, { steps: [{ parts: [{ text: 'x' }] }] }), 'hello'],
          { timeoutMs: 20_000 },
        );
        assert.equal(queried.code, 1, queried.stderr);
        assert.match(queried.stderr, what);
        assert.doesNotMatch(queried.stderr, /bug in jp/);
      }
    }
    // The damage is left exactly as it was, and the healthy conversation still works.
    assert.equal(readdirSync(logPath(sandbox, asDirectory)).length, 0);
    const healthyAgain = await runJp(sandbox, [
      'query',
      `--id=${healthy}`,
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'Still here.' }] }] }),
      'again',
    ]);
    assert.equal(healthyAgain.code, 0, healthyAgain.stderr);
    assert.equal(healthyAgain.stdout, 'Still here.\n');
  });

  it('a symlinked log is never written through: its target keeps every byte', async () => {
    const sandbox = cleanup.sandbox();
    const id = await newConversation(sandbox, 'will be a symlink');
    // A torn last line is what the log repair would cut; the target must keep it.
    const target = path.join(sandbox.root, 'bashrc');
    const original = 'export PATH=$PATH:~/bin\nalias ll="ls -l"';
    writeFileSync(target, original);
    rmSync(logPath(sandbox, id));
    symlinkSync(target, logPath(sandbox, id));
    for (const mode of [[], ['--no-server']]) {
      const result = await runJp(sandbox, [
        'query',
        ...mode,
        `--id=${id}`,
        ...testProvider(sandbox, { steps: [{ parts: [{ text: 'x' }] }] }),
        'hi',
      ]);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /symbolic link/);
    }
    assert.equal(readFileSync(target, 'utf8'), original);
    assert.equal((await ls(sandbox)).find((entry) => entry.id === id)?.state, 'damaged');
  });
});

describe('a damaged metadata.json', () => {
  it('is kept aside byte for byte and rebuilt from the log; the title is kept', async () => {
    const sandbox = cleanup.sandbox();
    const id = await newConversation(sandbox, 'Summarise the release notes');
    const damaged = `{\n  "id": "${id}",\n  "title": "Summarise the release notes",\n  "created_at": "2025-`;
    writeFileSync(logPath(sandbox, id, 'metadata.json'), damaged);
    // Listing rebuilds it in memory only.
    assert.equal((await ls(sandbox)).find((entry) => entry.id === id)?.title, 'Summarise the release notes');
    assert.equal(readFileSync(logPath(sandbox, id, 'metadata.json'), 'utf8'), damaged);

    const result = await runJp(sandbox, [
      'query',
      `--id=${id}`,
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] }),
      'a follow-up question',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const directory = path.dirname(logPath(sandbox, id));
    const kept = readdirSync(directory).filter((name) => name.startsWith('metadata.json.damaged-'));
    assert.equal(kept.length, 1, readdirSync(directory).join(', '));
    assert.equal(readFileSync(path.join(directory, kept[0]!), 'utf8'), damaged);
    const rebuilt = JSON.parse(readFileSync(logPath(sandbox, id, 'metadata.json'), 'utf8'));
    assert.equal(rebuilt.id, id);
    assert.equal(rebuilt.title, 'Summarise the release notes');
  });

  it('with no title left in it, the title is derived from the log', async () => {
    const sandbox = cleanup.sandbox();
    const id = await newConversation(sandbox, 'Explain the failing build\nwith details');
    const damaged = Buffer.from([0x00, 0xff, 0x7b, 0x22, 0x0a, 0x13]);
    writeFileSync(logPath(sandbox, id, 'metadata.json'), damaged);
    assert.equal((await ls(sandbox)).find((entry) => entry.id === id)?.title, 'Explain the failing build');
    const result = await runJp(sandbox, [
      'query',
      '--no-server',
      `--id=${id}`,
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] }),
      'something else',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const directory = path.dirname(logPath(sandbox, id));
    const kept = readdirSync(directory).filter((name) => name.startsWith('metadata.json.damaged-'));
    assert.deepEqual(readFileSync(path.join(directory, kept[0]!)), damaged);
    assert.equal(
      JSON.parse(readFileSync(logPath(sandbox, id, 'metadata.json'), 'utf8')).title,
      'Explain the failing build',
    );
  });
});

describe('ls and a long last event', () => {
  it('SIGKILL after a 20 KB tool result: ls says interrupted, not idle', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('big.txt', 'x'.repeat(20_000));
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_read_file', arguments: { path: 'big.txt' } } }] },
        { parts: [{ delay_ms: 120_000 }, { text: 'never' }] },
      ],
    });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'read it']);
    assert.equal(detached.code, 0, detached.stderr);
    const id = detached.stdout.trim();
    await eventually('the tool result in the log', () =>
      readEvents(sandbox, id).some((event) => event.type === 'tool_call_response'),
    );
    const entry = JSON.parse(readFileSync(path.join(sandbox.userDirectory(), 'processes', `${id}.json`), 'utf8')) as {
      pid: number;
    };
    process.kill(entry.pid, 'SIGKILL');
    await eventually('the server to be gone', () => !processAlive(entry.pid));
    const last = readFileSync(logPath(sandbox, id), 'utf8').trimEnd().split('\n').pop()!;
    assert.ok(Buffer.byteLength(last) > 16 * 1024, 'the last event is longer than 16 KiB');
    const listed = (await ls(sandbox)).find((conversation) => conversation.id === id);
    assert.equal(listed?.status, 'interrupted (awaiting LLM response)');
    assert.equal(
      existsSync(path.join(sandbox.userDirectory(), 'processes', `${id}.json`)),
      false,
      'the stale entry was cleaned',
    );
  });
});
