/**
 * A fetch that hands the provider's SDK whatever the connection has delivered since it last asked,
 * each run of consecutive text deltas of one output block merged into one event (why: README,
 * Design decisions).
 *
 * Contract:
 * - Nothing is held back: only events already received are merged; a lone event passes at once.
 * - The text is unchanged: merged deltas are concatenated in order into the first one's event (its
 *   other fields kept). Every other event passes unchanged and in order, as do events this module
 *   does not recognise as plain text deltas (anything with more than a `data:` line and an `event:`
 *   line, a field other than the text, a parse failure). A stream with carriage returns passes whole.
 * - Errors and cancellation pass through; only successful event streams are touched.
 *
 * The wire's raw bytes are what `-vvvvv` logs (the wire observer sits beneath this).
 */

/** The event formats whose text deltas are merged. */
export type DeltaWire = 'openai-responses' | 'openai-chat' | 'anthropic';

type Fetch = typeof globalThis.fetch;
type Json = Record<string, unknown>;

/** What makes an event a text delta: the block it belongs to and its text; undefined otherwise. */
interface DeltaFormat {
  delta(data: Json): { block: string; text: string } | undefined;
  withText(data: Json, text: string): Json;
}

const onlyKeys = (value: unknown, allowed: readonly string[]): boolean =>
  typeof value === 'object' && value !== null && Object.keys(value).every((key) => allowed.includes(key));

const formats: Record<DeltaWire, DeltaFormat> = {
  'openai-responses': {
    delta(data) {
      if (typeof data.delta !== 'string') return undefined;
      if (data.type === 'response.output_text.delta')
        return { block: `${data.type} ${data.item_id} ${data.output_index} ${data.content_index}`, text: data.delta };
      if (data.type === 'response.reasoning_summary_text.delta')
        return { block: `${data.type} ${data.item_id} ${data.output_index} ${data.summary_index}`, text: data.delta };
      return undefined;
    },
    withText: (data, text) => ({ ...data, delta: text }),
  },
  'openai-chat': {
    delta(data) {
      const choices = data.choices;
      if (!Array.isArray(choices) || choices.length !== 1) return undefined;
      const [choice] = choices as Json[];
      if (
        !choice ||
        choice.finish_reason != null ||
        choice.logprobs != null ||
        (data.usage !== undefined && data.usage !== null)
      )
        return undefined;
      const delta = choice.delta as Json | undefined;
      if (!onlyKeys(delta, ['content']) || typeof delta!.content !== 'string') return undefined;
      return { block: `${data.id} ${choice.index}`, text: delta!.content };
    },
    withText(data, text) {
      const [choice] = data.choices as Json[];
      return { ...data, choices: [{ ...choice, delta: { content: text } }] };
    },
  },
  anthropic: {
    delta(data) {
      if (data.type !== 'content_block_delta') return undefined;
      const delta = data.delta as Json | undefined;
      if (delta?.type === 'text_delta' && onlyKeys(delta, ['type', 'text']) && typeof delta.text === 'string')
        return { block: `${data.index} text`, text: delta.text };
      if (
        delta?.type === 'thinking_delta' &&
        onlyKeys(delta, ['type', 'thinking']) &&
        typeof delta.thinking === 'string'
      )
        return { block: `${data.index} thinking`, text: delta.thinking };
      return undefined;
    },
    withText(data, text) {
      const delta = data.delta as Json;
      return {
        ...data,
        delta: delta.type === 'text_delta' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text },
      };
    },
  },
};

/** Wraps a fetch so that the event streams it returns have their received text deltas merged. */
export function coalescingTextDeltas(fetch: Fetch, wire: DeltaWire): Fetch {
  const format = formats[wire];
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok || !response.body || !/^text\/event-stream\b/i.test(response.headers.get('content-type') ?? ''))
      return response;
    return new Response(coalesced(response.body, format), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

const pending = Symbol('pending');

function coalesced(body: ReadableStream<Uint8Array>, format: DeltaFormat): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  // A read started to look for more without waiting: the next pull takes it over.
  let outstanding: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  // The start of an event whose end has not arrived yet.
  let carry = '';
  let passThrough = false;
  const take = (): Promise<ReadableStreamReadResult<Uint8Array>> => {
    const read = outstanding ?? reader.read();
    outstanding = undefined;
    return read;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const first = await take();
        if (first.done) {
          const rest = carry + decoder.decode();
          carry = '';
          if (rest !== '') controller.enqueue(encoder.encode(rest));
          controller.close();
          return;
        }
        const chunks = [first.value];
        // Whatever is already queued, without waiting for anything that is not.
        for (;;) {
          const next = reader.read();
          const settled = await Promise.race([next, Promise.resolve(pending)]);
          if (settled === pending || settled.done) {
            next.catch(() => {}); // its failure, if any, is seen when the next pull awaits it
            outstanding = next;
            break;
          }
          chunks.push(settled.value);
        }
        const text = carry + decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), { stream: true });
        passThrough ||= text.includes('\r');
        const end = passThrough ? text.length : text.lastIndexOf('\n\n') + 2;
        if (end < 2 && !passThrough) {
          carry = text;
          continue;
        }
        carry = text.slice(end);
        controller.enqueue(encoder.encode(passThrough ? text.slice(0, end) : merged(text.slice(0, end), format)));
        return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/** Whole events (`text` ends with a blank line), with each run of one block's text deltas merged. */
export function merged(text: string, format: DeltaFormat | DeltaWire): string {
  const rules = typeof format === 'string' ? formats[format] : format;
  const events = text.split('\n\n');
  events.pop();
  const output: string[] = [];
  let run: { event: string; head: string; data: Json; block: string; texts: string[] } | undefined;
  const flush = (): void => {
    if (!run) return;
    output.push(
      run.texts.length === 1
        ? `${run.event}\n\n`
        : `${run.head}data: ${JSON.stringify(rules.withText(run.data, run.texts.join('')))}\n\n`,
    );
    run = undefined;
  };
  for (const event of events) {
    const delta = textDelta(event, rules);
    if (delta && run && run.block === delta.block && run.head === delta.head) {
      run.texts.push(delta.text);
      continue;
    }
    flush();
    if (delta) run = { event, head: delta.head, data: delta.data, block: delta.block, texts: [delta.text] };
    else output.push(`${event}\n\n`);
  }
  flush();
  return output.join('');
}

/** The event as a text delta: its `event:` line (if any), its data, block and text. */
function textDelta(
  event: string,
  rules: DeltaFormat,
): { head: string; data: Json; block: string; text: string } | undefined {
  const lines = event.split('\n');
  const dataLines = lines.filter((line) => line.startsWith('data:'));
  if (dataLines.length !== 1 || lines.some((line) => !line.startsWith('data:') && !line.startsWith('event:')))
    return undefined;
  let data: unknown;
  try {
    data = JSON.parse(dataLines[0]!.slice(5));
  } catch {
    return undefined;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  const delta = rules.delta(data as Json);
  if (!delta) return undefined;
  const head = lines
    .filter((line) => line.startsWith('event:'))
    .map((line) => `${line}\n`)
    .join('');
  return { head, data: data as Json, ...delta };
}
