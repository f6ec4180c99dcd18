/**
 * Provider failures through the built binary: retries with backoff on 5xx, a 429 waited out as
 * long as its Retry-After (or retry-after-ms) says, a clear retryable error (exit 6) when 429 never
 * ends with what was done already on disk, a network hang-up mid stream, and a missing API key
 * (exit 2) naming the variable and the alternatives.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, textStep, toolStep } from '../support/fake-provider.ts';
import { conversationIds, fakeModelArguments, readEvents, runJp, useCleanup } from '../support/jp.ts';
import { loadRecording, plainResponse, recordedText } from '../support/replay-provider.ts';
import { checkJson, replayRun, stderrLines, writeUserConfig } from '../support/replay-run.ts';

const fastRetries = [
  '-c',
  'assistant.request.backoff_base_ms=5',
  '-c',
  'assistant.request.backoff_max_ms=20',
  '-c',
  'assistant.request.max_retries=3',
];

describe('provider failures', () => {
  const cleanup = useCleanup();

  it('500 twice, then 200: retries and succeeds', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: [{ status: 500, body: 'boom' }, { status: 500 }, textStep('Recovered answer.')],
    });
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
      steps: [
        toolStep([{ name: 'fs_read_file', arguments: { path: 'input.txt' } }], 'Reading the input first.'),
        { status: 429, body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}' },
      ],
    });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    sandbox.write('input.txt', 'the input');
    const model = fakeModelArguments('anthropic', provider.baseUrl);
    const result = await runJp(sandbox, ['query', '--json', ...model.args, ...fastRetries, 'summarize input.txt'], {
      env: model.env,
    });
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
    assert.ok(events.some((event) => event.type === 'tool_call_response' && event.content === '1\tthe input'));
    const end = events[events.length - 1]!;
    assert.equal(end.type, 'turn_end');
    assert.equal(end.status, 'error');
    assert.equal(end.exit_code, 6);

    const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
    assert.equal(JSON.parse(listed.stdout)[0].status, 'interrupted (awaiting LLM response)');
  });

  it('a hang-up mid stream is a retryable network error; the text streamed so far is kept', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-responses',
      steps: [{ hangUpAfterParts: [{ text: 'First part of the answer' }] }],
    });
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
    assert.match(result.stderr, /the connection to OpenAI broke while streaming/);
    assert.doesNotMatch(result.stderr, /Failed to process successful response/);
  });

  it("a 404 shows the provider's message, not its JSON, and what to check: the model name and how to list models", async () => {
    const body =
      '{"error":{"message":"The model `gpt-nope` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}';
    const provider = await startFakeProvider({ wire: 'openai-responses', steps: [{ status: 404, body }] });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-responses', provider.baseUrl);
    const result = await runJp(sandbox, ['query', ...model.args, 'hello'], { env: model.env });
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /error: openai\/gpt-test: OpenAI does not know the model "gpt-test" or the endpoint \(HTTP 404\): The model `gpt-nope` does not exist or you do not have access to it\./,
    );
    assert.doesNotMatch(result.stderr, /\{"error"/);
    assert.match(
      result.stderr,
      /Check the model name in -m \/ assistant\.model; list the models with:\n\s+curl http:\/\/127\.0\.0\.1:\d+\/v1\/models -H "Authorization: Bearer \$OPENAI_API_KEY"/,
    );
    assert.match(result.stderr, /Check providers\.openai\.base_url \(now http:\/\/127\.0\.0\.1:\d+\/v1\)/);
  });

  it('a 401 names the variable that held the key (api_key_env)', async () => {
    const provider = await startFakeProvider({ wire: 'anthropic', steps: [{ status: 401 }] });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    const result = await runJp(
      sandbox,
      [
        'query',
        '-m',
        'anthropic/claude-x',
        '-c',
        `providers.anthropic={ base_url = "${provider.baseUrl}", api_key_env = "TEAM_CLAUDE_KEY" }`,
        'hello',
      ],
      {
        env: { TEAM_CLAUDE_KEY: 'team-key-000000000000' },
      },
    );
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /Anthropic refused the API key in TEAM_CLAUDE_KEY \(HTTP 401\): Request failed \(scripted status 401\)/,
    );
    assert.match(result.stderr, /Check TEAM_CLAUDE_KEY/);
  });

  it("a server on this machine that is not running: not retried (exit 1), the hint names the provider's own base_url key", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const sandbox = cleanup.sandbox();
    const openai = fakeModelArguments('openai-chat', `http://127.0.0.1:${port}/v1`);
    const refused = await runJp(sandbox, ['query', ...openai.args, '-c', 'assistant.request.max_retries=0', 'hello'], {
      env: openai.env,
    });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /nothing is listening at http:\/\/127\.0\.0\.1:\d+\/v1 \(connection refused/);
    assert.match(refused.stderr, /providers\.openai\.base_url/);
    assert.doesNotMatch(refused.stderr, /providers\.<name>/);
    const local = await runJp(sandbox, [
      'query',
      '--new',
      '-m',
      'local/m',
      '-c',
      `providers.openai-compatible.local.base_url="http://127.0.0.1:${port}/v1"`,
      '-c',
      'assistant.request.max_retries=0',
      'hello',
    ]);
    assert.equal(local.code, 1, local.stderr);
    assert.match(local.stderr, /is the local server running\?/);
    assert.match(local.stderr, /providers\.openai-compatible\.local\.base_url/);
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
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: [{ status: 401, body: `{"error":{"message":"bad key ${secret}"}}` }],
    });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const result = await runJp(sandbox, ['query', '-vvvvv', ...model.args, `my key is ${secret}`], { env: model.env });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /OpenAI refused the API key in OPENAI_API_KEY \(HTTP 401\): bad key \[REDACTED\]/);
    const logFile = path.join(sandbox.dataHome, 'jp', 'logs', 'jp.log');
    assert.ok(readFileSync(logFile, 'utf8').length > 0, 'tracing was written to the log file');
    // grep exits 2 when a file vanishes under it (a server still tidying up as it exits): what
    // counts is that it found the key nowhere (no file listed, no match).
    const grep = spawnSync('grep', ['-rls', secret, sandbox.root], { encoding: 'utf8' });
    assert.equal(grep.stdout, '', `the key was written to: ${grep.stdout}`);
    assert.notEqual(grep.status, 0, 'grep found a match');
    assert.ok(!result.stderr.includes(secret) && !result.stdout.includes(secret));
  });
  // The wait is read from what jp says it waits ("retrying in N s"), never from a clock: jp's own
  // backoff is set to 5 ms (reported as 0.0 s), so a reported 1.0 s or 1.5 s is the header's.
  const anthropicText = loadRecording('vercel-ai/anthropic/anthropic-text.chunks.txt')[0]!;
  const openaiText = loadRecording('vercel-ai/openai/chat/openai-text.chunks.txt')[0]!;
  const headerSized = ['-c', 'assistant.request.backoff_max_ms=10000'];

  it("429 with Retry-After: 1, then an answer: jp waits the header's 1 s (not its own backoff), retries once, exit 0", async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox);
    const limited = plainResponse(
      429,
      '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}',
      { 'retry-after': '1' },
    );
    const replay = await replayRun(sandbox, {
      kind: 'anthropic',
      replies: [{ recording: limited }, { recording: anthropicText }],
      args: headerSized,
    });
    const result = checkJson(replay);
    assert.equal(result.status, 'success', replay.stderr);
    assert.equal(result.answer, recordedText(anthropicText));
    assert.equal(replay.provider.requests.length, 2, 'one retry');
    const retries = stderrLines(replay).filter((line) => line.type === 'warning' && /retrying in/.test(line.message));
    assert.equal(retries.length, 1, replay.stderr);
    assert.match(
      retries[0]!.message,
      /rate limited \(HTTP 429\): Number of request tokens has exceeded your per-minute rate limit; retrying in 1\.0 s \(attempt 1 of 4\)$/,
    );
  });

  it('429 with Retry-After: 60, longer than the longest backoff: no retry sooner than asked; exit 6 at once, saying how long to wait', async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox);
    const limited = plainResponse(
      429,
      '{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}',
      { 'retry-after': '60' },
    );
    const replay = await replayRun(sandbox, {
      kind: 'anthropic',
      replies: [{ recording: limited }, { recording: anthropicText }],
      args: headerSized,
    });
    const result = checkJson(replay);
    assert.equal(result.status, 'retryable', replay.stderr);
    assert.equal(replay.code, 6);
    assert.equal(replay.provider.requests.length, 1, 'no retry before the minute the provider asked for');
    assert.match(
      result.error.message,
      /rate limited \(HTTP 429\): Number of request tokens has exceeded your per-minute rate limit; the provider asks to wait 60 s before a retry/,
    );
    assert.equal(
      stderrLines(replay).filter((line) => line.type === 'warning' && /retrying in/.test(line.message)).length,
      0,
      replay.stderr,
    );
  });

  it("429 with retry-after-ms: 1500 (OpenAI's, preferred to Retry-After), then an answer: jp waits 1.5 s, text mode, exit 0", async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox);
    const limited = plainResponse(
      429,
      '{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}',
      { 'retry-after-ms': '1500', 'retry-after': '7' },
    );
    const replay = await replayRun(sandbox, {
      kind: 'openai-chat',
      replies: [{ recording: limited }, { recording: openaiText }],
      args: headerSized,
      mode: 'text',
    });
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.stdout, `${recordedText(openaiText)}\n`);
    assert.equal(replay.provider.requests.length, 2);
    assert.equal((replay.stderr.match(/retrying in/g) ?? []).length, 1, replay.stderr);
    assert.match(
      replay.stderr,
      /rate limited \(HTTP 429\): Rate limit reached for requests; retrying in 1\.5 s \(attempt 1 of 4\)/,
    );
  });
});
