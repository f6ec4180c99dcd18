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
import { loadRecording, recordedReasoning, recordedSignatures, recordedText } from '../support/replay-provider.ts';
import { checkJson, replayRun, writeUserConfig, type ReplayRunOptions } from '../support/replay-run.ts';

/** A recording of one plain answer, and the usage the provider reported in it. */
interface PlainAnswer {
  name: string;
  kind: ReplayRunOptions['kind'];
  fixture: string;
  usage: Record<string, number | null>;
}

/**
 * Usage as each recording's final usage says it (the answer and reasoning are read off the
 * recordings themselves). Anthropic reports no reasoning count apart (null); OpenAI's counts its
 * reasoning inside the output tokens and its total says so.
 */
const plainAnswers: PlainAnswer[] = [
  {
    name: 'Azure (OpenAI Chat): a first chunk with no choices (prompt filter results), reasoning tokens inside the output',
    kind: 'openai-chat',
    fixture: 'vercel-ai/openai/chat/azure-model-router.1.chunks.txt',
    usage: {
      input_tokens: 15,
      output_tokens: 78,
      reasoning_tokens: 64,
      cached_input_tokens: 0,
      cache_write_tokens: null,
      total_tokens: 93,
    },
  },
  {
    name: 'Anthropic: signed thinking, then text, with context management in message_delta',
    kind: 'anthropic',
    fixture: 'vercel-ai/anthropic/anthropic-clear-thinking.1.chunks.txt',
    usage: {
      input_tokens: 69,
      output_tokens: 53,
      reasoning_tokens: null,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      total_tokens: 122,
    },
  },
  {
    name: "Anthropic: input tokens sent late in message_delta (61) replace message_start's (43)",
    kind: 'anthropic',
    fixture: 'vercel-ai/anthropic/anthropic-message-delta-input-tokens.chunks.txt',
    usage: {
      input_tokens: 61,
      output_tokens: 2,
      reasoning_tokens: null,
      cached_input_tokens: null,
      cache_write_tokens: null,
      total_tokens: 63,
    },
  },
  {
    name: 'OpenAI Responses: a reasoning summary, then the answer',
    kind: 'openai-responses',
    fixture: 'dcdpr-jp/openai/test_chat_completion_stream.yml',
    usage: {
      input_tokens: 8,
      output_tokens: 46,
      reasoning_tokens: 0,
      cached_input_tokens: 0,
      cache_write_tokens: null,
      total_tokens: 54,
    },
  },
  {
    name: 'Anthropic: extended thinking (budget), then the answer',
    kind: 'anthropic',
    fixture: 'dcdpr-jp/anthropic/test_chat_completion_stream.yml',
    usage: {
      input_tokens: 38,
      output_tokens: 64,
      reasoning_tokens: null,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      total_tokens: 102,
    },
  },
  {
    name: 'Anthropic: adaptive thinking (Opus 4.6), then the answer',
    kind: 'anthropic',
    fixture: 'dcdpr-jp/anthropic/test_opus_4_6_adaptive_thinking.yml',
    usage: {
      input_tokens: 33,
      output_tokens: 30,
      reasoning_tokens: null,
      cached_input_tokens: 0,
      cache_write_tokens: 0,
      total_tokens: 63,
    },
  },
];

