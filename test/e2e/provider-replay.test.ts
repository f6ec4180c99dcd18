/**
 * Recorded real streams (test/fixtures/provider-streams) replayed byte for byte from a local server
 * through the built jp: answers, refusals, truncation, a quota error inside a 200 stream, hosted
 * web search, usage, reasoning, tool round trips. Each case in JSON mode (the result line, its
 * schema, the exit code equal to its status) and in text mode (stdout the answer, stderr the
 * chrome), one SSE event per write and one byte per write.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useCleanup } from '../support/jp.ts';
import { replayRun, writeUserConfig, type ReplayRunOptions } from '../support/replay-run.ts';
import { createAjv, schemaProblem } from '../support/schemas.ts';

const ajv = createAjv();
const exitCodes: Record<string, number> = { success: 0, error: 1, usage: 2, denied: 3, deferred: 4, locked: 5, retryable: 6 };

function checkJson(run: Awaited<ReturnType<typeof replayRun>>): Record<string, any> {
  const result = run.result!;
  assert.equal(result.type, 'result');
  assert.equal(run.code, result.exit_code, run.stderr);
  assert.equal(result.exit_code, exitCodes[result.status]);
  assert.equal(schemaProblem(ajv, 'result.schema.json', result), undefined);
  for (const line of run.stdout.trim().split('\n')) assert.equal(schemaProblem(ajv, 'output-line.schema.json', JSON.parse(line)), undefined, line);
  for (const event of run.events) assert.equal(schemaProblem(ajv, 'event.schema.json', event), undefined, JSON.stringify(event));
  return result;
}

describe('recorded provider streams, replayed', () => {
  const cleanup = useCleanup();
  const run = (options: ReplayRunOptions) => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox);
    return replayRun(sandbox, options);
  };

  for (const writes of ['event', 'byte'] as const) {
    describe(`written ${writes === 'byte' ? 'one byte' : 'one SSE event'} at a time`, () => {
      it('OpenAI Chat: a plain answer with late usage (exit 0)', async () => {
        const replay = await run({ kind: 'openai-chat', replies: ['vercel-ai/openai/chat/openai-text.chunks.txt'], writes });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.match(result.answer, /^\*\*Holiday Name:\*\* Harmony Day\n\n/);
        assert.match(result.answer, /mutual respect\.$/);
        assert.deepEqual(result.metadata.usage, { input_tokens: 16, output_tokens: 300, reasoning_tokens: 0, total_tokens: 316 });
        assert.equal(result.metadata.finish_reason, 'stop');
        assert.deepEqual(result.warnings, []);
      });

      it('Anthropic: a refusal is exit 1, error.code refused, with the provider\'s reason', async () => {
        const replay = await run({ kind: 'anthropic', replies: ['vercel-ai/anthropic/anthropic-refusal.chunks.txt'], writes });
        const result = checkJson(replay);
        assert.equal(result.status, 'error');
        assert.equal(result.error.code, 'refused');
        assert.match(result.error.message, /refused to answer \(refusal\): This request triggered restrictions on violative cyber content/);
        assert.equal(result.metadata.finish_reason, 'content-filter');
        assert.equal(result.answer, '');
        const end = replay.events[replay.events.length - 1]!;
        assert.deepEqual([end.type, end.status, end.error.code, end.finish_reason], ['turn_end', 'error', 'refused', 'content-filter']);
      });

      it('DeepSeek (OpenAI-compatible): finish_reason length keeps the answer, warns, exit 0', async () => {
        const replay = await run({ kind: 'compatible:deepseek', replies: ['vercel-ai/deepseek/chat/deepseek-text.chunks.txt'], writes });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(result.metadata.finish_reason, 'length');
        assert.ok(result.answer.length > 1000, 'the cut answer is kept');
        assert.deepEqual(
          result.warnings.map((warning: { code: string }) => warning.code),
          ['output_limit'],
        );
        assert.match(result.warnings[0].message, /cut at the model's output limit; raise `assistant\.max_output_tokens`/);
        const warning = replay.stderr.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((line) => line.type === 'warning');
        assert.match(warning?.message ?? '', /cut at the model's output limit/);
        assert.equal(replay.events[replay.events.length - 1]!.finish_reason, 'length');
      });

      it('OpenAI Responses: insufficient_quota inside a 200 stream is exit 1 at once, with the provider\'s message', async () => {
        const replay = await run({ kind: 'openai-responses', replies: ['vercel-ai/openai/responses/openai-error.1.chunks.txt'], writes });
        const result = checkJson(replay);
        assert.equal(result.status, 'error');
        assert.equal(result.error.code, 'quota_exceeded');
        assert.match(result.error.message, /You exceeded your current quota, please check your plan and billing details/);
        assert.equal(replay.provider.requests.length, 1, 'not retried');
        assert.doesNotMatch(replay.stderr, /retrying in/);
      });

      it('OpenAI Responses: hosted web_search is the provider\'s, never jp\'s; its citations are the sources', async () => {
        const replay = await run({ kind: 'openai-responses', replies: ['vercel-ai/openai/responses/openai-web-search-tool.1.chunks.txt'], writes });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(replay.provider.requests.length, 1, 'no second request: nothing for jp to answer');
        assert.deepEqual(result.tools, [], 'not counted as jp tool calls');
        assert.doesNotMatch(replay.stdout + replay.stderr, /Unknown tool/i);
        assert.ok(result.sources.length > 0);
        assert.ok(result.sources.every((source: { url?: string }) => /^https:\/\//.test(source.url ?? '')));
        const calls = replay.events.filter((event) => event.type === 'tool_call_request');
        assert.ok(calls.length > 0 && calls.every((event) => event.provider_executed === true && event.name === 'web_search'));
        assert.ok(!replay.events.some((event) => event.type === 'tool_call_start' || event.type === 'inquiry_request'), 'never run, never prompted for');
        const toolLines = replay.stdout.split('\n').filter((line) => line.includes('"type":"tool_call"'));
        assert.ok(toolLines.length > 0 && toolLines.every((line) => JSON.parse(line).provider_executed === true));
      });

      it('Anthropic: hosted web_search result passes through, citations become sources', async () => {
        const replay = await run({ kind: 'anthropic', replies: ['vercel-ai/anthropic/anthropic-web-search-tool.1.chunks.txt'], writes });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(replay.provider.requests.length, 1);
        assert.deepEqual(result.tools, []);
        assert.ok(result.sources.some((source: { url?: string; title?: string }) => source.url === 'https://www.apple.com/newsroom/2025/09/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo/' && source.title));
        const response = replay.events.find((event) => event.type === 'tool_call_response' && event.provider_executed);
        assert.ok(response && JSON.parse(response.content).some((entry: { url: string }) => entry.url.startsWith('https://')), 'the search result as the provider sent it');
        assert.match(result.answer, /^Based on my search results/);
      });

      it('llama.cpp: a server that sends no usage reports null, never 0', async () => {
        const replay = await run({ kind: 'compatible:llamacpp', replies: ['dcdpr-jp/llamacpp/test_chat_completion_stream.yml'], writes });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(result.metadata.usage, null);
        assert.ok(result.answer.length > 0);
      });

      it('xAI: reasoning tokens reported apart are counted in the totals (914, the provider\'s own)', async () => {
        const replay = await run({
          kind: 'compatible:xai',
          replies: ['vercel-ai/openai-compatible/chat/xai-tool-call.chunks.txt', 'vercel-ai/openai-compatible/chat/xai-text.chunks.txt'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.deepEqual(result.metadata.usage, { input_tokens: 319, output_tokens: 595, reasoning_tokens: 567, total_tokens: 914 });
        assert.deepEqual(
          result.tools.map((tool: { name: string; status: string }) => [tool.name, tool.status]),
          [['weather', 'ok']],
        );
        assert.ok(replay.events.some((event) => event.type === 'chat_response' && typeof event.reasoning === 'string' && event.reasoning.length > 0));
      });

      it('Anthropic thinking with a tool round: the signed thinking block goes back unchanged', async () => {
        const replay = await run({ kind: 'anthropic', replies: ['dcdpr-jp/anthropic/test_tool_call_reasoning.yml'], writes });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(replay.provider.requests.length, 2);
        const recorded = replay.events.find((event) => event.type === 'chat_response' && event.provider_metadata);
        const signature = recorded?.provider_metadata?.anthropic?.signature;
        assert.equal(typeof signature, 'string');
        const assistant = replay.provider.requests[1]!.body.messages.find((message: { role: string }) => message.role === 'assistant');
        const thinking = assistant.content.find((block: { type: string }) => block.type === 'thinking');
        assert.equal(thinking.signature, signature);
        const thinkingText = replay.events
          .filter((event) => event.type === 'chat_response' && typeof event.reasoning === 'string')
          .map((event) => event.reasoning)
          .join('');
        assert.equal(thinking.thinking, thinkingText);
        assert.deepEqual(
          assistant.content.map((block: { type: string }) => block.type),
          ['thinking', 'tool_use'],
          'thinking first, then the tool call',
        );
      });
    });
  }

  const roundTrips: [string, ReplayRunOptions['kind'], string[], string[]][] = [
    ['OpenAI Responses, arguments in deltas', 'openai-responses', ['dcdpr-jp/openai/test_tool_call_stream.yml'], ['run_me']],
    ['OpenAI Responses, encrypted reasoning', 'openai-responses', ['dcdpr-jp/openai/test_tool_call_reasoning.yml'], ['run_me']],
    ['OpenAI Responses, three rounds', 'openai-responses', ['vercel-ai/openai/responses/openai-reasoning-encrypted-content.1.chunks.txt'], ['calculator', 'calculator', 'calculator']],
    ['OpenRouter, two calls in one response', 'compatible:openrouter', ['dcdpr-jp/openrouter/test_anthropic_opus_5_parallel_tool_round_trip.yml'], ['list_items', 'search_items']],
    ['OpenRouter, encrypted reasoning details', 'compatible:openrouter', ['dcdpr-jp/openrouter/test_tool_call_reasoning.yml'], ['run_me']],
    ['llama.cpp, arguments in many deltas', 'compatible:llamacpp', ['dcdpr-jp/llamacpp/test_tool_call_stream.yml'], ['run_me']],
    ['Cerebras, reasoning deltas', 'compatible:cerebras', ['dcdpr-jp/cerebras/test_tool_call_reasoning.yml'], ['run_me']],
    ['a tool_calls index of 1', 'compatible:fallback', ['vercel-ai/openai-compatible/chat/anthropic-fallback-tool-call.sse', 'vercel-ai/openai-compatible/chat/xai-text.chunks.txt'], ['read_file']],
    ['Anthropic, empty tool input', 'anthropic', ['vercel-ai/anthropic/anthropic-tool-no-args.chunks.txt', 'vercel-ai/anthropic/anthropic-text.chunks.txt'], ['updateIssueList']],
    ['Anthropic, input in input_json_delta', 'anthropic', ['vercel-ai/anthropic/anthropic-json-tool.2.chunks.txt', 'vercel-ai/anthropic/anthropic-text.chunks.txt'], ['json']],
  ];
  for (const [name, kind, replies, tools] of roundTrips) {
    it(`tool round trip: ${name}`, async () => {
      const replay = await run({ kind, replies });
      const result = checkJson(replay);
      assert.equal(result.status, 'success', result.error?.message);
      assert.deepEqual(
        result.tools.map((tool: { name: string }) => tool.name),
        tools,
      );
      assert.equal(replay.provider.requests.length, tools.length === 3 ? 4 : 2);
      for (const tool of result.tools) assert.ok(replay.events.some((event) => event.type === 'tool_call_response' && event.id === tool.id));
      assert.equal(result.metadata.finish_reason, 'stop');
    });
  }

  describe('text mode', () => {
    it('stdout is the answer and its Sources list; the provider\'s tool is chrome on stderr', async () => {
      const replay = await run({ kind: 'anthropic', replies: ['vercel-ai/anthropic/anthropic-web-search-tool.1.chunks.txt'], mode: 'text' });
      assert.equal(replay.code, 0, replay.stderr);
      assert.match(replay.stdout, /^Based on my search results/);
      assert.match(replay.stdout, /\n\nSources:\n\n1\. .+ — https:\/\/\S+\n/);
      assert.match(replay.stdout, /Apple Ginza .*— https:\/\/www\.apple\.com\/newsroom\/2025\/09\/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo\//);
      assert.match(replay.stderr, /\[tool\] web_search .*\(run by the provider\)/);
      assert.doesNotMatch(replay.stdout, /web_search/);
    });

    it('a refusal: exit 1, the reason on stderr, nothing on stdout', async () => {
      const replay = await run({ kind: 'anthropic', replies: ['vercel-ai/anthropic/anthropic-refusal.chunks.txt'], mode: 'text' });
      assert.equal(replay.code, 1);
      assert.equal(replay.stdout, '');
      assert.match(replay.stderr, /error: .*refused to answer \(refusal\): This request triggered restrictions/);
    });

    it('a truncated answer: exit 0, the answer on stdout, the warning on stderr', async () => {
      const replay = await run({ kind: 'compatible:deepseek', replies: ['vercel-ai/deepseek/chat/deepseek-text.chunks.txt'], mode: 'text' });
      assert.equal(replay.code, 0);
      assert.ok(replay.stdout.length > 1000);
      assert.doesNotMatch(replay.stdout, /output limit/);
      assert.match(replay.stderr, /jp: the answer was cut at the model's output limit; raise `assistant\.max_output_tokens`/);
    });

    it('a quota error: exit 1, the provider\'s words (not its JSON), no retry', async () => {
      const replay = await run({ kind: 'openai-responses', replies: ['vercel-ai/openai/responses/openai-error.1.chunks.txt'], mode: 'text' });
      assert.equal(replay.code, 1);
      assert.match(replay.stderr, /error: .*quota or billing.*: You exceeded your current quota/);
      assert.doesNotMatch(replay.stderr, /\{"/);
      assert.equal(replay.provider.requests.length, 1);
    });
  });
});
