/**
 * RFD 024's forms of naming a conversation: every conversation subcommand takes `--id=<cid>` as
 * well as `<cid>`, and `jp query --fork` takes its conversation only attached (`--fork=<cid>`), so
 * `jp query --fork "msg"` forks the active conversation and sends "msg".
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  collect,
  conversationIds,
  eventually,
  readEvents,
  runJp,
  startJp,
  testProvider,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';

const cleanup = useCleanup();

function userMessages(sandbox: Sandbox, conversationId: string): string[] {
  return readEvents(sandbox, conversationId)
    .filter((event) => event.type === 'chat_request')
    .map((event) => event.content as string);
}

describe('jp query --fork', () => {
  it('a bare --fork forks the active conversation; the word after it is the message, before or after the flag', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'answer' }] }] });
    assert.equal((await runJp(sandbox, ['query', ...script, 'first'])).code, 0);
    const [original] = conversationIds(sandbox);

    const forked = await runJp(sandbox, ['query', '--fork', 'msg', ...script]);
    assert.equal(forked.code, 0, forked.stderr);
    assert.equal(forked.stdout, 'answer\n');
    const fork = conversationIds(sandbox).find((id) => id !== original)!;
    assert.deepEqual(userMessages(sandbox, fork), ['first', 'msg']);
    assert.deepEqual(userMessages(sandbox, original!), ['first'], 'the original is untouched');

    const after = await runJp(sandbox, ['query', ...script, 'second', '--fork']);
    assert.equal(after.code, 0, after.stderr);
    const third = conversationIds(sandbox).find((id) => id !== original && id !== fork)!;
    assert.deepEqual(
      userMessages(sandbox, third),
      ['first', 'msg', 'second'],
      'forked from the active conversation, the first fork',
    );

    const named = await runJp(sandbox, ['query', `--fork=${original}`, ...script, 'from the original']);
    assert.equal(named.code, 0, named.stderr);
    assert.equal(conversationIds(sandbox).length, 4);
    const fourth = conversationIds(sandbox).find((id) => ![original, fork, third].includes(id))!;
    assert.deepEqual(userMessages(sandbox, fourth), ['first', 'from the original']);
  });
});

describe('--id=<cid> on every conversation subcommand', () => {
  it('print --id=<cid> --last prints what print <cid> --last prints', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'the answer' }] }] });
    assert.equal((await runJp(sandbox, ['query', ...script, 'one'])).code, 0);
    assert.equal((await runJp(sandbox, ['query', '--new', ...script, 'two'])).code, 0);
    const [first] = conversationIds(sandbox);
    const byOption = await runJp(sandbox, ['conversation', 'print', `--id=${first}`, '--last']);
    const byArgument = await runJp(sandbox, ['conversation', 'print', first!, '--last']);
    assert.equal(byOption.code, 0, byOption.stderr);
    assert.equal(byOption.stdout, 'the answer\n');
    assert.deepEqual(byOption, byArgument);
    assert.match(byOption.stderr, /one/, 'the first conversation, not the active one');
  });

  it('attach, kill and wait take --id: watch a running run, stop it, and get its exit code', async () => {
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

    const attach = startJp(sandbox, ['conversation', 'attach', `--id=${conversationId}`, '--read-only']);
    let attachOutput = '';
    attach.stdout!.on('data', (chunk: Buffer) => (attachOutput += chunk.toString()));
    const attached = collect(attach, ['attach'], 60_000);
    await eventually('attach shows the run', () => attachOutput.includes('Started.'));
    const killed = await runJp(sandbox, ['conversation', 'kill', `--id=${conversationId}`]);
    assert.equal(killed.code, 0, killed.stderr);
    const attachResult = await attached;
    assert.equal(attachResult.code, 143, attachResult.stderr);
    const waited = await runJp(sandbox, ['conversation', 'wait', `--id=${conversationId}`]);
    assert.equal(waited.code, 143, waited.stderr);
  });

  it('use, fork and rm take --id; <cid> and --id together must agree; a missing id says how to give one', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'a' }] }] });
    assert.equal((await runJp(sandbox, ['query', ...script, 'one'])).code, 0);
    const [first] = conversationIds(sandbox);

    assert.equal((await runJp(sandbox, ['conversation', 'use', `--id=${first}`])).code, 0);
    const forked = await runJp(sandbox, ['conversation', 'fork', '--id', first!]);
    assert.equal(forked.code, 0, forked.stderr);
    const copy = forked.stdout.trim();
    assert.deepEqual(conversationIds(sandbox), [first, copy].sort());

    const conflict = await runJp(sandbox, ['conversation', 'rm', first!, `--id=${copy}`]);
    assert.equal(conflict.code, 2);
    assert.match(conflict.stderr, /two conversations given/);
    assert.equal(
      (await runJp(sandbox, ['conversation', 'rm', first!, `--id=${first}`])).code,
      0,
      'the same id twice is fine',
    );
    assert.equal((await runJp(sandbox, ['conversation', 'rm', `--id=${copy}`])).code, 0);
    assert.deepEqual(conversationIds(sandbox), []);

    // (wait and kill take the active conversation now, as print and attach do: rm still needs one.)
    const missing = await runJp(sandbox, ['conversation', 'rm']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /jp conversation rm needs a conversation id/);
    assert.match(missing.stderr, /--id=<cid>/);
  });
});
