/**
 * Proves the fake provider is faithful: the real AI SDK provider models are pointed at it
 * and driven through the LanguageModelV3 interface (`doStream` / `doGenerate`).
 */
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3FunctionTool,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import {
  gate,
  startFakeProvider,
  stepByToolResults,
  textStep,
  toolStep,
  type FakeProvider,
  type FakeProviderOptions,
  type NormalisedMessage,
  type RecordedRequest,
  type ScriptedStep,
  type WireFormat,
} from './fake-provider.ts';

// ---------------------------------------------------------------------------
// Fixtures and helpers
// ---------------------------------------------------------------------------

interface Client {
  label: string;
  wire: WireFormat;
  createModel(baseURL: string): LanguageModelV3;
}

const clients: Client[] = [
  {
    label: 'openai chat',
    wire: 'openai-chat',
    createModel: (baseURL) => createOpenAI({ baseURL, apiKey: 'test' }).chat('gpt-x'),
  },
  {
    label: 'openai-compatible chat',
    wire: 'openai-chat',
    createModel: (baseURL) =>
      createOpenAICompatible({ name: 'local', baseURL, apiKey: 'test', includeUsage: true }).chatModel('m'),
  },
  {
    label: 'openai responses',
    wire: 'openai-responses',
    createModel: (baseURL) => createOpenAI({ baseURL, apiKey: 'test' }).responses('gpt-x'),
  },
  {
    label: 'anthropic',
    wire: 'anthropic',
    createModel: (baseURL) => createAnthropic({ baseURL, apiKey: 'test' })('claude-x'),
  },
];

const sleep = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

const objectSchema = (properties: Record<string, unknown>) => ({
  type: 'object' as const,
  properties,
  additionalProperties: false,
});
const tools: LanguageModelV3FunctionTool[] = [
  {
    type: 'function',
    name: 'read_file',
    description: 'Read a file',
    inputSchema: objectSchema({ path: { type: 'string' } }),
  },
  {
    type: 'function',
    name: 'run_command',
    description: 'Run a command',
    inputSchema: objectSchema({ command: { type: 'string' }, timeout: { type: 'number' } }),
  },
];

const userPrompt = (text: string): LanguageModelV3Prompt => [{ role: 'user', content: [{ type: 'text', text }] }];

/** system, user, assistant (text + tool call), tool (result): the shape of a tool loop. */
const toolLoopPrompt: LanguageModelV3Prompt = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: [{ type: 'text', text: 'Read the notes file.' }] },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading it now.' },
      { type: 'tool-call', toolCallId: 'call_abc', toolName: 'read_file', input: { path: 'notes.txt' } },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_abc',
        toolName: 'read_file',
        output: { type: 'text', value: 'hello from notes' },
      },
    ],
  },
];

const expectedToolLoopMessages: NormalisedMessage[] = [
  { role: 'system', text: 'You are terse.', toolCalls: [], toolResults: [] },
  { role: 'user', text: 'Read the notes file.', toolCalls: [], toolResults: [] },
  {
    role: 'assistant',
    text: 'Reading it now.',
    toolCalls: [{ id: 'call_abc', name: 'read_file', arguments: '{"path":"notes.txt"}' }],
    toolResults: [],
  },
  { role: 'tool', text: '', toolCalls: [], toolResults: [{ id: 'call_abc', content: 'hello from notes' }] },
];

async function startProvider(t: TestContext, options: FakeProviderOptions): Promise<FakeProvider> {
  const provider = await startFakeProvider(options);
  t.after(() => provider.close());
  return provider;
}

function callOptions(
  prompt: LanguageModelV3Prompt,
  extra: Partial<LanguageModelV3CallOptions> = {},
): LanguageModelV3CallOptions {
  return { prompt, ...extra };
}

/** Reads a stream to its end with a reader loop; a rejected read propagates. */
async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const reader = stream.getReader();
  const items: T[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return items;
      items.push(value);
    }
  } finally {
    reader.releaseLock();
  }
}

async function streamParts(
  model: LanguageModelV3,
  options: LanguageModelV3CallOptions,
): Promise<LanguageModelV3StreamPart[]> {
  const result = await model.doStream(options);
  return readAll(result.stream);
}

function partsOfType<K extends LanguageModelV3StreamPart['type']>(parts: LanguageModelV3StreamPart[], type: K) {
  return parts.filter((part): part is Extract<LanguageModelV3StreamPart, { type: K }> => part.type === type);
}

