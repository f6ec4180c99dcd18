/**
 * Provider failures through the built binary: retries with backoff on 5xx, a clear retryable
 * error (exit 6) when 429 never ends with what was done already on disk, a network hang-up mid
 * stream, and a missing API key (exit 2) naming the variable and the alternatives.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, textStep, toolStep } from '../support/fake-provider.ts';
import { conversationIds, fakeModelArguments, readEvents, runJp, useCleanup } from '../support/jp.ts';

const fastRetries = ['-c', 'assistant.request.backoff_base_ms=5', '-c', 'assistant.request.backoff_max_ms=20', '-c', 'assistant.request.max_retries=3'];

describe('provider failures', () => {
  const cleanup = useCleanup();

  it('500 twice, then 200: retries and succeeds', async () => {
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [{ status: 500, body: 'boom' }, { status: 500 }, textStep('Recovered answer.')] });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const result = await runJp(sandbox, ['query', ...model.args, ...fastRetries, 'hello'], { env: model.env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'Recovered answer.\n');
    assert.equal(provider.requests.length, 3);
    assert.equal((result.stderr.match(/retrying in/g) ?? []).length, 2, result.stderr);
    assert.match(result.stderr, /HTTP 500/);
  });

  it('always 429: exit 6 with a clear error, and the partial turn is already on disk', async () => {
    const provider = await startFakeProvider({
      wire: 'anthropic',
      steps: [toolStep([{ name: 'fs_read_file', arguments: { path: 'input.txt' } }], 'Reading the input first.'), { status: 429, body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}' }],
    });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    sandbox.write('input.txt', 'the input');
    const model = fakeModelArguments('anthropic', provider.baseUrl);
    const result = await runJp(sandbox, ['query', '--json', ...model.args, ...fastRetries, 'summarize input.txt'], { env: model.env });
    assert.equal(result.code, 6, result.stderr);
    const last = JSON.parse(result.stdout.trim().split('\n').pop()!);
    assert.equal(last.type, 'result');
    assert.equal(last.status, 'retryable');
    assert.equal(last.exit_code, 6);
    assert.equal(last.error.code, 'rate_limited');
    assert.match(last.error.message, /rate limited \(HTTP 429\)/);
    assert.equal(provider.requests.length, 1 + 1 + 3, 'one success, then the first attempt and 3 retries');

    const [conversation] = conversationIds(sandbox);
    const events = readEvents(sandbox, conversation!);
    assert.ok(events.some((event) => event.type === 'chat_response' && event.message === 'Reading the input first.'));
    assert.ok(events.some((event) => event.type === 'tool_call_response' && event.content === 'the input'));
    const end = events[events.length - 1]!;
    assert.equal(end.type, 'turn_end');
    assert.equal(end.status, 'error');
    assert.equal(end.exit_code, 6);

    const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
    assert.equal(JSON.parse(listed.stdout)[0].status, 'interrupted (awaiting LLM response)');
  });

  it('a hang-up mid stream is a retryable network error; the text streamed so far is kept', async () => {
    const provider = await startFakeProvider({ wire: 'openai-responses', steps: [{ hangUpAfterParts: [{ text: 'First part of the answer' }] }] });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-responses', provider.baseUrl);
    const result = await runJp(sandbox, ['query', ...model.args, ...fastRetries, 'hello'], { env: model.env });
    assert.equal(result.code, 6, result.stderr);
    assert.equal(provider.requests.length, 1, 'no retry once output was streamed');
    assert.match(result.stdout, /^First part of the answer/);
    assert.doesNotMatch(result.stdout, /error/i);
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    assert.ok(events.some((event) => event.type === 'chat_response' && event.message === 'First part of the answer'));
  });

  it('a missing API key: exit 2 naming the variable and the alternatives, before anything is created', async () => {
    const sandbox = cleanup.sandbox();
    const result = await runJp(sandbox, ['query', '-m', 'anthropic/claude-x', 'hello']);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /ANTHROPIC_API_KEY is not set: model anthropic\/claude-x needs it/);
    assert.match(result.stderr, /-m ollama\/<model>/);
    assert.match(result.stderr, /-m test/);
    assert.deepEqual(conversationIds(sandbox), []);
  });

  it('secrets never reach the log, the events, or an error message', async () => {
    const secret = 'sk-test-key-000000000000000000';
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [{ status: 401, body: `{"error":{"message":"bad key ${secret}"}}` }] });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const result = await runJp(sandbox, ['query', '-vvvvv', ...model.args, `my key is ${secret}`], { env: model.env });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /refused the credentials \(HTTP 401\)/);
    const logFile = path.join(sandbox.dataHome, 'jp', 'logs', 'jp.log');
    assert.ok(readFileSync(logFile, 'utf8').length > 0, 'tracing was written to the log file');
    const grep = spawnSync('grep', ['-rl', secret, sandbox.root], { encoding: 'utf8' });
    assert.equal(grep.status, 1, `the key was written to: ${grep.stdout}`);
    assert.ok(!result.stderr.includes(secret) && !result.stdout.includes(secret));
  });
});
