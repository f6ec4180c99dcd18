/**
 * Scripts, cron and CI (DESIGN §7): a headless run (no terminal, no JP_SESSION) has no session, so
 * each `jp query` starts its own conversation unless it names one; `JP_SESSION` chains runs on
 * purpose; and a run that failed never blocks the next one unless a person must decide something.
 * Every run here is as cron makes it: a new session (setsid), no terminal, stdin /dev/null.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startFakeProvider } from '../support/fake-provider.ts';
import {
  conversationIds,
  fakeModelArguments,
  readEvents,
  runJp,
  type Sandbox,
  testProvider,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();

/** The environment of a headless run: the sandbox's, without JP_SESSION. */
const headless = { JP_SESSION: undefined };

function chatRequests(sandbox: Sandbox, conversationId: string): string[] {
  return readEvents(sandbox, conversationId)
    .filter((event) => event.type === 'chat_request')
    .map((event) => event.content as string);
}

describe('headless runs stand on their own', () => {
  it('twenty headless queries in a loop are twenty conversations, each sent only its own message', async () => {
    const sandbox = cleanup.sandbox();
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [{ parts: [{ text: 'ok' }] }] });
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const ids: string[] = [];
    for (let index = 0; index < 20; index++) {
      const run = await runJp(sandbox, ['query', '--json', ...model.args, `job ${index}`], {
        env: { ...model.env, ...headless },
      });
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
      assert.equal(result.status, 'success');
      ids.push(result.conversation_id);
    }
    assert.equal(new Set(ids).size, 20, 'every result names its own conversation');
    assert.deepEqual(conversationIds(sandbox), [...ids].sort());
    for (const [index, id] of ids.entries()) assert.deepEqual(chatRequests(sandbox, id), [`job ${index}`]);
    assert.equal(provider.requests.length, 20);
    for (const [index, request] of provider.requests.entries()) {
      const users = request.messages.filter((message) => message.role === 'user').map((message) => message.text);
      assert.deepEqual(users, [`job ${index}`], 'no history of other runs rides along');
    }
  });

  it('JP_SESSION chains headless runs into one conversation; another JP_SESSION and no JP_SESSION stay apart', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    for (const message of ['one', 'two', 'three']) {
      const run = await runJp(sandbox, ['query', ...script, message], { env: { JP_SESSION: 'nightly' } });
      assert.equal(run.code, 0, run.stderr);
    }
    const other = await runJp(sandbox, ['query', ...script, 'elsewhere'], { env: { JP_SESSION: 'weekly' } });
    assert.equal(other.code, 0, other.stderr);
    const alone = await runJp(sandbox, ['query', ...script, 'alone'], { env: headless });
    assert.equal(alone.code, 0, alone.stderr);
    const byMessages = conversationIds(sandbox).map((id) => chatRequests(sandbox, id));
    assert.deepEqual(byMessages, [['one', 'two', 'three'], ['elsewhere'], ['alone']]);
  });

  it('a headless run names a conversation with --id, --continue --id or --fork=<cid>', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    const first = await runJp(sandbox, ['query', '--json', ...script, 'first'], { env: headless });
    const id = JSON.parse(first.stdout.trim().split('\n').pop()!).conversation_id as string;
    const follow = await runJp(sandbox, ['query', ...script, `--id=${id}`, 'second'], { env: headless });
    assert.equal(follow.code, 0, follow.stderr);
    assert.deepEqual(chatRequests(sandbox, id), ['first', 'second']);
    const fork = await runJp(sandbox, ['query', ...script, `--fork=${id}`, 'branch'], { env: headless });
    assert.equal(fork.code, 0, fork.stderr);
    const forkId = conversationIds(sandbox).find((other) => other !== id)!;
    assert.deepEqual(chatRequests(sandbox, forkId), ['first', 'second', 'branch']);

    const deferring = testProvider(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a' } } }] },
          { parts: [{ text: 'made it' }] },
        ],
      },
      'defer.json',
    );
    const deferred = await runJp(
      sandbox,
      ['query', '--json', ...deferring, '-c', 'conversation.tools.defaults.detached="defer"', 'make a'],
      { env: headless },
    );
    assert.equal(deferred.code, 4, deferred.stderr);
    const deferredId = JSON.parse(deferred.stdout.trim().split('\n').pop()!).conversation_id as string;
    const resumed = await runJp(
      sandbox,
      ['query', '--continue', `--id=${deferredId}`, '-c', 'conversation.tools.fs_create_file.detached.run="auto"'],
      { env: headless },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, 'made it\n');
    assert.equal(sandbox.read('a.txt'), 'a');
  });

  it('every command that would use the active conversation says clearly there is none, and how to go on', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    // A conversation exists, and a session that has it active: a headless run still has none.
    assert.equal((await runJp(sandbox, ['query', ...script, 'hi'])).code, 0);
    const [id] = conversationIds(sandbox);
    const commands = [
      ['conversation', 'print'],
      ['conversation', 'attach'],
      ['conversation', 'wait'],
      ['conversation', 'kill'],
      ['conversation', 'compact'],
      ['query', '--continue', ...script],
      ['query', '--fork', ...script, 'x'],
    ];
    for (const command of commands) {
      const run = await runJp(sandbox, command, { env: headless });
      assert.equal(run.code, 2, `${command.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /none is active: with no terminal and no JP_SESSION this run has no session/);
      assert.match(run.stderr, /--id=<cid>/, 'says how to name one');
      assert.match(run.stderr, /JP_SESSION=<name>/, 'says how to chain runs');
    }
    const use = await runJp(sandbox, ['conversation', 'use', id!], { env: headless });
    assert.equal(use.code, 2, use.stderr);
    assert.match(use.stderr, /no session to remember it in/);
    assert.equal(conversationIds(sandbox).length, 1, 'nothing was created by the refused commands');
  });

  it('wait and kill without an id use the active conversation of the session, as print and attach do', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [{ text: 'Started.\n\n' }, { delay_ms: 60_000 }, { text: 'never' }] }],
    });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'long']);
    assert.equal(detached.code, 0, detached.stderr);
    const id = detached.stdout.trim();
    const killed = await runJp(sandbox, ['conversation', 'kill']);
    assert.equal(killed.code, 0, killed.stderr);
    assert.match(killed.stderr, new RegExp(`Stopped ${id} \\(pid \\d+\\)`));
    const waited = await runJp(sandbox, ['conversation', 'wait']);
    const said = new RegExp(`^${id}: interrupted \\(exit (\\d+)\\)`).exec(waited.stderr);
    assert.ok(said, waited.stderr);
    assert.equal(waited.code, Number(said[1]), 'exits with the code of the run it waited for');
    assert.notEqual(waited.code, 0);
  });
});

describe('only a decision blocks a new message', () => {
  it('a run after an exit-6 run succeeds: the failed turn is closed as interrupted, kept and printable, with one line on stderr', async () => {
    const sandbox = cleanup.sandbox();
    let up = false;
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: () => (up ? { parts: [{ text: 'back up' }] } : { status: 503 }),
    });
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const args = ['query', ...model.args, '-c', 'assistant.request.max_retries=0'];
    const env = { ...model.env, JP_SESSION: 'nightly' };
    const down = await runJp(sandbox, [...args, 'first night'], { env });
    assert.equal(down.code, 6, down.stderr);
    const [id] = conversationIds(sandbox);

    up = true;
    const next = await runJp(sandbox, [...args, 'second night'], { env });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.stdout, 'back up\n');
    const notes = next.stderr.split('\n').filter((line) => /unfinished turn/.test(line));
    assert.equal(notes.length, 1, next.stderr);
    assert.match(notes[0]!, new RegExp(`Closing the unfinished turn of ${id} \\(awaiting LLM response`));
    assert.deepEqual(conversationIds(sandbox), [id], 'the same conversation went on');

    const events = readEvents(sandbox, id!);
    const closed = events.findIndex((event) => event.type === 'turn_end' && event.closed === true);
    assert.ok(closed > 0, 'the failed turn ends with a closing turn_end');
    assert.equal(events[closed]!.status, 'interrupted');
    assert.equal(events[closed + 1]!.type, 'turn_start', 'the new turn starts right after it');
    assert.deepEqual(chatRequests(sandbox, id!), ['first night', 'second night']);
    const status = await runJp(sandbox, ['conversation', 'ls', '--json']);
    assert.equal(JSON.parse(status.stdout)[0].status, 'idle');
    const printed = await runJp(sandbox, ['conversation', 'print', id!]);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout + printed.stderr, /first night[\s\S]*\[interrupted\][\s\S]*second night/);
  });

  it('a call that started with no result and is free of side effects is no decision: closed, the call reported not run', async () => {
    const sandbox = cleanup.sandbox();
    const id = 'jp-c1767225600000001';
    const ts = '2026-01-01T00:00:00.000Z';
    sandbox.write(
      `.jp/conversations/${id}/events.ndjson`,
      [
        { type: 'turn_start', timestamp: ts },
        { type: 'chat_request', timestamp: ts, content: 'read it' },
        { type: 'tool_call_request', timestamp: ts, id: 'call-1', name: 'fs_read_file', arguments: { path: 'a' } },
        { type: 'tool_call_start', timestamp: ts, id: 'call-1' },
      ]
        .map((event) => JSON.stringify(event) + '\n')
        .join(''),
    );
    sandbox.write(
      `.jp/conversations/${id}/metadata.json`,
      JSON.stringify({ id, title: 'read it', created_at: ts, updated_at: ts }),
    );
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'fresh' }] }] });
    const run = await runJp(sandbox, ['query', ...script, `--id=${id}`, 'something else']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'fresh\n');
    const response = readEvents(sandbox, id).find((event) => event.type === 'tool_call_response')!;
    assert.equal(response.id, 'call-1');
    assert.equal(response.outcome, 'skipped');
    assert.match(response.content, /No result: jp stopped before this call ran or finished/);
  });

  it('a pending inquiry still blocks, with the three ways out, and nothing is written', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a' } } }] }],
    });
    const deferred = await runJp(
      sandbox,
      ['query', ...script, '-c', 'conversation.tools.defaults.detached="defer"', 'make a'],
      { env: { JP_SESSION: 'nightly' } },
    );
    assert.equal(deferred.code, 4, deferred.stderr);
    const [id] = conversationIds(sandbox);
    const before = readEvents(sandbox, id!).length;
    const refused = await runJp(sandbox, ['query', ...script, 'x'], { env: { JP_SESSION: 'nightly' } });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /has an incomplete turn \(pending inquiry\); nothing was sent/);
    for (const way of ['jp query --continue ', 'jp query --discard-turn "x"', 'jp query --new "x"'])
      assert.ok(refused.stderr.includes(way), `${way} in:\n${refused.stderr}`);
    assert.equal(readEvents(sandbox, id!).length, before);
  });

  it('a call with side effects that started and has no result still blocks: its outcome is unknown', async () => {
    const sandbox = cleanup.sandbox();
    const id = 'jp-c1767225600000002';
    const ts = '2026-01-01T00:00:00.000Z';
    sandbox.write(
      `.jp/conversations/${id}/events.ndjson`,
      [
        { type: 'turn_start', timestamp: ts },
        { type: 'chat_request', timestamp: ts, content: 'deploy' },
        { type: 'tool_call_request', timestamp: ts, id: 'call-1', name: 'run_command', arguments: { command: 'x' } },
        { type: 'tool_call_start', timestamp: ts, id: 'call-1' },
      ]
        .map((event) => JSON.stringify(event) + '\n')
        .join(''),
    );
    sandbox.write(
      `.jp/conversations/${id}/metadata.json`,
      JSON.stringify({ id, title: 'deploy', created_at: ts, updated_at: ts }),
    );
    const before = readEvents(sandbox, id).length;
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'fresh' }] }] });
    const refused = await runJp(sandbox, ['query', ...script, `--id=${id}`, 'again']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /a run_command call that may or may not have taken effect\); nothing was sent/);
    assert.match(refused.stderr, new RegExp(`jp query --continue --id=${id}`));
    assert.equal(readEvents(sandbox, id).length, before);
  });
});
