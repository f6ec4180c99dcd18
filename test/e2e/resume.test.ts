/**
 * Resumable turns: defer and --continue, incomplete turns met by a new message, --discard-turn,
 * SIGINT / SIGTERM during streaming and tools, and per-terminal sessions.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, stepByToolResults, textStep, toolStep } from '../support/fake-provider.ts';
import {
  collect,
  conversationIds,
  eventually,
  fakeModelArguments,
  jpBinary,
  readEvents,
  runJp,
  type Sandbox,
  startJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { runInTerminal, shellQuote } from '../support/pty.ts';

const cleanup = useCleanup();
const sandboxed = cleanup.sandbox;

async function ls(sandbox: Sandbox): Promise<{ id: string; status: string }[]> {
  const result = await runJp(sandbox, ['conversation', 'ls', '--json']);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

describe('defer round trip', () => {
  it('no terminal, policy defer, two tools of which one needs permission: the other runs, exit 4; --continue in a terminal prompts; y completes', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: stepByToolResults([
        toolStep([
          { name: 'fs_create_file', arguments: { path: 'needs-permission.txt', content: 'yes' } },
          { name: 'fs_read_file', arguments: { path: 'input.txt' } },
        ]),
        textStep('Both done.'),
      ]),
    });
    cleanup.add(() => provider.close());
    const sandbox = sandboxed();
    sandbox.write('input.txt', 'input contents');
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const deferred = await runJp(
      sandbox,
      ['query', '--json', ...model.args, '-c', 'conversation.tools.defaults.detached="defer"', 'do both'],
      { env: model.env },
    );
    assert.equal(deferred.code, 4, deferred.stderr);
    const result = JSON.parse(deferred.stdout.trim().split('\n').pop()!);
    assert.equal(result.status, 'deferred');
    assert.equal(result.pending_inquiry.tool, 'fs_create_file');
    assert.equal(result.pending_inquiry.kind, 'run_tool');
    assert.match(deferred.stderr, /jp query --continue --id=jp-c/);
    assert.equal(existsSync(path.join(sandbox.workspace, 'needs-permission.txt')), false);
    const conversationId = result.conversation_id;
    let events = readEvents(sandbox, conversationId);
    const readResponse = events.find((event) => event.type === 'tool_call_response');
    assert.equal(readResponse?.content, '1\tinput contents', 'the other tool of the batch ran and was persisted');
    assert.equal((await ls(sandbox))[0]!.status, 'waiting-for-input (fs_create_file)');

    // Still no human and still defer: exit 4 again, nothing duplicated.
    const before = readEvents(sandbox, conversationId);
    const again = await runJp(
      sandbox,
      ['query', '--continue', `--id=${conversationId}`, '-c', 'conversation.tools.defaults.detached="defer"'],
      { env: model.env },
    );
    assert.equal(again.code, 4, again.stderr);
    assert.deepEqual(readEvents(sandbox, conversationId), before);

    const terminal = runInTerminal(
      sandbox,
      `node ${shellQuote(jpBinary)} query --continue --id=${conversationId} ${model.args.map(shellQuote).join(' ')}; echo EXIT=$?`,
      { env: model.env },
    );
    await terminal.waitFor('Run fs_create_file?');
    terminal.write('y');
    await terminal.waitFor(/EXIT=\d+/);
    assert.match(terminal.text(), /EXIT=0/);
    assert.equal(sandbox.read('needs-permission.txt'), 'yes');
    events = readEvents(sandbox, conversationId);
    assert.equal(
      events.filter((event) => event.type === 'tool_call_response').length,
      2,
      'each tool answered exactly once',
    );
    assert.equal(events[events.length - 1]!.status, 'completed');
    assert.equal((await ls(sandbox))[0]!.status, 'idle');
  });
});

describe('incomplete turns', () => {
  const deferredScript = {
    steps: [
      { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a' } } }] },
      { parts: [{ text: 'resumed answer' }] },
    ],
  };

  it('a new message on an incomplete turn with no terminal exits 2 naming the flags; --discard-turn drops it', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, deferredScript);
    const first = await runJp(sandbox, [
      'query',
      ...script,
      '-c',
      'conversation.tools.defaults.detached="defer"',
      'make a',
    ]);
    assert.equal(first.code, 4, first.stderr);
    const [conversationId] = conversationIds(sandbox);
    const refused = await runJp(sandbox, ['query', ...script, 'something else']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /has an incomplete turn \(pending inquiry\)/);
    assert.match(refused.stderr, /--continue/);
    assert.match(refused.stderr, /--discard-turn/);
    const discarded = await runJp(sandbox, [
      'query',
      '--discard-turn',
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'fresh' }] }] }, 'fresh.json'),
      'something else',
    ]);
    assert.equal(discarded.code, 0, discarded.stderr);
    assert.equal(discarded.stdout, 'fresh\n');
    const events = readEvents(sandbox, conversationId!);
    assert.ok(
      events.some((event) => event.type === 'turn_end' && event.status === 'discarded'),
      'the turn is marked discarded, its events kept',
    );
    assert.ok(
      events.some((event) => event.type === 'inquiry_request'),
      'discarded events stay on disk',
    );
    assert.equal((await ls(sandbox))[0]!.status, 'idle');
  });

  it('at a terminal, a new message on an incomplete turn asks: resume, discard or cancel', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, deferredScript);
    assert.equal(
      (await runJp(sandbox, ['query', ...script, '-c', 'conversation.tools.defaults.detached="defer"', 'make a'])).code,
      4,
    );
    const [conversationId] = conversationIds(sandbox);
    const fresh = testProvider(sandbox, { steps: [{ parts: [{ text: 'fresh answer' }] }] }, 'fresh.json');
    const terminal = runInTerminal(
      sandbox,
      `node ${shellQuote(jpBinary)} query ${fresh.map(shellQuote).join(' ')} 'another message' > out.txt; echo EXIT=$?`,
    );
    await terminal.waitFor('has an incomplete turn (pending inquiry)');
    await terminal.waitFor('cancel: do nothing');
    terminal.write('\u001b[B\r');
    await terminal.waitFor(/EXIT=\d+/);
    assert.match(terminal.text(), /EXIT=0/);
    assert.equal(sandbox.read('out.txt'), 'fresh answer\n');
    const events = readEvents(sandbox, conversationId!);
    assert.ok(events.some((event) => event.type === 'turn_end' && event.status === 'discarded'));
  });

  it('--continue with nothing to continue is a usage error', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'done' }] }] });
    assert.equal((await runJp(sandbox, ['query', ...script, 'hi'])).code, 0);
    const result = await runJp(sandbox, ['query', '--continue', ...script]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /no incomplete turn to continue/);
  });

  it('--continue keeps the model and settings the conversation was started with', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, deferredScript);
    assert.equal(
      (await runJp(sandbox, ['query', ...script, '-c', 'conversation.tools.defaults.detached="defer"', 'make a'])).code,
      4,
    );
    const resumed = await runJp(sandbox, [
      'query',
      '--continue',
      '-c',
      'conversation.tools.fs_create_file.detached.run="auto"',
    ]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, 'resumed answer\n');
    assert.equal(sandbox.read('a.txt'), 'a');
  });
});

describe('signals', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    for (const mode of ['server', 'no-server'] as const) {
      it(`${signal} during streaming (${mode}): partial response persisted, turn interrupted, exit ${code}, resumable`, async () => {
        const sandbox = sandboxed();
        const script = testProvider(sandbox, {
          steps: [
            { parts: [{ text: 'The beginning of a long answer.\n\n' }, { delay_ms: 60_000 }, { text: 'never sent' }] },
          ],
        });
        const args = ['query', ...(mode === 'no-server' ? ['--no-server'] : []), ...script, 'long question'];
        const child = startJp(sandbox, args);
        const finished = collect(child, args, 30_000);
        await eventually('the first paragraph is persisted', () => {
          const [id] = conversationIds(sandbox);
          return id && readEvents(sandbox, id).some((event) => event.type === 'chat_response');
        });
        process.kill(child.pid!, signal);
        const result = await finished;
        assert.equal(result.code, code, result.stderr);
        assert.match(result.stderr, /interrupted/);
        const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
        assert.equal(
          events.find((event) => event.type === 'chat_response')!.message,
          'The beginning of a long answer.\n\n',
        );
        const end = events[events.length - 1]!;
        assert.deepEqual([end.type, end.status, end.exit_code], ['turn_end', 'interrupted', code]);
        assert.equal((await ls(sandbox))[0]!.status, 'interrupted (awaiting LLM response)');
        assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationIds(sandbox)[0]!])).code, code);
      });
    }
  }

  it('SIGTERM while a tool runs kills its process group and reports the call as interrupted', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            {
              tool_call: {
                name: 'run_command',
                arguments: { command: 'echo $$ > tool.pid; sleep 60 & echo $! > child.pid; wait' },
              },
            },
          ],
        },
        { parts: [{ text: 'x' }] },
      ],
    });
    // --sandbox off: the test checks host pids the command writes; in the sandbox they would be pids of its own namespace.
    const args = [
      'query',
      ...script,
      '--sandbox',
      'off',
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'run it',
    ];
    const child = startJp(sandbox, args);
    const finished = collect(child, args, 30_000);
    await eventually(
      'the tool started its child',
      () => sandbox.exists('child.pid') && sandbox.read('child.pid').trim() !== '',
    );
    const toolChild = Number(sandbox.read('child.pid').trim());
    process.kill(child.pid!, 'SIGTERM');
    const result = await finished;
    assert.equal(result.code, 143, result.stderr);
    await eventually('the tool subprocess is gone', () => {
      try {
        process.kill(toolChild, 0);
        return false;
      } catch {
        return true;
      }
    });
    const resumed = await runJp(sandbox, ['query', '--continue']);
    assert.equal(resumed.code, 0, resumed.stderr);
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    const responses = events.filter((event) => event.type === 'tool_call_response');
    assert.equal(responses.length, 1, 'answered exactly once');
    assert.equal(responses[0]!.outcome, 'unknown', 'a side-effecting tool that may have run is never silently re-run');
    assert.match(responses[0]!.content, /Outcome unknown/);
  });
});

describe('sessions', () => {
  it('JP_SESSION=a and JP_SESSION=b alternate queries without touching each other', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    const run = (session: string, message: string) =>
      runJp(sandbox, ['query', ...script, message], { env: { JP_SESSION: session } });
    assert.equal((await run('a', 'a1')).code, 0);
    assert.equal((await run('b', 'b1')).code, 0);
    assert.equal((await run('a', 'a2')).code, 0);
    assert.equal((await run('b', 'b2')).code, 0);
    const ids = conversationIds(sandbox);
    assert.equal(ids.length, 2);
    const contents = ids.map((id) =>
      readEvents(sandbox, id)
        .filter((event) => event.type === 'chat_request')
        .map((event) => event.content),
    );
    assert.deepEqual(contents.sort(), [
      ['a1', 'a2'],
      ['b1', 'b2'],
    ]);
    const listedForA = JSON.parse(
      (await runJp(sandbox, ['conversation', 'ls', '--json'], { env: { JP_SESSION: 'a' } })).stdout,
    );
    assert.equal(listedForA.filter((entry: { active: boolean }) => entry.active).length, 1);
  });

  it('--new, --id, --fork and `conversation use` target conversations as asked', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    assert.equal((await runJp(sandbox, ['query', ...script, 'first'])).code, 0);
    const [first] = conversationIds(sandbox);
    assert.equal((await runJp(sandbox, ['query', '--new', ...script, 'second'])).code, 0);
    const second = conversationIds(sandbox).find((id) => id !== first)!;
    assert.equal((await runJp(sandbox, ['query', `--id=${first}`, ...script, 'first again'])).code, 0);
    assert.equal((await runJp(sandbox, ['query', `--fork=${first}`, ...script, 'forked'])).code, 0);
    const fork = conversationIds(sandbox).find((id) => id !== first && id !== second)!;
    assert.deepEqual(
      readEvents(sandbox, fork)
        .filter((event) => event.type === 'chat_request')
        .map((event) => event.content),
      ['first', 'first again', 'forked'],
    );
    assert.equal((await runJp(sandbox, ['conversation', 'use', second])).code, 0);
    assert.equal((await runJp(sandbox, ['query', ...script, 'to second'])).code, 0);
    assert.deepEqual(
      readEvents(sandbox, second)
        .filter((event) => event.type === 'chat_request')
        .map((event) => event.content),
      ['second', 'to second'],
    );
    const missing = await runJp(sandbox, ['query', '--id=jp-c1111111111111111', ...script, 'x']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no conversation jp-c1111111111111111/);
  });
});