function streamedText(parts: LanguageModelV3StreamPart[]): string {
  return partsOfType(parts, 'text-delta')
    .map((part) => part.delta)
    .join('');
}

function finishPart(parts: LanguageModelV3StreamPart[]) {
  const finishes = partsOfType(parts, 'finish');
  assert.equal(
    finishes.length,
    1,
    `expected exactly one finish part, got ${JSON.stringify(parts.map((part) => part.type))}`,
  );
  return finishes[0]!;
}

function assertNoErrorParts(parts: LanguageModelV3StreamPart[]): void {
  const errors = partsOfType(parts, 'error');
  assert.deepEqual(errors, [], `unexpected error parts: ${JSON.stringify(errors.map((part) => String(part.error)))}`);
}

function isApiCallErrorWithStatus(status: number) {
  return (error: unknown) => {
    assert.ok(APICallError.isInstance(error), `expected an APICallError, got ${String(error)}`);
    assert.equal(error.statusCode, status);
    return true;
  };
}

/** Normalised messages with tool-call arguments re-serialised, so JSON spacing differences do not matter. */
function canonicalMessages(messages: NormalisedMessage[]): NormalisedMessage[] {
  return messages.map((message) => ({
    ...message,
    toolCalls: message.toolCalls.map((call) => ({ ...call, arguments: JSON.stringify(JSON.parse(call.arguments)) })),
  }));
}

