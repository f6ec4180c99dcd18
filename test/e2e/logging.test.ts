/**
 * The tracing log (DESIGN §5): each -v adds a level, a closed log destination ends logging and
 * never the run, and the log file is private whatever the umask.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, textStep } from '../support/fake-provider.ts';
import {
  collect,
  conversationIds,
  eventually,
  fakeModelArguments,
  jpBinary,
  readEvents,
  runJp,
  useCleanup,
} from '../support/jp.ts';
import { shellQuote } from '../support/pty.ts';

const cleanup = useCleanup();

/** The level names of a text log, in order of first appearance. */
function levelsIn(log: string): Set<string> {
  return new Set(
    log
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => line.split(/\s+/)[1]!),
  );
}

describe('-v … -vvvvv', () => {
  it('each -v adds a level: warnings, info, debug, trace, then the provider wire traffic', async () => {
    // Every other request fails once with a 500, so each run has a retry to warn about.
    const provider = await startFakeProvider({
      wire: 'openai-responses',
      steps: (_request, index) => (index % 2 === 0 ? { status: 500 } : textStep('logged answer')),
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('openai-responses', provider.baseUrl);
    const retryQuickly = [
      '-c',
      'assistant.request.max_retries=1',
      '-c',
      'assistant.request.backoff_base_ms=1',
      '-c',
      'assistant.request.backoff_max_ms=1',
    ];
    const expected: [string, string[], string[]][] = [
      ['-v', ['WARN'], ['INFO', 'DEBUG', 'TRACE', 'WIRE']],
      ['-vv', ['WARN', 'INFO'], ['DEBUG', 'TRACE', 'WIRE']],
      ['-vvv', ['WARN', 'INFO', 'DEBUG'], ['TRACE', 'WIRE']],
      ['-vvvv', ['WARN', 'INFO', 'DEBUG', 'TRACE'], ['WIRE']],
      ['-vvvvv', ['WARN', 'INFO', 'DEBUG', 'TRACE', 'WIRE'], []],
    ];
    for (const [flag, present, absent] of expected) {
      const logFile = path.join(sandbox.root, `log${flag}.log`);
      const result = await runJp(
        sandbox,
        [flag, `--log-file=${logFile}`, 'query', '--new', ...model.args, ...retryQuickly, 'hello'],
        { env: model.env },
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'logged answer\n');
      const log = readFileSync(logFile, 'utf8');
      const levels = levelsIn(log);
      for (const level of present) assert.ok(levels.has(level), `${flag}: no ${level} line in\n${log}`);
      for (const level of absent) assert.ok(!levels.has(level), `${flag}: a ${level} line in\n${log}`);
      assert.doesNotMatch(log, /sk-test-key/, 'the API key never reaches the log');
      if (flag === '-vvvvv')
        assert.match(log, /WIRE .*response chunk .*logged answer/, 'the raw provider stream is in the log');
    }
    const quiet = await runJp(sandbox, ['query', '--new', ...model.args, ...retryQuickly, 'hello'], { env: model.env });
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(existsSync(path.join(sandbox.dataHome, 'jp', 'logs')), false, 'without -v nothing is logged');
  });
});

describe('a log destination that goes away', () => {
  it('`jp -vvvvv --log-file=- query … 2>&1 | head` ends logging, not the server: the run stops as interrupted, saved, nothing left behind', async () => {
    const parts = Array.from({ length: 100 }, (_, index) => ({ text: `word${index} ` }));
    const provider = await startFakeProvider({ wire: 'anthropic', chunkDelayMs: 50, steps: [{ parts }] });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('anthropic', provider.baseUrl);
    const command = `node ${shellQuote(jpBinary)} -vvvvv --log-file=- query ${model.args.map(shellQuote).join(' ')} long 2>&1 | head -c 300 >/dev/null`;
    const shell = spawn('bash', ['-c', command], {
      cwd: sandbox.workspace,
      env: { ...sandbox.env, ...model.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pipeline = await collect(shell, ['bash', '-c', command], 60_000);
    assert.equal(pipeline.code, 0, pipeline.stderr);
    const [conversationId] = conversationIds(sandbox);
    assert.ok(conversationId);
    const processes = path.join(sandbox.userDirectory(), 'processes');
    await eventually('the server has ended and removed its registry entry and socket', () =>
      readdirSync(processes).every((name) => !name.endsWith('.json') && !name.endsWith('.sock')),
    );
    const runLog = path.join(processes, `${conversationId}.log`);
    const runLogText = existsSync(runLog) ? readFileSync(runLog, 'utf8') : '';
    assert.doesNotMatch(runLogText, /uncaught|EPIPE/);
    const last = readEvents(sandbox, conversationId!).at(-1)!;
    assert.equal(last.type, 'turn_end', 'the turn was ended and saved, not cut off by a crash');
  });

  it('only the log destination closes (`--log-file=-`, stderr a pipe read by nobody, stdout a file): the run completes, exit 0, the whole answer in the file, no stack trace', async () => {
    const words = Array.from({ length: 100 }, (_, index) => `word${index}`);
    const provider = await startFakeProvider({
      wire: 'anthropic',
      chunkDelayMs: 5,
      steps: [{ parts: words.map((word) => ({ text: `${word} ` })) }],
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('anthropic', provider.baseUrl);
    const answerFile = path.join(sandbox.root, 'answer.txt');
    const codeFile = path.join(sandbox.root, 'code.txt');
    // `2>&1 >file`: stderr (the log) goes to the pipe, stdout to the file. `true` exits at once, so
    // the pipe has no reader before jp writes its first log line.
    const command = `node ${shellQuote(jpBinary)} -vvvvv --log-file=- query ${model.args.map(shellQuote).join(' ')} long 2>&1 >${shellQuote(answerFile)} | true; echo "\${PIPESTATUS[0]}" >${shellQuote(codeFile)}`;
    const shell = spawn('bash', ['-c', command], {
      cwd: sandbox.workspace,
      env: { ...sandbox.env, ...model.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pipeline = await collect(shell, ['bash', '-c', command], 60_000);
    assert.equal(pipeline.code, 0, pipeline.stderr);
    assert.equal(
      readFileSync(codeFile, 'utf8').trim(),
      '0',
      `jp's exit status; its answer file: ${readFileSync(answerFile, 'utf8')}`,
    );
    assert.equal(readFileSync(answerFile, 'utf8'), `${words.map((word) => `${word} `).join('')}\n`, 'the whole answer');
    assert.doesNotMatch(pipeline.stdout + pipeline.stderr, /EPIPE|uncaught|\n\s+at /);
    const [conversationId] = conversationIds(sandbox);
    assert.ok(conversationId);
    const last = readEvents(sandbox, conversationId!).at(-1)!;
    assert.equal(last.type, 'turn_end');
    assert.equal(last.status, 'completed');
    const processes = path.join(sandbox.userDirectory(), 'processes');
    await eventually('the server has ended and removed its registry entry and socket', () =>
      readdirSync(processes).every((name) => !name.endsWith('.json') && !name.endsWith('.sock')),
    );
    const runLog = path.join(processes, `${conversationId}.log`);
    const runLogText = existsSync(runLog) ? readFileSync(runLog, 'utf8') : '';
    assert.doesNotMatch(runLogText, /uncaught|EPIPE|\n\s+at /, 'no stack trace in the run server log');
  });
});

describe('the log file is private', () => {
  it('under umask 000 the default jp.log is 0600 in a 0700 directory, and so is a --log-file in a new directory', async () => {
    const sandbox = cleanup.sandbox();
    const script = ['-m', 'test', '-c', 'providers.test.script=script.json'];
    sandbox.write('script.json', JSON.stringify({ steps: [{ parts: [{ text: 'ok' }] }] }));
    const run = async (extra: string[]): Promise<void> => {
      const command = `umask 000; exec node ${shellQuote(jpBinary)} -vv ${extra.map(shellQuote).join(' ')} query --new ${script.map(shellQuote).join(' ')} hi`;
      const child = spawn('bash', ['-c', command], {
        cwd: sandbox.workspace,
        env: sandbox.env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const result = await collect(child, ['bash', '-c', command], 60_000);
      assert.equal(result.code, 0, result.stderr);
    };
    await run([]);
    const defaultLog = path.join(sandbox.dataHome, 'jp', 'logs', 'jp.log');
    assert.equal(statSync(defaultLog).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(defaultLog)).mode & 0o777, 0o700);
    assert.match(readFileSync(defaultLog, 'utf8'), /INFO/);

    const chosen = path.join(sandbox.root, 'new-directory', 'trace.log');
    await run([`--log-file=${chosen}`]);
    assert.equal(statSync(chosen).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(chosen)).mode & 0o777, 0o700);
  });

  it('a symlink in place of the default jp.log is not followed: exit 2, naming the file and the way out', async () => {
    const sandbox = cleanup.sandbox();
    const logs = path.join(sandbox.dataHome, 'jp', 'logs');
    mkdirSync(logs, { recursive: true, mode: 0o700 });
    const elsewhere = path.join(sandbox.root, 'elsewhere.txt');
    writeFileSync(elsewhere, 'untouched\n');
    symlinkSync(elsewhere, path.join(logs, 'jp.log'));
    const result = await runJp(sandbox, ['-v', 'conversation', 'ls']);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /cannot open the log file .*jp\.log/);
    assert.match(result.stderr, /--log-file/);
    assert.equal(readFileSync(elsewhere, 'utf8'), 'untouched\n');
  });
});
