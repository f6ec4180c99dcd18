/**
 * Text deltas already received reach the SDK merged (src/llm/delta-coalescing.ts): the text is
 * unchanged, every other event passes as it came and in order, and nothing waits for more.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coalescingTextDeltas, merged } from '../../../src/llm/delta-coalescing.ts';

const responsesDelta = (item: string, delta: string, sequence: number): string =>
  `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', item_id: item, output_index: 0, content_index: 0, delta, sequence_number: sequence })}\n\n`;
const chatDelta = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
const anthropicDelta = (index: number, delta: Record<string, unknown>): string =>
  `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index, delta })}\n\n`;

/** The data of each event, in order. */
function dataOf(text: string): Record<string, any>[] {
  return text
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) =>
      JSON.parse(
        event
          .split('\n')
          .find((line) => line.startsWith('data:'))!
          .slice(5),
      ),
    );
}

describe('merging the text deltas of received events', () => {
  it("OpenAI Responses: a run of one item's deltas becomes one event (first event's fields, text joined); other items and events pass as they came, in order", () => {
    const completed = `event: response.output_text.done\ndata: {"type":"response.output_text.done","item_id":"msg_1","text":"Hello world"}\n\n`;
    const input =
      responsesDelta('msg_1', 'Hel', 1) +
      responsesDelta('msg_1', 'lo ', 2) +
      responsesDelta('msg_1', 'world', 3) +
      responsesDelta('msg_2', 'other', 4) +
      completed;
    const output = merged(input, 'openai-responses');
    const events = dataOf(output);
    assert.deepEqual(
      events.map((event) => [event.type, event.item_id, event.delta]),
      [
        ['response.output_text.delta', 'msg_1', 'Hello world'],
        ['response.output_text.delta', 'msg_2', 'other'],
        ['response.output_text.done', 'msg_1', undefined],
      ],
    );
    assert.equal(events[0]!.sequence_number, 1);
    assert.ok(output.startsWith('event: response.output_text.delta\ndata: '), output);
    assert.ok(output.includes(responsesDelta('msg_2', 'other', 4)), 'a lone delta passes byte for byte');
    assert.ok(output.endsWith(completed));
  });

  it('OpenAI Chat: content-only deltas merge; a role, a finish reason, usage or a tool call is never merged into', () => {
    const input =
      chatDelta({ role: 'assistant', content: '' }) +
      chatDelta({ content: 'Hi' }) +
      chatDelta({ content: ' there' }) +
      chatDelta({ tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] }) +
      chatDelta({ content: '!' }) +
      `data: ${JSON.stringify({ id: 'chatcmpl-1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n` +
      chatDelta({ content: 'late' }, { usage: { prompt_tokens: 1 } }) +
      'data: [DONE]\n\n';
    const output = merged(input, 'openai-chat');
    const events = output.split('\n\n').filter((event) => event !== '');
    assert.equal(events.length, 7, output);
    assert.deepEqual(JSON.parse(events[1]!.slice(5)).choices[0].delta, { content: 'Hi there' });
    assert.ok(output.startsWith(chatDelta({ role: 'assistant', content: '' })));
    assert.ok(output.endsWith('data: [DONE]\n\n'));
  });

  it('Anthropic: text deltas and thinking deltas merge per block; signatures and tool input pass as they came', () => {
    const signature = anthropicDelta(0, { type: 'signature_delta', signature: 'sig' });
    const toolInput = anthropicDelta(2, { type: 'input_json_delta', partial_json: '{"x":' });
    const input =
      anthropicDelta(0, { type: 'thinking_delta', thinking: 'Let me ' }) +
      anthropicDelta(0, { type: 'thinking_delta', thinking: 'think.' }) +
      signature +
      anthropicDelta(1, { type: 'text_delta', text: 'The ' }) +
      anthropicDelta(1, { type: 'text_delta', text: 'answer.' }) +
      toolInput +
      anthropicDelta(2, { type: 'input_json_delta', partial_json: '1}' });
    const events = dataOf(merged(input, 'anthropic'));
    assert.deepEqual(
      events.map((event) => event.delta),
      [
        { type: 'thinking_delta', thinking: 'Let me think.' },
        { type: 'signature_delta', signature: 'sig' },
        { type: 'text_delta', text: 'The answer.' },
        { type: 'input_json_delta', partial_json: '{"x":' },
        { type: 'input_json_delta', partial_json: '1}' },
      ],
    );
  });

  it('an event with other fields (id:, retry:, two data lines) or data that does not parse is never merged', () => {
    const withId = `id: 7\n${responsesDelta('msg_1', 'b', 2)}`;
    const twoLines =
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",\ndata: "item_id":"msg_1","delta":"c"}\n\n';
    const broken = 'event: response.output_text.delta\ndata: {"type":\n\n';
    const input = responsesDelta('msg_1', 'a', 1) + withId + twoLines + broken + responsesDelta('msg_1', 'd', 3);
    assert.equal(merged(input, 'openai-responses'), input);
  });
});

