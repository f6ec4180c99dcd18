/**
 * Many processes on one conversation: exactly one runs, the others exit 5 at once naming the
 * holder, and the log stays intact.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { codeCacheFiles, conversationIds, createSandbox, jpBinary, processesMatching, readEvents, runJp, type Sandbox, testProvider } from '../support/jp.ts';

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

describe('a refused query', () => {
  const sandbox = createSandbox();
  after(() => sandbox.cleanup());

  /** Live query servers started for this sandbox (its data directory is in their environment). */
  const serversOfSandbox = (): number[] =>
    processesMatching(jpBinary, '__serve').filter((pid) => {
      try {
        const state = /^\d+ \(.*\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
        return state !== 'Z' && readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`XDG_DATA_HOME=${sandbox.dataHome}`);
      } catch {
        return false;
      }
    });

  it('leaves no server of its own behind when it exits (the prespawned one is ended, not left to boot)', async () => {
    const hold = testProvider(sandbox, { steps: [{ parts: [{ text: 'holding' }, { delay_ms: 60_000 }] }] }, 'hold.json');
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

/** The program's code caches for `jp query` (or `jp q`): the program writes one when it runs and finds none. */
function queryProgramCaches(sandbox: Sandbox): string[] {
  return [...codeCacheFiles(sandbox, 'client-query-'), ...codeCacheFiles(sandbox, 'client-q-')];
}

describe('a lock refusal', () => {
  const sandbox = createSandbox();
  const hold = testProvider(sandbox, { steps: [{ parts: [{ text: 'x' }, { delay_ms: 60_000 }] }] }, 'hold.json');
  let conversationId = '';
  after(async () => {
    if (conversationId) await runJp(sandbox, ['conversation', 'kill', '--force', conversationId]);
    sandbox.cleanup();
  });

  it('when only the lock can decide, the launcher prints the refusal of the program without loading the program', async () => {
    const detached = await runJp(sandbox, ['query', '--detach', ...hold, 'hold']);
    assert.equal(detached.code, 0, detached.stderr);
    conversationId = detached.stdout.trim();
    const settingsSpelledOtherwise = ['--model=test', '--cfg', 'providers.test.script=hold.json'];
    for (const args of [
      ['query', `--id=${conversationId}`, ...hold, 'again'],
      ['q', '--id', conversationId, ...settingsSpelledOtherwise, 'again', 'and again'],
    ]) {
      rmSync(path.join(sandbox.env.HOME!, '.cache'), { recursive: true, force: true });
      const early = await runJp(sandbox, args);
      assert.equal(early.code, 5, early.stderr);
      assert.equal(early.stdout, '');
      assert.deepEqual(queryProgramCaches(sandbox), [], `the program did not run for ${args.join(' ')}`);
      // --non-interactive changes nothing about a refusal, but takes the command line to the program.
      const program = await runJp(sandbox, [...args.slice(0, 1), '--non-interactive', ...args.slice(1)]);
      assert.equal(program.code, 5, program.stderr);
      assert.equal(queryProgramCaches(sandbox).length, 1, 'the program ran');
      assert.equal(early.stderr, program.stderr);
      assert.equal(early.stdout, program.stdout);
    }
    assert.match(readFileSync(path.join(sandbox.userDirectory(), 'locks', `${conversationId}.lock`), 'utf8'), /"role":"server"/, 'the holder still holds it');
  });

  it('anything else on the command line still goes through the program, which decides in its own order', async () => {
    assert.ok(conversationId, 'the previous test detached a holder');
    const cases: { args: string[]; stdin?: string; code: number; stderr?: RegExp; stdout?: RegExp }[] = [
      { args: ['query', `--id=${conversationId}`, ...hold], code: 2, stderr: /no message/ },
      { args: ['query', `--id=${conversationId}`, ...hold, '   '], code: 2, stderr: /no message/ },
      { args: ['query', `--id=${conversationId}`, '--no-such-flag', ...hold, 'again'], code: 2, stderr: /unknown option/ },
      { args: ['query', `--id=${conversationId}`, '--new', ...hold, 'again'], code: 2, stderr: /cannot be used together/ },
      { args: ['query', `--id=${conversationId}`, '--format', 'json', ...hold, 'again'], code: 5, stdout: /"type":"result".*"exit_code":5/ },
      { args: ['query', `--id=${conversationId}`, ...hold, 'again'], stdin: 'context from a pipe', code: 5, stderr: /is locked by pid/ },
    ];
    for (const { args, stdin, code, stderr, stdout } of cases) {
      rmSync(path.join(sandbox.env.HOME!, '.cache'), { recursive: true, force: true });
      const result = await runJp(sandbox, args, stdin === undefined ? {} : { stdin });
      assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
      if (stderr) assert.match(result.stderr, stderr);
      if (stdout) assert.match(result.stdout, stdout);
      assert.equal(queryProgramCaches(sandbox).length, 1, `the program ran for ${args.join(' ')}${stdin ? ' (stdin a pipe)' : ''}`);
    }
  });
});
