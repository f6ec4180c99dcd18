/**
 * After a defer, or a kill -9 while a command ran, a plain `jp query "x"` is still refused (exit 2:
 * a person must decide), and the refusal is a short aligned menu of the exact commands that go on
 * from there. An unfinished turn that holds nothing to decide is closed instead (DESIGN §7).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conversationIds, eventually, readEvents, runJp, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

/** The menu lines (after the error line), and the column where each line's explanation starts. */
function menu(stderr: string): { commands: string[]; columns: number[] } {
  const lines = stderr.trimEnd().split('\n').slice(1);
  const parsed = lines.map((line) => /^ {2}(\S.*?\S)( {3,})(\S.*)$/.exec(line));
  assert.ok(parsed.every(Boolean), `every menu line is "  <command>   <what it does>":\n${stderr}`);
  return {
    commands: parsed.map((match) => match![1]!),
    columns: parsed.map((match) => match![1]!.length + match![2]!.length),
  };
}

describe('a new message on an incomplete turn, with no terminal', () => {
  it('after a defer: exit 2, nothing sent, an aligned menu of exact commands with the message', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a' } } }] }],
    });
    const deferred = await runJp(sandbox, [
      'query',
      ...script,
      '-c',
      'conversation.tools.defaults.detached="defer"',
      'make a',
    ]);
    assert.equal(deferred.code, 4, deferred.stderr);
    const [conversationId] = conversationIds(sandbox);
    const before = readEvents(sandbox, conversationId!).length;

    const refused = await runJp(sandbox, ['query', ...script, 'x']);
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr,
      new RegExp(
        `^error: conversation ${conversationId} has an incomplete turn \\(pending inquiry\\); nothing was sent`,
      ),
    );
    assert.doesNotMatch(refused.stderr, /a new message is sent after it completes/);
    const { commands, columns } = menu(refused.stderr);
    assert.deepEqual(commands, ['jp query --continue', 'jp query --discard-turn "x"', 'jp query --new "x"']);
    assert.equal(new Set(columns).size, 1, `the explanations start in one column:\n${refused.stderr}`);
    assert.equal(readEvents(sandbox, conversationId!).length, before, 'nothing was written to the conversation');

    const byId = await runJp(sandbox, ['query', `--id=${conversationId}`, ...script, "it's $HOME"]);
    assert.equal(byId.code, 2);
    assert.deepEqual(menu(byId.stderr).commands, [
      `jp query --continue --id=${conversationId}`,
      `jp query --discard-turn --id=${conversationId} 'it'\\''s $HOME'`,
      `jp query --new 'it'\\''s $HOME'`,
    ]);
  });

  it('after a kill -9 while a command ran: the same menu, naming the call whose outcome is unknown', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [{ tool_call: { name: 'run_command', arguments: { command: 'touch started.txt; sleep 60' } } }],
        },
      ],
    });
    const detached = await runJp(sandbox, [
      'query',
      '--detach',
      ...script,
      '-c',
      'conversation.tools.defaults.detached="auto"',
      '--sandbox=off',
      'long',
    ]);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    await eventually('the command started', () => sandbox.exists('started.txt'));
    assert.equal((await runJp(sandbox, ['conversation', 'kill', '--force', conversationId])).code, 0);
    const before = readEvents(sandbox, conversationId).length;

    const refused = await runJp(sandbox, ['query', ...script, 'x']);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /has an incomplete turn \(a run_command call that may or may not have taken effect\); nothing was sent/,
    );
    const { commands, columns } = menu(refused.stderr);
    assert.deepEqual(commands, ['jp query --continue', 'jp query --discard-turn "x"', 'jp query --new "x"']);
    assert.equal(new Set(columns).size, 1);
    assert.equal(readEvents(sandbox, conversationId).length, before, 'nothing was written to the conversation');

    const fresh = testProvider(sandbox, { steps: [{ parts: [{ text: 'fresh' }] }] }, 'fresh.json');
    const discarded = await runJp(sandbox, ['query', '--discard-turn', ...fresh, 'x']);
    assert.equal(discarded.code, 0, discarded.stderr);
    assert.equal(discarded.stdout, 'fresh\n');
  });
});

describe('a new message on an unfinished turn that holds nothing to decide', () => {
  it('after a kill while the model answered: no menu; the turn is closed (kept) and the message goes ahead', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [{ text: 'Started.\n\n' }, { delay_ms: 60_000 }, { text: 'never' }] }],
    });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'long']);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    await eventually('streaming started', () =>
      readEvents(sandbox, conversationId).some((event) => event.type === 'chat_response'),
    );
    assert.equal((await runJp(sandbox, ['conversation', 'kill', conversationId])).code, 0);

    const fresh = testProvider(sandbox, { steps: [{ parts: [{ text: 'fresh' }] }] }, 'fresh.json');
    const next = await runJp(sandbox, ['query', ...fresh, 'x']);
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.stdout, 'fresh\n');
    assert.match(
      next.stderr,
      /^Closing the unfinished turn of jp-c\d+ \(awaiting LLM response; nothing in it to decide\)/,
    );
    const events = readEvents(sandbox, conversationId);
    assert.ok(events.some((event) => event.type === 'chat_response' && event.message === 'Started.\n\n'));
    assert.ok(events.some((event) => event.type === 'turn_end' && event.closed === true));
  });
});
