/**
 * Many processes on one conversation: exactly one runs, the others exit 5 at once naming the
 * holder, and the log stays intact.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { conversationIds, createSandbox, readEvents, runJp, testProvider } from '../support/jp.ts';

describe('50 concurrent `jp query --id=<same>`', () => {
  const sandbox = createSandbox();
  after(() => sandbox.cleanup());

  it('exactly one runs; the others exit 5 naming the holder; the log is intact', async (context) => {
    const quick = testProvider(sandbox, { steps: [{ parts: [{ text: 'created' }] }] }, 'quick.json');
    assert.equal((await runJp(sandbox, ['query', ...quick, 'start'])).code, 0);
    const [conversationId] = conversationIds(sandbox);
    const slow = testProvider(sandbox, { steps: [{ parts: [{ text: 'the winner streams slowly. ' }, { delay_ms: 8000 }, { text: 'done' }] }] }, 'slow.json');

    const started = Date.now();
    const runs = await Promise.all(
      Array.from({ length: 50 }, async (_, index) => {
        const result = await runJp(sandbox, ['query', `--id=${conversationId}`, ...slow, `message ${index}`], { timeoutMs: 120_000 });
        return { ...result, index, elapsed: Date.now() - started };
      }),
    );
    const winners = runs.filter((run) => run.code === 0);
    const locked = runs.filter((run) => run.code === 5);
    assert.equal(winners.length, 1, runs.map((run) => `${run.index}:${run.code}`).join(' '));
    assert.equal(locked.length, 49);
    for (const run of locked) {
      assert.match(run.stderr, new RegExp(`conversation ${conversationId} is locked by pid \\d+`));
      assert.match(run.stderr, /--fork/);
      assert.equal(run.stdout, '');
    }
    const slowestRefusal = Math.max(...locked.map((run) => run.elapsed));
    context.diagnostic(`slowest refusal came ${slowestRefusal} ms after the 50 processes were started (the winner took ${winners[0]!.elapsed} ms)`);

    const events = readEvents(sandbox, conversationId!);
    const requests = events.filter((event) => event.type === 'chat_request').map((event) => event.content);
    assert.deepEqual(requests, ['start', `message ${winners[0]!.index}`]);
    assert.equal(events.filter((event) => event.type === 'turn_start').length, 2);
    assert.equal(events.filter((event) => event.type === 'turn_end' && event.status === 'completed').length, 2);
  });
});

describe('back-to-back queries from a script', () => {
  const sandbox = createSandbox();
  after(() => sandbox.cleanup());

  it('the next query never finds the lock still held by the one that just returned', async () => {
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    for (let index = 0; index < 10; index++) {
      const result = await runJp(sandbox, ['query', ...script, `message ${index}`]);
      assert.equal(result.code, 0, `query ${index}: ${result.stderr}`);
    }
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    assert.equal(events.filter((event) => event.type === 'turn_end' && event.status === 'completed').length, 10);
  });
});