/** Recordings replayed in text mode: one of each wire (Responses, Chat, Anthropic, OpenAI-compatible servers). */
const textModeAnswers: [string, ReplayRunOptions['kind'], string][] = [
  ...plainAnswers.map((answer): [string, ReplayRunOptions['kind'], string] => [
    answer.name,
    answer.kind,
    answer.fixture,
  ]),
  ['OpenAI Chat: a long answer with late usage', 'openai-chat', 'vercel-ai/openai/chat/openai-text.chunks.txt'],
  [
    'llama.cpp (OpenAI-compatible): reasoning_content, then the answer, no usage',
    'compatible:llamacpp',
    'dcdpr-jp/llamacpp/test_chat_completion_stream.yml',
  ],
  [
    'xAI (OpenAI-compatible): reasoning tokens apart from the output',
    'compatible:xai',
    'vercel-ai/openai-compatible/chat/xai-text.chunks.txt',
  ],
];

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
        const replay = await run({
          kind: 'openai-chat',
          replies: ['vercel-ai/openai/chat/openai-text.chunks.txt'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.match(result.answer, /^\*\*Holiday Name:\*\* Harmony Day\n\n/);
        assert.match(result.answer, /mutual respect\.$/);
        assert.deepEqual(result.metadata.usage, {
          input_tokens: 16,
          output_tokens: 300,
          reasoning_tokens: 0,
          cached_input_tokens: 0,
          cache_write_tokens: null,
          total_tokens: 316,
        });
        assert.equal(result.metadata.finish_reason, 'stop');
        assert.deepEqual(result.warnings, []);
      });

      it("Anthropic: a refusal is exit 1, error.code refused, with the provider's reason", async () => {
        const replay = await run({
          kind: 'anthropic',
          replies: ['vercel-ai/anthropic/anthropic-refusal.chunks.txt'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'error');
        assert.equal(result.error.code, 'refused');
        assert.match(
          result.error.message,
          /refused to answer \(refusal\): This request triggered restrictions on violative cyber content/,
        );
        assert.equal(result.metadata.finish_reason, 'content-filter');
        assert.equal(result.answer, '');
        const end = replay.events[replay.events.length - 1]!;
        assert.deepEqual(
          [end.type, end.status, end.error.code, end.finish_reason],
          ['turn_end', 'error', 'refused', 'content-filter'],
        );
      });

      it('DeepSeek (OpenAI-compatible): finish_reason length keeps the answer, warns, exit 0', async () => {
        const replay = await run({
          kind: 'compatible:deepseek',
          replies: ['vercel-ai/deepseek/chat/deepseek-text.chunks.txt'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(result.metadata.finish_reason, 'length');
        assert.ok(result.answer.length > 1000, 'the cut answer is kept');
        assert.deepEqual(
          result.warnings.map((warning: { code: string }) => warning.code),
          ['output_limit'],
        );
        // No cap was set and no window filled: the provider's own limit, after its 400 tokens.
        assert.match(result.warnings[0].message, /cut at the provider's output limit after 400 tokens \(jp set no cap/);
        const warning = replay.stderr
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line))
          .find((line) => line.type === 'warning');
        assert.match(warning?.message ?? '', /cut at the provider's output limit/);
        assert.equal(replay.events[replay.events.length - 1]!.finish_reason, 'length');
      });

      it("OpenAI Responses: insufficient_quota inside a 200 stream is exit 1 at once, with the provider's message", async () => {
        const replay = await run({
          kind: 'openai-responses',
          replies: ['vercel-ai/openai/responses/openai-error.1.chunks.txt'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'error');
        assert.equal(result.error.code, 'quota_exceeded');
        assert.match(
          result.error.message,
          /You exceeded your current quota, please check your plan and billing details/,
        );
        assert.equal(replay.provider.requests.length, 1, 'not retried');
        assert.doesNotMatch(replay.stderr, /retrying in/);
      });

      it("OpenAI Responses: hosted web_search is the provider's, never jp's; its citations are the sources", async () => {
        const replay = await run({
          kind: 'openai-responses',
          replies: ['vercel-ai/openai/responses/openai-web-search-tool.1.chunks.txt'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(replay.provider.requests.length, 1, 'no second request: nothing for jp to answer');
        // The recording's input_tokens_details.cached_tokens reaches the result and the log.
        assert.equal(result.metadata.usage.cached_input_tokens, 3712);
        assert.deepEqual(
          replay.events.filter((event) => event.type === 'usage').map((event) => event.usage.cached_input_tokens),
          [3712],
        );
        assert.deepEqual(result.tools, [], 'not counted as jp tool calls');
        assert.doesNotMatch(replay.stdout + replay.stderr, /Unknown tool/i);
        assert.ok(result.sources.length > 0);
        assert.ok(result.sources.every((source: { url?: string }) => /^https:\/\//.test(source.url ?? '')));
        const calls = replay.events.filter((event) => event.type === 'tool_call_request');
        assert.ok(
          calls.length > 0 && calls.every((event) => event.provider_executed === true && event.name === 'web_search'),
        );
        assert.ok(
          !replay.events.some((event) => event.type === 'tool_call_start' || event.type === 'inquiry_request'),
          'never run, never prompted for',
        );
        const toolLines = replay.stdout.split('\n').filter((line) => line.includes('"type":"tool_call"'));
        assert.ok(toolLines.length > 0 && toolLines.every((line) => JSON.parse(line).provider_executed === true));
      });

      it('Anthropic: hosted web_search result passes through, citations become sources', async () => {
        const replay = await run({
          kind: 'anthropic',
          replies: ['vercel-ai/anthropic/anthropic-web-search-tool.1.chunks.txt'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(replay.provider.requests.length, 1);
        assert.deepEqual(result.tools, []);
        assert.ok(
          result.sources.some(
            (source: { url?: string; title?: string }) =>
              source.url ===
                'https://www.apple.com/newsroom/2025/09/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo/' &&
              source.title,
          ),
        );
        const response = replay.events.find((event) => event.type === 'tool_call_response' && event.provider_executed);
        assert.ok(
          response && JSON.parse(response.content).some((entry: { url: string }) => entry.url.startsWith('https://')),
          'the search result as the provider sent it',
        );
        assert.match(result.answer, /^Based on my search results/);
      });

      it('llama.cpp: a server that sends no usage reports null, never 0', async () => {
        const replay = await run({
          kind: 'compatible:llamacpp',
          replies: ['dcdpr-jp/llamacpp/test_chat_completion_stream.yml'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(result.metadata.usage, null);
        assert.ok(result.answer.length > 0);
      });

      it("xAI: reasoning tokens reported apart are counted in the totals (914, the provider's own)", async () => {
        const replay = await run({
          kind: 'compatible:xai',
          replies: [
            'vercel-ai/openai-compatible/chat/xai-tool-call.chunks.txt',
            'vercel-ai/openai-compatible/chat/xai-text.chunks.txt',
          ],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.deepEqual(result.metadata.usage, {
          input_tokens: 319,
          output_tokens: 595,
          reasoning_tokens: 567,
          cached_input_tokens: 317,
          cache_write_tokens: null,
          total_tokens: 914,
        });
        assert.deepEqual(
          result.tools.map((tool: { name: string; status: string }) => [tool.name, tool.status]),
          [['weather', 'ok']],
        );
        assert.ok(
          replay.events.some(
            (event) =>
              event.type === 'chat_response' && typeof event.reasoning === 'string' && event.reasoning.length > 0,
          ),
        );
      });

      it('Anthropic thinking with a tool round: the signed thinking block goes back unchanged', async () => {
        const replay = await run({
          kind: 'anthropic',
          replies: ['dcdpr-jp/anthropic/test_tool_call_reasoning.yml'],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(result.status, 'success');
        assert.equal(replay.provider.requests.length, 2);
        const recorded = replay.events.find((event) => event.type === 'chat_response' && event.provider_metadata);
        const signature = recorded?.provider_metadata?.anthropic?.signature;
        assert.equal(typeof signature, 'string');
        const assistant = replay.provider.requests[1]!.body.messages.find(
          (message: { role: string }) => message.role === 'assistant',
        );
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
    [
      'OpenAI Responses, arguments in deltas',
      'openai-responses',
      ['dcdpr-jp/openai/test_tool_call_stream.yml'],
      ['run_me'],
    ],
    [
      'OpenAI Responses, encrypted reasoning',
      'openai-responses',
      ['dcdpr-jp/openai/test_tool_call_reasoning.yml'],
      ['run_me'],
    ],
    [
      'OpenAI Responses, three rounds',
      'openai-responses',
      ['vercel-ai/openai/responses/openai-reasoning-encrypted-content.1.chunks.txt'],
      ['calculator', 'calculator', 'calculator'],
    ],
    [
      'OpenRouter, two calls in one response',
      'compatible:openrouter',
      ['dcdpr-jp/openrouter/test_anthropic_opus_5_parallel_tool_round_trip.yml'],
      ['list_items', 'search_items'],
    ],
    [
      'OpenRouter, encrypted reasoning details',
      'compatible:openrouter',
      ['dcdpr-jp/openrouter/test_tool_call_reasoning.yml'],
      ['run_me'],
    ],
    [
      'llama.cpp, arguments in many deltas',
      'compatible:llamacpp',
      ['dcdpr-jp/llamacpp/test_tool_call_stream.yml'],
      ['run_me'],
    ],
    [
      'Cerebras, reasoning deltas',
      'compatible:cerebras',
      ['dcdpr-jp/cerebras/test_tool_call_reasoning.yml'],
      ['run_me'],
    ],
    [
      'a tool_calls index of 1',
      'compatible:fallback',
      [
        'vercel-ai/openai-compatible/chat/anthropic-fallback-tool-call.sse',
        'vercel-ai/openai-compatible/chat/xai-text.chunks.txt',
      ],
      ['read_file'],
    ],
    [
      'Anthropic, empty tool input',
      'anthropic',
      ['vercel-ai/anthropic/anthropic-tool-no-args.chunks.txt', 'vercel-ai/anthropic/anthropic-text.chunks.txt'],
      ['updateIssueList'],
    ],
    [
      'Anthropic, input in input_json_delta',
      'anthropic',
      ['vercel-ai/anthropic/anthropic-json-tool.2.chunks.txt', 'vercel-ai/anthropic/anthropic-text.chunks.txt'],
      ['json'],
    ],
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
      for (const tool of result.tools)
        assert.ok(replay.events.some((event) => event.type === 'tool_call_response' && event.id === tool.id));
      assert.equal(result.metadata.finish_reason, 'stop');
    });
  }

  describe('text mode', () => {
    it("stdout is the answer and its Sources list; the provider's tool is chrome on stderr", async () => {
      const replay = await run({
        kind: 'anthropic',
        replies: ['vercel-ai/anthropic/anthropic-web-search-tool.1.chunks.txt'],
        mode: 'text',
      });
      assert.equal(replay.code, 0, replay.stderr);
      assert.match(replay.stdout, /^Based on my search results/);
      assert.match(replay.stdout, /\n\nSources:\n\n1\. .+ — https:\/\/\S+\n/);
      assert.match(
        replay.stdout,
        /Apple Ginza .*— https:\/\/www\.apple\.com\/newsroom\/2025\/09\/the-all-new-apple-ginza-opens-this-friday-september-26-in-tokyo\//,
      );
      assert.match(replay.stderr, /\[tool\] web_search .*\(run by the provider\)/);
      assert.doesNotMatch(replay.stdout, /web_search/);
    });

    it('a refusal: exit 1, the reason on stderr, nothing on stdout', async () => {
      const replay = await run({
        kind: 'anthropic',
        replies: ['vercel-ai/anthropic/anthropic-refusal.chunks.txt'],
        mode: 'text',
      });
      assert.equal(replay.code, 1);
      assert.equal(replay.stdout, '');
      assert.match(replay.stderr, /error: .*refused to answer \(refusal\): This request triggered restrictions/);
    });

    it('a truncated answer: exit 0, the answer on stdout, the warning on stderr', async () => {
      const replay = await run({
        kind: 'compatible:deepseek',
        replies: ['vercel-ai/deepseek/chat/deepseek-text.chunks.txt'],
        mode: 'text',
      });
      assert.equal(replay.code, 0);
      assert.ok(replay.stdout.length > 1000);
      assert.doesNotMatch(replay.stdout, /output limit/);
      assert.match(replay.stderr, /jp: the answer was cut at the provider's output limit after 400 tokens/);
    });

    it("a quota error: exit 1, the provider's words (not its JSON), no retry", async () => {
      const replay = await run({
        kind: 'openai-responses',
        replies: ['vercel-ai/openai/responses/openai-error.1.chunks.txt'],
        mode: 'text',
      });
      assert.equal(replay.code, 1);
      assert.match(replay.stderr, /error: .*quota or billing.*: You exceeded your current quota/);
      assert.doesNotMatch(replay.stderr, /\{"/);
      assert.equal(replay.provider.requests.length, 1);
    });
  });
  for (const writes of ['event', 'byte'] as const) {
    describe(`a plain answer in JSON mode, written ${writes === 'byte' ? 'one byte' : 'one SSE event'} at a time`, () => {
      for (const answer of plainAnswers) {
        it(`${answer.name}: its text, reasoning, usage and finish (exit 0)`, async () => {
          const recording = loadRecording(answer.fixture)[0]!;
          const replay = await run({ kind: answer.kind, replies: [answer.fixture], writes });
          const result = checkJson(replay);
          assert.equal(result.status, 'success', result.error?.message);
          const text = recordedText(recording);
          assert.ok(text.length > 0);
          assert.equal(result.answer, text);
          assert.deepEqual(result.metadata.usage, answer.usage);
          assert.equal(result.metadata.finish_reason, 'stop');
          assert.deepEqual(result.warnings, []);
          assert.equal(replay.provider.requests.length, 1);
          const end = replay.events[replay.events.length - 1]!;
          assert.deepEqual([end.type, end.status, end.finish_reason], ['turn_end', 'completed', 'stop']);

          // The answer and the reasoning, streamed on stdout and logged, each exactly once.
          const lines = replay.stdout
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as Record<string, any>);
          const streamed = (type: string) =>
            lines
              .filter((line) => line.type === type)
              .map((line) => line.text)
              .join('');
          const logged = (field: 'message' | 'reasoning') =>
            replay.events
              .filter((event) => event.type === 'chat_response' && typeof event[field] === 'string')
              .map((event) => event[field])
              .join('');
          assert.equal(streamed('assistant_text'), text);
          assert.equal(logged('message'), text);
          const reasoning = recordedReasoning(recording);
          assert.equal(streamed('assistant_reasoning'), reasoning);
          assert.equal(logged('reasoning'), reasoning);
          // Anthropic's thinking is kept with its signature, unchanged, to be sent back.
          const signatures = replay.events
            .map((event) => event.provider_metadata?.anthropic?.signature)
            .filter((signature) => signature !== undefined);
          assert.deepEqual(signatures, recordedSignatures(recording));
        });
      }
    });

    describe(`text mode, written ${writes === 'byte' ? 'one byte' : 'one SSE event'} at a time`, () => {
      for (const [name, kind, fixture] of textModeAnswers) {
        it(`${name}: stdout is exactly the answer, stderr has no answer or reasoning (exit 0)`, async () => {
          const replay = await run({ kind, replies: [fixture], writes, mode: 'text' });
          const text = recordedText(loadRecording(fixture)[0]!);
          assert.ok(text.length > 0);
          assert.equal(replay.code, 0, replay.stderr);
          assert.equal(replay.stdout, `${text}\n`);
          assert.equal(replay.stderr, '', 'no chrome for a plain answer, and never the answer or its reasoning');
          assert.equal(replay.provider.requests.length, 1);
        });
      }

      it('a truncated answer (DeepSeek, finish_reason length): the answer on stdout, the warning on stderr, exit 0', async () => {
        const fixture = 'vercel-ai/deepseek/chat/deepseek-text.chunks.txt';
        const replay = await run({ kind: 'compatible:deepseek', replies: [fixture], writes, mode: 'text' });
        assert.equal(replay.code, 0, replay.stderr);
        assert.equal(replay.stdout, `${recordedText(loadRecording(fixture)[0]!)}\n`);
        assert.equal(
          replay.stderr,
          "jp: the answer was cut at the provider's output limit after 400 tokens (jp set no cap: assistant.max_output_tokens is unset; a server may also stop when its context window is full)\n",
        );
      });
    });
  }
});
