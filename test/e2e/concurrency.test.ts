/**
 * Many processes on one conversation: exactly one runs, the others exit 5 at once naming the
 * holder, and the log stays intact.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gate, textStep } from '../support/fake-provider.ts';
import {
  conversationIds,
  createSandbox,
  fakeModel,
  jpBinary,
  processesMatching,
  readEvents,
  runJp,
  testProvider,
} from '../support/jp.ts';

describe('50 concurrent `jp query --id=<same>`', () => {
  const sandbox = createSandbox();
  after(() => sandbox.cleanup());

  it('exactly one runs; the others exit 5 naming the holder; the log is intact', async (context) => {
    // The first request creates the conversation; the winner's answer then holds until the 49 others have exited.
    const othersDone = gate();
    const model = await fakeModel({ add: (close) => after(close) }, [
      textStep('created'),
      { parts: [{ text: 'the winner streams slowly. ' }, { gate: othersDone }, { text: 'done' }] },
    ]);
    assert.equal((await runJp(sandbox, ['query', ...model.args, 'start'], { env: model.env })).code, 0);
    const [conversationId] = conversationIds(sandbox);

    const started = Date.now();
    let exited = 0;
    const runs = await Promise.all(
      Array.from({ length: 50 }, async (_, index) => {
        const result = await runJp(sandbox, ['query', `--id=${conversationId}`, ...model.args, `message ${index}`], {
          env: model.env,
          timeoutMs: 120_000,
        });
        if (++exited === 49) othersDone.open();
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
    context.diagnostic(
      `slowest refusal came ${slowestRefusal} ms after the 50 processes were started (the winner took ${winners[0]!.elapsed} ms)`,
    );

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

describe('a refused query', () => {
  const sandbox = createSandbox();
  after(() => sandbox.cleanup());

  /** Live query servers started for this sandbox (its data directory is in their environment). */
  const serversOfSandbox = (): number[] =>
    processesMatching(jpBinary, '__serve').filter((pid) => {
      try {
        const state = /^\d+ \(.*\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
        return (
          state !== 'Z' &&
          readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`XDG_DATA_HOME=${sandbox.dataHome}`)
        );
      } catch {
        return false;
      }
    });

  it('starts no server of its own', async () => {
    const hold = testProvider(
      sandbox,
      { steps: [{ parts: [{ text: 'holding' }, { delay_ms: 60_000 }] }] },
      'hold.json',
    );
    const detached = await runJp(sandbox, ['query', '--detach', ...hold, 'hold']);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const holders = serversOfSandbox();
    assert.equal(holders.length, 1, `the detached run's server: ${holders.join(' ')}`);
    try {
      for (let index = 0; index < 5; index++) {
        const refused = await runJp(sandbox, ['query', `--id=${conversationId}`, ...hold, `again ${index}`]);
        assert.equal(refused.code, 5, refused.stderr);
        assert.deepEqual(serversOfSandbox(), holders, `after refusal ${index}`);
      }
    } finally {
      await runJp(sandbox, ['conversation', 'kill', '--force', conversationId]);
    }
  });
});

describe('a lock refusal', () => {
  const sandbox = createSandbox();
  const hold = testProvider(sandbox, { steps: [{ parts: [{ text: 'x' }, { delay_ms: 60_000 }] }] }, 'hold.json');
  let conversationId = '';
  after(async () => {
    if (conversationId) await runJp(sandbox, ['conversation', 'kill', '--force', conversationId]);
    sandbox.cleanup();
  });

  it('comes after the checks of the command line and its input, in the same order whatever the spelling', async () => {
    const detached = await runJp(sandbox, ['query', '--detach', ...hold, 'hold']);
    assert.equal(detached.code, 0, detached.stderr);
    conversationId = detached.stdout.trim();
    const cases: { args: string[]; stdin?: string; code: number; stderr?: RegExp; stdout?: RegExp }[] = [
      { args: ['query', `--id=${conversationId}`, ...hold, 'again'], code: 5, stderr: /is locked by pid/ },
      {
        args: [
          'q',
          '--id',
          conversationId,
          '--model=test',
          '--cfg',
          'providers.test.script=hold.json',
          'again',
          'and again',
        ],
        code: 5,
        stderr: /is locked by pid/,
      },
      { args: ['query', `--id=${conversationId}`, ...hold], code: 2, stderr: /no message/ },
      { args: ['query', `--id=${conversationId}`, ...hold, '   '], code: 2, stderr: /no message/ },
      {
        args: ['query', `--id=${conversationId}`, '--no-such-flag', ...hold, 'again'],
        code: 2,
        stderr: /unknown option/,
      },
      {
        args: ['query', `--id=${conversationId}`, '--new', ...hold, 'again'],
        code: 2,
        stderr: /cannot be used together/,
      },
      {
        args: ['query', `--id=${conversationId}`, '--format', 'json', ...hold, 'again'],
        code: 5,
        stdout: /"type":"result".*"exit_code":5/,
      },
      {
        args: ['query', `--id=${conversationId}`, ...hold, 'again'],
        stdin: 'context from a pipe',
        code: 5,
        stderr: /is locked by pid/,
      },
    ];
    for (const { args, stdin, code, stderr, stdout } of cases) {
      const result = await runJp(sandbox, args, stdin === undefined ? {} : { stdin });
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
      if (stderr) assert.match(result.stderr, stderr);
      if (stdout) assert.match(result.stdout, stdout);
      if (code === 5 && !stdout) assert.equal(result.stdout, '');
    }
    assert.match(
      readFileSync(path.join(sandbox.userDirectory(), 'locks', `${conversationId}.lock`), 'utf8'),
      /"role":"server"/,
      'the holder still holds it',
    );
  });
});