async function postRaw(provider: FakeProvider, path: string, body: string): Promise<{ status: number; json: any }> {
  const response = await fetch(`http://127.0.0.1:${provider.port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, json: await response.json() };
}

// ---------------------------------------------------------------------------
// The same contract for every real SDK client
// ---------------------------------------------------------------------------

for (const client of clients) {
  describe(`fake provider with the real ${client.label} model`, () => {
    it('streams text in several chunks and reports the scripted usage', async (t) => {
      const text = 'The quick brown fox jumps over the lazy dog.';
      const provider = await startProvider(t, {
        wire: client.wire,
        steps: [textStep(text, { usage: { input: 42, output: 7 } })],
      });
      const parts = await streamParts(
        client.createModel(provider.baseUrl),
        callOptions(userPrompt('Say the sentence.')),
      );

      assertNoErrorParts(parts);
      assert.ok(partsOfType(parts, 'text-delta').length >= 9, 'text should arrive as one delta per word');
      assert.equal(streamedText(parts), text);
      const finish = finishPart(parts);
      assert.equal(finish.finishReason.unified, 'stop');
      assert.equal(finish.usage.inputTokens.total, 42);
      assert.equal(finish.usage.outputTokens.total, 7);
      assert.equal(provider.requests.length, 1);
      assert.equal(provider.requests[0]!.body.stream, true);
    });

    it('streams two tool calls with their names and JSON inputs', async (t) => {
      const provider = await startProvider(t, {
        wire: client.wire,
        steps: [
          toolStep([
            { name: 'read_file', arguments: { path: 'src/main.ts' } },
            { id: 'explicit_id_2', name: 'run_command', arguments: { command: 'ls -la', timeout: 30 } },
          ]),
        ],
      });
      const parts = await streamParts(
        client.createModel(provider.baseUrl),
        callOptions(userPrompt('Look around.'), { tools }),
      );

      assertNoErrorParts(parts);
      const calls = partsOfType(parts, 'tool-call');
      assert.deepEqual(
        calls.map((call) => [call.toolName, JSON.parse(call.input)]),
        [
          ['read_file', { path: 'src/main.ts' }],
          ['run_command', { command: 'ls -la', timeout: 30 }],
        ],
      );
      assert.equal(calls[1]!.toolCallId, 'explicit_id_2');
      assert.match(calls[0]!.toolCallId, client.wire === 'anthropic' ? /^toolu_\d+$/ : /^call_\d+$/);
      assert.ok(partsOfType(parts, 'tool-input-delta').length >= 4, 'arguments should be streamed in pieces');
      const finish = finishPart(parts);
      assert.equal(finish.finishReason.unified, 'tool-calls');
      assert.equal(finish.usage.outputTokens.total, 2, 'default usage counts the tool calls');
      assert.deepEqual(provider.requests[0]!.toolNames, ['read_file', 'run_command']);
    });

    it('records a normalised conversation with a tool call and its result', async (t) => {
      const provider = await startProvider(t, { wire: client.wire, steps: [textStep('ok')] });
      const parts = await streamParts(client.createModel(provider.baseUrl), callOptions(toolLoopPrompt, { tools }));

      assertNoErrorParts(parts);
      const [request] = provider.requests;
      assert.ok(request);
      assert.equal(request.wire, client.wire);
      assert.deepEqual(canonicalMessages(request.messages), expectedToolLoopMessages);
      assert.equal(request.wantsJson, false);
    });

    it('surfaces a scripted 500 as an APICallError', async (t) => {
      const provider = await startProvider(t, { wire: client.wire, steps: [{ status: 500 }] });
      await assert.rejects(
        async () => client.createModel(provider.baseUrl).doStream(callOptions(userPrompt('hi'))),
        isApiCallErrorWithStatus(500),
      );
      assert.equal(provider.requests.length, 1, 'the failed request is still recorded');
    });

    it('surfaces a scripted 429 as a retryable APICallError with its headers', async (t) => {
      const provider = await startProvider(t, {
        wire: client.wire,
        steps: [{ status: 429, headers: { 'retry-after': '3' } }],
      });
      await assert.rejects(
        async () => client.createModel(provider.baseUrl).doStream(callOptions(userPrompt('hi'))),
        (error: unknown) => {
          isApiCallErrorWithStatus(429)(error);
          assert.ok(APICallError.isInstance(error));
          assert.equal(error.isRetryable, true);
          assert.equal(error.responseHeaders?.['retry-after'], '3');
          return true;
        },
      );
    });

    it('turns a mid-stream hang-up into a stream failure instead of a hang', async (t) => {
      const provider = await startProvider(t, {
        wire: client.wire,
        steps: [{ hangUpAfterParts: [{ text: 'partial ' }, { text: 'answer' }] }],
      });
      const result = await client.createModel(provider.baseUrl).doStream(callOptions(userPrompt('hi')));

      // Read part by part so the parts delivered before the failure are kept.
      const reader = result.stream.getReader();
      const parts: LanguageModelV3StreamPart[] = [];
      let failure: unknown;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parts.push(value);
        }
      } catch (error) {
        failure = error;
      }
      assert.equal(streamedText(parts), 'partial answer', 'the parts before the hang-up are delivered');
      assert.ok(
        failure !== undefined || partsOfType(parts, 'error').length > 0,
        `expected a failure, got parts ${JSON.stringify(parts.map((part) => part.type))}`,
      );
      assert.ok(
        !parts.some((part) => part.type === 'finish' && part.finishReason.unified === 'stop'),
        'a cut stream must not finish normally',
      );
    });

    it('answers a non-streaming request with the same scripted content', async (t) => {
      const provider = await startProvider(t, {
        wire: client.wire,
        steps: [
          {
            parts: [
              { text: 'Let me check. ' },
              { toolCall: { id: 'call_x', name: 'read_file', arguments: { path: 'a.txt' } } },
            ],
            usage: { input: 5, output: 3 },
          },
        ],
      });
      const result = await client.createModel(provider.baseUrl).doGenerate(callOptions(userPrompt('hi'), { tools }));

      const text = result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      const calls = result.content.flatMap((part) => (part.type === 'tool-call' ? [part] : []));
      assert.equal(text, 'Let me check. ');
      assert.deepEqual(
        calls.map((call) => [call.toolCallId, call.toolName, JSON.parse(call.input)]),
        [['call_x', 'read_file', { path: 'a.txt' }]],
      );
      assert.equal(result.finishReason.unified, 'tool-calls');
      assert.equal(result.usage.inputTokens.total, 5);
      assert.equal(result.usage.outputTokens.total, 3);
      assert.notEqual(provider.requests[0]!.body.stream, true);
    });

    it('flags structured-output requests and answers them with the scripted JSON text', async (t) => {
      const answer = { city: 'Paris', population: 2100000 };
      const provider = await startProvider(t, {
        wire: client.wire,
        steps: [textStep(JSON.stringify(answer), { chunks: 3 })],
      });
      const parts = await streamParts(
        client.createModel(provider.baseUrl),
        callOptions(userPrompt('Give me a city.'), {
          responseFormat: {
            type: 'json',
            schema: objectSchema({ city: { type: 'string' }, population: { type: 'number' } }),
          },
        }),
      );

      assertNoErrorParts(parts);
      assert.deepEqual(JSON.parse(streamedText(parts)), answer);
      assert.equal(finishPart(parts).finishReason.unified, 'stop');
      assert.equal(provider.requests[0]!.wantsJson, true);
      assert.deepEqual(provider.requests[0]!.toolNames, []);
    });

    it('streams scripted reasoning without disturbing the text', async (t) => {
      const provider = await startProvider(t, {
        wire: client.wire,
        steps: [{ parts: [{ reasoning: 'Think ' }, { reasoning: 'hard.' }, { text: 'Answer.' }] }],
      });
      const parts = await streamParts(client.createModel(provider.baseUrl), callOptions(userPrompt('hi')));

      assertNoErrorParts(parts);
      assert.equal(streamedText(parts), 'Answer.');
      const reasoning = partsOfType(parts, 'reasoning-delta')
        .map((part) => part.delta)
        .join('');
      // The plain OpenAI chat model ignores `reasoning_content`; every other client surfaces it.
      assert.equal(reasoning, client.label === 'openai chat' ? '' : 'Think hard.');
      assert.equal(finishPart(parts).finishReason.unified, 'stop');
    });
  });
}

// ---------------------------------------------------------------------------
// Wire-specific behaviour
// ---------------------------------------------------------------------------

describe('fake provider wire details', () => {
  it('emits the OpenAI chat usage chunk only when the request asks for it', async (t) => {
    const provider = await startProvider(t, {
      wire: 'openai-chat',
      steps: [textStep('hi there', { usage: { input: 3, output: 2 } })],
    });
    const withoutUsage = createOpenAICompatible({ name: 'local', baseURL: provider.baseUrl, apiKey: 'test' }).chatModel(
      'm',
    );
    const parts = await streamParts(withoutUsage, callOptions(userPrompt('hi')));

    assertNoErrorParts(parts);
    assert.equal(streamedText(parts), 'hi there');
    assert.equal(provider.requests[0]!.body.stream_options, undefined);
    assert.equal(finishPart(parts).usage.inputTokens.total, undefined);
  });

  it('answers the Anthropic forced json tool with a json tool_use block', async (t) => {
    const provider = await startProvider(t, { wire: 'anthropic', steps: [textStep('{"ok": true}', { chunks: 2 })] });
    const parts = await streamParts(
      createAnthropic({ baseURL: provider.baseUrl, apiKey: 'test' })('claude-x'),
      callOptions(userPrompt('hi'), {
        tools,
        responseFormat: { type: 'json', schema: objectSchema({ ok: { type: 'boolean' } }) },
        providerOptions: { anthropic: { structuredOutputMode: 'jsonTool' } },
        includeRawChunks: true,
      }),
    );

    assertNoErrorParts(parts);
    const [request] = provider.requests;
    assert.ok(request);
    assert.ok(
      request.body.tools.some((tool: any) => tool.name === 'json'),
      'the SDK offered its json tool',
    );
    assert.equal(request.wantsJson, true);
    assert.deepEqual(request.toolNames, ['read_file', 'run_command']);
    // On the wire the answer is a `json` tool_use block (the SDK would also accept plain text).
    const blockStarts = partsOfType(parts, 'raw')
      .map((part) => part.rawValue as any)
      .filter((event) => event.type === 'content_block_start');
    assert.deepEqual(
      blockStarts.map((event) => [event.content_block.type, event.content_block.name]),
      [['tool_use', 'json']],
    );
    assert.deepEqual(JSON.parse(streamedText(parts)), { ok: true });
    assert.deepEqual(partsOfType(parts, 'tool-call'), []);
    assert.equal(finishPart(parts).finishReason.unified, 'stop');
  });

  it('marks Anthropic error tool results and splits them out of the user message', async (t) => {
    const provider = await startProvider(t, { wire: 'anthropic', steps: [textStep('noted')] });
    const prompt: LanguageModelV3Prompt = [
      { role: 'user', content: [{ type: 'text', text: 'Run it.' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'toolu_a', toolName: 'run_command', input: { command: 'false' } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'toolu_a',
            toolName: 'run_command',
            output: { type: 'error-text', value: 'exit 1' },
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Why did it fail?' }] },
    ];
    await streamParts(
      createAnthropic({ baseURL: provider.baseUrl, apiKey: 'test' })('claude-x'),
      callOptions(prompt, { tools }),
    );

    const [request] = provider.requests;
    assert.ok(request);
    // The SDK sends the tool result and the follow-up question in one Anthropic user message.
    assert.equal(request.body.messages.length, 3);
    assert.deepEqual(
      request.messages.map((message) => [message.role, message.text, message.toolResults]),
      [
        ['user', 'Run it.', []],
        ['assistant', '', []],
        ['tool', '', [{ id: 'toolu_a', content: 'exit 1', isError: true }]],
        ['user', 'Why did it fail?', []],
      ],
    );
  });

  it('resolves Responses API item references to the items it emitted earlier', async (t) => {
    const provider = await startProvider(t, {
      wire: 'openai-responses',
      steps: [
        toolStep([{ id: 'call_r1', name: 'read_file', arguments: { path: 'x' } }], 'Checking.'),
        textStep('done'),
      ],
    });
    const model = createOpenAI({ baseURL: provider.baseUrl, apiKey: 'test' }).responses('gpt-x');
    const first = await streamParts(model, callOptions(userPrompt('Read x.'), { tools }));
    const textStart = partsOfType(first, 'text-start')[0];
    const call = partsOfType(first, 'tool-call')[0];
    assert.ok(textStart?.providerMetadata && call);

    // Feed the response back the way the AI SDK core does: provider metadata becomes provider options.
    const followUp: LanguageModelV3Prompt = [
      ...userPrompt('Read x.'),
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.', providerOptions: textStart.providerMetadata },
          {
            type: 'tool-call',
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            input: JSON.parse(call.input),
            providerOptions: call.providerMetadata,
          },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_r1',
            toolName: 'read_file',
            output: { type: 'text', value: 'contents' },
          },
        ],
      },
    ];
    await streamParts(model, callOptions(followUp, { tools }));

    const second = provider.requests[1]!;
    assert.ok(
      second.body.input.some((item: any) => item.type === 'item_reference'),
      'the SDK should refer to the stored message item',
    );
    assert.deepEqual(canonicalMessages(second.messages), [
      { role: 'user', text: 'Read x.', toolCalls: [], toolResults: [] },
      {
        role: 'assistant',
        text: 'Checking.',
        toolCalls: [{ id: 'call_r1', name: 'read_file', arguments: '{"path":"x"}' }],
        toolResults: [],
      },
      { role: 'tool', text: '', toolCalls: [], toolResults: [{ id: 'call_r1', content: 'contents' }] },
    ]);
  });

  it('answers unknown paths with 404 and invalid JSON with 400, without recording them', async (t) => {
    const provider = await startProvider(t, { wire: 'openai-chat', steps: [textStep('unused')] });
    const notFound = await postRaw(provider, '/v1/messages', '{}');
    assert.equal(notFound.status, 404);
    assert.match(notFound.json.error.message, /No route/);
    const badJson = await postRaw(provider, '/v1/chat/completions', '{"model": ');
    assert.equal(badJson.status, 400);
    assert.match(badJson.json.error.message, /not valid JSON/);
    assert.equal(provider.requests.length, 0);
  });

  it('uses the Anthropic error body shape for scripted failures', async (t) => {
    const provider = await startProvider(t, { wire: 'anthropic', steps: [{ status: 529 }] });
    const reply = await postRaw(provider, '/v1/messages', JSON.stringify({ model: 'claude-x', messages: [] }));
    assert.equal(reply.status, 529);
    assert.deepEqual(reply.json.type, 'error');
    assert.equal(reply.json.error.type, 'overloaded_error');
  });

  it('keeps serving after a client disconnects mid-stream', async (t) => {
    const provider = await startProvider(t, {
      wire: 'anthropic',
      steps: [{ parts: [{ text: 'first ' }, { delayMs: 200 }, { text: 'never read' }] }, textStep('second answer')],
    });
    const model = createAnthropic({ baseURL: provider.baseUrl, apiKey: 'test' })('claude-x');
    const abort = new AbortController();
    const result = await model.doStream(callOptions(userPrompt('one'), { abortSignal: abort.signal }));
    const reader = result.stream.getReader();
    let firstText = '';
    while (firstText === '') {
      const { value, done } = await reader.read();
      assert.equal(done, false, 'stream ended before the first text');
      if (value?.type === 'text-delta') firstText = value.delta;
    }
    abort.abort();
    await reader.cancel().catch(() => {});

    const parts = await streamParts(model, callOptions(userPrompt('two')));
    assert.equal(firstText, 'first ');
    assert.equal(streamedText(parts), 'second answer');
    assert.equal(provider.requests.length, 2);
  });

  it('a gate part holds the stream until the test opens it; closing the server ends a held stream', async (t) => {
    const held = gate();
    const provider = await startProvider(t, {
      wire: 'openai-chat',
      steps: [{ parts: [{ text: 'before ' }, { gate: held }, { text: 'after' }] }],
    });
    const model = createOpenAI({ baseURL: provider.baseUrl, apiKey: 'test' }).chat('gpt-x');
    const reader = (await model.doStream(callOptions(userPrompt('one')))).stream.getReader();
    const texts: string[] = [];
    while (texts.length === 0) {
      const { value, done } = await reader.read();
      assert.equal(done, false, 'stream ended before the first text');
      if (value?.type === 'text-delta') texts.push(value.delta);
    }
    // Time for a stream that did not hold to deliver the rest; the gate is still closed.
    await sleep(100);
    let opened = false;
    const rest = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        if (value.type === 'text-delta') texts.push(`${value.delta} (${opened ? 'after' : 'before'} open)`);
      }
    })();
    await sleep(100);
    assert.deepEqual(texts, ['before '], 'nothing passes a closed gate');
    opened = true;
    held.open();
    await rest;
    assert.deepEqual(texts, ['before ', 'after (after open)']);

    const closing = await startFakeProvider({
      wire: 'anthropic',
      steps: [{ parts: [{ text: 'held ' }, { gate: gate() }, { text: 'never' }] }],
    });
    const heldReader = (
      await createAnthropic({ baseURL: closing.baseUrl, apiKey: 'test' })('claude-x').doStream(
        callOptions(userPrompt('two')),
      )
    ).stream.getReader();
    const heldTexts: string[] = [];
    while (heldTexts.length === 0) {
      const { value, done } = await heldReader.read();
      assert.equal(done, false, 'stream ended before the first text');
      if (value?.type === 'text-delta') heldTexts.push(value.delta);
    }
    await closing.close();
    for (;;) {
      const next = await heldReader.read().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) break;
      if (next.value.type === 'text-delta') heldTexts.push(next.value.delta);
    }
    assert.deepEqual(heldTexts, ['held '], 'the held stream ended when the server closed, without its gated text');
  });

  it('passes the request and its index to a step function', async (t) => {
    const seen: [number, string][] = [];
    const provider = await startProvider(t, {
      wire: 'openai-chat',
      steps: (request, index) => {
        seen.push([index, request.messages.at(-1)?.text ?? '']);
        return textStep(`reply ${index}`);
      },
    });
    const model = createOpenAI({ baseURL: provider.baseUrl, apiKey: 'test' }).chat('gpt-x');
    const first = await streamParts(model, callOptions(userPrompt('alpha')));
    const second = await streamParts(model, callOptions(userPrompt('beta')));
    assert.equal(streamedText(first), 'reply 0');
    assert.equal(streamedText(second), 'reply 1');
    assert.deepEqual(seen, [
      [0, 'alpha'],
      [1, 'beta'],
    ]);
  });

  it('streams the same content when pacing events with chunkDelayMs and delayMs', async (t) => {
    const provider = await startProvider(t, {
      wire: 'openai-responses',
      chunkDelayMs: 1,
      steps: [
        {
          parts: [{ text: 'slow ' }, { delayMs: 5 }, { text: 'and steady' }],
          chunkDelayMs: 2,
          usage: { input: 1, output: 2 },
        },
      ],
    });
    const parts = await streamParts(
      createOpenAI({ baseURL: provider.baseUrl, apiKey: 'test' }).responses('gpt-x'),
      callOptions(userPrompt('hi')),
    );
    assertNoErrorParts(parts);
    assert.equal(streamedText(parts), 'slow and steady');
    assert.equal(finishPart(parts).usage.outputTokens.total, 2);
  });

  it('repeats the last step once a step list runs out', async (t) => {
    const provider = await startProvider(t, { wire: 'openai-chat', steps: [textStep('one'), textStep('two')] });
    const model = createOpenAI({ baseURL: provider.baseUrl, apiKey: 'test' }).chat('gpt-x');
    const replies: string[] = [];
    for (const prompt of ['a', 'b', 'c'])
      replies.push(streamedText(await streamParts(model, callOptions(userPrompt(prompt)))));
    assert.deepEqual(replies, ['one', 'two', 'two']);
  });
});

// ---------------------------------------------------------------------------
// Step helpers
// ---------------------------------------------------------------------------

describe('step helpers', () => {
  const message = (role: NormalisedMessage['role'], text: string, toolResults = 0): NormalisedMessage => ({
    role,
    text,
    toolCalls: [],
    toolResults: Array.from({ length: toolResults }, (_, index) => ({ id: `id${index}`, content: 'result' })),
  });
  const requestWith = (messages: NormalisedMessage[]): RecordedRequest => ({
    wire: 'openai-chat',
    path: '/v1/chat/completions',
    headers: {},
    body: {},
    messages,
    toolNames: [],
    wantsJson: false,
  });

  it('stepByToolResults counts tool results since the last real user message', () => {
    const steps: ScriptedStep[] = [textStep('zero'), textStep('one'), textStep('two')];
    const choose = stepByToolResults(steps);
    assert.equal(choose(requestWith([message('system', 'sys'), message('user', 'go')])), steps[0]);
    assert.equal(
      choose(requestWith([message('user', 'go'), message('assistant', ''), message('tool', '', 1)])),
      steps[1],
    );
    assert.equal(
      choose(
        requestWith([
          message('user', 'go'),
          message('assistant', ''),
          message('tool', '', 1),
          message('assistant', ''),
          message('tool', '', 1),
        ]),
      ),
      steps[2],
    );
    // Clamped to the last step.
    assert.equal(choose(requestWith([message('user', 'go'), message('tool', '', 5)])), steps[2]);
    // A new user turn starts counting again; results before it do not count.
    assert.equal(
      choose(requestWith([message('user', 'go'), message('tool', '', 2), message('user', 'again')])),
      steps[0],
    );
    // An empty user message does not start a turn.
    assert.equal(choose(requestWith([message('user', 'go'), message('tool', '', 1), message('user', '')])), steps[1]);
  });

  it('stepByToolResults drives a real tool loop and answers a resent request the same way', async (t) => {
    const provider = await startProvider(t, {
      wire: 'anthropic',
      steps: stepByToolResults([
        toolStep([{ id: 'toolu_first', name: 'read_file', arguments: { path: 'a' } }]),
        textStep('all done'),
      ]),
    });
    const model = createAnthropic({ baseURL: provider.baseUrl, apiKey: 'test' })('claude-x');
    const firstTurn = await streamParts(model, callOptions(userPrompt('Read a.'), { tools }));
    const resent = await streamParts(model, callOptions(userPrompt('Read a.'), { tools }));
    assert.deepEqual(
      [firstTurn, resent].map((parts) => partsOfType(parts, 'tool-call').map((call) => call.toolCallId)),
      [['toolu_first'], ['toolu_first']],
    );

    const afterTool: LanguageModelV3Prompt = [
      ...userPrompt('Read a.'),
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'toolu_first', toolName: 'read_file', input: { path: 'a' } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'toolu_first',
            toolName: 'read_file',
            output: { type: 'text', value: 'A' },
          },
        ],
      },
    ];
    const secondTurn = await streamParts(model, callOptions(afterTool, { tools }));
    assert.equal(streamedText(secondTurn), 'all done');
    assert.equal(finishPart(secondTurn).finishReason.unified, 'stop');
  });

  it('textStep splits by words by default or into the requested number of chunks', () => {
    assert.deepEqual(textStep('one two  three'), { parts: [{ text: 'one ' }, { text: 'two  ' }, { text: 'three' }] });
    assert.deepEqual(textStep('abcdef', { chunks: 3, usage: { input: 1, output: 2 } }), {
      parts: [{ text: 'ab' }, { text: 'cd' }, { text: 'ef' }],
      usage: { input: 1, output: 2 },
    });
  });

  it('toolStep puts the optional text before the calls', () => {
    assert.deepEqual(
      toolStep(
        [
          { name: 'a', arguments: {} },
          { id: 'x', name: 'b', arguments: [1] },
        ],
        'Working.',
      ),
      {
        parts: [
          { text: 'Working.' },
          { toolCall: { name: 'a', arguments: {} } },
          { toolCall: { id: 'x', name: 'b', arguments: [1] } },
        ],
      },
    );
  });
});