/** A response whose body is `source`, served as an event stream. */
function eventStream(
  source: ReadableStream<Uint8Array>,
  contentType = 'text/event-stream; charset=utf-8',
): typeof fetch {
  return async () => new Response(source, { status: 200, headers: { 'content-type': contentType } });
}

async function readAll(response: Response): Promise<string[]> {
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) chunks.push(decoder.decode(chunk, { stream: true }));
  return chunks;
}

describe('the coalescing fetch', () => {
  it('events that arrived together, even one byte at a time, reach the SDK merged, with the same text', async () => {
    const events =
      Array.from({ length: 200 }, (_, index) => responsesDelta('msg_1', `w${index} `, index)).join('') +
      'event: response.completed\ndata: {"type":"response.completed"}\n\n';
    const bytes = new TextEncoder().encode(events);
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(Uint8Array.of(byte));
        controller.close();
      },
    });
    const response = await coalescingTextDeltas(
      eventStream(source),
      'openai-responses',
    )('http://provider.test/v1/responses');
    const received = dataOf((await readAll(response)).join(''));
    assert.deepEqual(
      received.map((event) => event.type),
      ['response.output_text.delta', 'response.completed'],
    );
    assert.equal(received[0]!.delta, Array.from({ length: 200 }, (_, index) => `w${index} `).join(''));
  });

  // The safety limit turns a coalescer that waits for more into a failure instead of a hang.
  it('nothing waits for more: an event is handed on before the next one is even sent', {
    timeout: 20_000,
  }, async () => {
    let sendNext!: () => void;
    const source = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let index = 0; index < 3; index++) {
          controller.enqueue(new TextEncoder().encode(responsesDelta('msg_1', `piece${index}`, index)));
          await new Promise<void>((resolve) => (sendNext = resolve));
        }
        controller.close();
      },
    });
    const response = await coalescingTextDeltas(
      eventStream(source),
      'openai-responses',
    )('http://provider.test/v1/responses');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    for (let index = 0; index < 3; index++) {
      const { value } = await reader.read();
      assert.equal(dataOf(decoder.decode(value))[0]!.delta, `piece${index}`);
      sendNext();
    }
    assert.equal((await reader.read()).done, true);
  });

  it('a broken connection reaches the SDK as the same error; a stream with carriage returns and a response that is not an event stream pass untouched', async () => {
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(responsesDelta('msg_1', 'partial', 1)));
        controller.error(new TypeError('terminated'));
      },
    });
    const response = await coalescingTextDeltas(
      eventStream(broken),
      'openai-responses',
    )('http://provider.test/v1/responses');
    await assert.rejects(readAll(response), /terminated/);

    const crlf =
      'event: response.output_text.delta\r\ndata: {"type":"response.output_text.delta","item_id":"m","delta":"a"}\r\n\r\n'.repeat(
        3,
      );
    const crlfSource = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(crlf));
        controller.close();
      },
    });
    const passed = await coalescingTextDeltas(
      eventStream(crlfSource),
      'openai-responses',
    )('http://provider.test/v1/responses');
    assert.equal((await readAll(passed)).join(''), crlf);

    const json = new Response('{"error":{"message":"bad"}}', {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
    const plain = await coalescingTextDeltas(async () => json, 'openai-responses')('http://provider.test/v1/responses');
    assert.equal(plain, json);
  });
});
