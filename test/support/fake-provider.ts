/**
 * A fake LLM provider for integration tests and benchmarks.
 *
 * `startFakeProvider` starts a real HTTP server on 127.0.0.1 (random port) that answers
 * with scripted responses in the genuine streaming wire format of one of three APIs:
 *
 * - `openai-chat`      POST /v1/chat/completions  (OpenAI Chat Completions, also what
 *                      OpenAI-compatible servers speak)
 * - `openai-responses` POST /v1/responses         (OpenAI Responses API)
 * - `anthropic`        POST /v1/messages          (Anthropic Messages API)
 *
 * The events carry every field the AI SDK provider packages validate, so the real
 * `@ai-sdk/openai`, `@ai-sdk/openai-compatible` and `@ai-sdk/anthropic` models (and
 * therefore the `jp` binary) can be pointed at `baseUrl` and parse the replies without
 * errors. Each request is recorded verbatim plus a wire-independent normalised view of
 * its conversation, so tests can assert on what the client sent.
 *
 * The module depends on node:http only.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

export type WireFormat = 'openai-chat' | 'openai-responses' | 'anthropic';

/** One scripted model response, or an HTTP failure. */
export type ScriptedPart =
  /** Streamed as one text delta. */
  | { text: string }
  /** Streamed as one reasoning delta: an Anthropic `thinking_delta`, an OpenAI chat
   *  `reasoning_content` delta, or a Responses API reasoning summary delta. */
  | { reasoning: string }
  /** A tool call. `arguments` is JSON-serialised and streamed in two or more pieces; a
   *  string is sent verbatim instead, so tests can script malformed arguments. */
  | { toolCall: { id?: string; name: string; arguments: unknown } }
  /** Pause before the next part (for slow-streaming tests). */
  | { delayMs: number }
  /** Hold the stream here until the gate is opened (see `gate()`) or the server closes. */
  | { gate: Gate };

/** A point a stream waits at until the test has seen what it waits for: `gate.open()`. */
export interface Gate {
  readonly opened: Promise<void>;
  open(): void;
  /** Resolves once a stream has sent every part before the gate and waits at it. */
  readonly reached: Promise<void>;
  /** Called by the stream as it arrives at the gate. */
  arrive(): void;
}

/** A closed gate; a scripted `{ gate }` part holds its stream until `open()` is called. */
export function gate(): Gate {
  let open!: () => void;
  let arrive!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  return { opened, open, reached, arrive };
}

export type ScriptedStep =
  | { parts: ScriptedPart[]; usage?: { input: number; output: number }; chunkDelayMs?: number }
  /** A plain HTTP error reply (e.g. 429, 500). Without `body`, a JSON error body in the
   *  wire format's own error shape is sent. `headers` are added to the reply. With `gate`, the
   *  reply waits until the gate opens (a request in flight the test watches). */
  | { status: number; body?: string; headers?: Record<string, string>; gate?: Gate }
  /** Stream these parts, then destroy the socket mid-stream (a network error). */
  | { hangUpAfterParts: ScriptedPart[] };

/** A request as the server received it, normalised across wire formats. */
export interface RecordedRequest {
  wire: WireFormat;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, verbatim. */
  body: any;
  /** Normalised conversation, see `NormalisedMessage`. */
  messages: NormalisedMessage[];
  /** Names of the tools offered in the request (without the Anthropic JSON-response tool). */
  toolNames: string[];
  /** True when the request asks for structured JSON output (`response_format`,
   *  `text.format`, Anthropic `output_config.format` or the forced `json` tool). */
  wantsJson: boolean;
}

/**
 * One message of a request's conversation, in the same shape for every wire format.
 * The shape mirrors the AI SDK prompt:
 * - system / developer messages (and the Responses API `instructions`, and each
 *   Anthropic `system` block) become `system` messages;
 * - an assistant turn is one `assistant` message holding its text and tool calls, even
 *   where the wire splits it into several items (Responses API);
 * - tool results sent back become one `tool` message per run of consecutive results
 *   (OpenAI role=tool messages, `function_call_output` items, and Anthropic `tool_result`
 *   blocks, which are split out of the user message that carries them);
 * - text of several content parts is concatenated without a separator.
 */
export interface NormalisedMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** Concatenated text content ('' if none). */
  text: string;
  /** Assistant tool calls; `arguments` is the JSON text as sent. */
  toolCalls: { id: string; name: string; arguments: string }[];
  /** Tool results sent back; `isError` is present (true) only when the wire marks it. */
  toolResults: { id: string; content: string; isError?: boolean }[];
}

export interface FakeProviderOptions {
  wire: WireFormat;
  /** Either a list consumed in order (request i gets steps[i]; past the end → the last
   *  step again), or a function of the request and its 0-based index. */
  steps: ScriptedStep[] | ((request: RecordedRequest, index: number) => ScriptedStep);
  /** Delay between consecutive SSE events, default 0. A step's `chunkDelayMs` overrides it. */
  chunkDelayMs?: number;
}

export interface FakeProvider {
  /** e.g. http://127.0.0.1:PORT/v1 — what a client passes as base URL (the SDKs append
   *  /chat/completions, /responses, /messages). */
  baseUrl: string;
  port: number;
  /** Every well-formed request received so far, in arrival order. */
  requests: RecordedRequest[];
  /** Closes the server and destroys open sockets. Safe to call more than once. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

const ROUTES: Record<WireFormat, string> = {
  'openai-chat': '/v1/chat/completions',
  'openai-responses': '/v1/responses',
  anthropic: '/v1/messages',
};

const DEFAULT_INPUT_TOKENS = 10;

type ContentPart = Exclude<ScriptedPart, { delayMs: number } | { gate: Gate }>;
type ToolCallPart = Extract<ScriptedPart, { toolCall: unknown }>;
type PartsStep = Extract<ScriptedStep, { parts: ScriptedPart[] }>;
type ErrorStep = Extract<ScriptedStep, { status: number }>;
type HangUpStep = Extract<ScriptedStep, { hangUpAfterParts: ScriptedPart[] }>;

interface TokenUsage {
  input: number;
  output: number;
}

/** What a Responses API output item the server emitted looked like, so later
 *  `item_reference` inputs that point at it can be normalised. */
type EmittedItem =
  | { kind: 'message'; text: string }
  | { kind: 'function_call'; callId: string; name: string; arguments: string }
  | { kind: 'reasoning' };

/** State shared by all requests of one server. */
interface ServerState {
  options: FakeProviderOptions;
  requests: RecordedRequest[];
  /** Aborted by close(); pending pauses end early and streams stop writing. */
  shutdown: AbortController;
  idCounters: Map<string, number>;
  emittedItems: Map<string, EmittedItem>;
}

export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  const state: ServerState = {
    options,
    requests: [],
    shutdown: new AbortController(),
    idCounters: new Map(),
    emittedItems: new Map(),
  };
  const sockets = new Set<Socket>();

  const server = createServer((request, response) => {
    handleRequest(state, request, response).catch((error: unknown) => {
      if (!response.headersSent) {
        sendJson(response, 500, errorBody(options.wire, 500, `fake provider failed: ${describeError(error)}`));
      } else {
        response.destroy();
      }
    });
  });
  server.on('connection', (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  let closing: Promise<void> | undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests: state.requests,
    close() {
      closing ??= new Promise<void>((resolve) => {
        state.shutdown.abort();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

async function handleRequest(state: ServerState, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { wire } = state.options;
  // A client that disconnects must never crash the server.
  request.on('error', () => {});
  response.on('error', () => {});

  const path = (request.url ?? '/').split('?')[0] ?? '/';
  if (request.method !== 'POST' || path !== ROUTES[wire]) {
    request.resume();
    sendJson(response, 404, errorBody(wire, 404, `No route for ${request.method} ${path} (this fake speaks ${wire})`));
    return;
  }

  const rawBody = await readBody(request);
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch (error) {
    sendJson(response, 400, errorBody(wire, 400, `Request body is not valid JSON: ${describeError(error)}`));
    return;
  }
  if (!isRecord(body)) {
    sendJson(response, 400, errorBody(wire, 400, 'Request body must be a JSON object'));
    return;
  }

  const recorded = recordRequest(state, path, request, body);
  const index = state.requests.length;
  state.requests.push(recorded);

  let step: ScriptedStep | undefined;
  try {
    step = chooseStep(state.options.steps, recorded, index);
  } catch (error) {
    sendJson(response, 500, errorBody(wire, 500, `fake provider step chooser failed: ${describeError(error)}`));
    return;
  }
  if (step === undefined || step === null) {
    sendJson(response, 500, errorBody(wire, 500, `fake provider has no step for request ${index}`));
    return;
  }
  await playStep(state, step, body, response);
}

function chooseStep(
  steps: FakeProviderOptions['steps'],
  request: RecordedRequest,
  index: number,
): ScriptedStep | undefined {
  if (typeof steps === 'function') return steps(request, index);
  return steps[Math.min(index, steps.length - 1)];
}

async function playStep(
  state: ServerState,
  step: ScriptedStep,
  body: Record<string, unknown>,
  response: ServerResponse,
): Promise<void> {
  const { wire } = state.options;
  if (isErrorStep(step)) {
    if (step.gate) await waitAt({ gate: step.gate }, state.shutdown.signal);
    const payload = step.body ?? JSON.stringify(errorBody(wire, step.status, defaultErrorMessage(step.status)));
    response.writeHead(step.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      ...step.headers,
    });
    response.end(payload);
    return;
  }

  const streaming = body.stream === true;
  const model = typeof body.model === 'string' ? body.model : 'fake-model';

  if (isHangUpStep(step)) {
    const encoder = createEncoder(state, body, model, usageFor(step.hangUpAfterParts, undefined));
    if (streaming) {
      const writer = startEventStream(state, response, state.options.chunkDelayMs ?? 0);
      await writer.send(encoder.start());
      await writeParts(state, writer, encoder, step.hangUpAfterParts);
    } else {
      await pauseForDelays(state, step.hangUpAfterParts);
    }
    response.destroy();
    return;
  }

  const encoder = createEncoder(state, body, model, usageFor(step.parts, step.usage));
  if (!streaming) {
    await pauseForDelays(state, step.parts);
    encoder.start();
    for (const part of step.parts) if (!isDelayPart(part)) encoder.content(part);
    if (!response.destroyed) sendJson(response, 200, encoder.finish().body);
    return;
  }

  const writer = startEventStream(state, response, step.chunkDelayMs ?? state.options.chunkDelayMs ?? 0);
  await writer.send(encoder.start());
  await writeParts(state, writer, encoder, step.parts);
  await writer.send(encoder.finish().events);
  if (writer.isOpen) response.end();
}

/** Streams each content part's events, honouring `delayMs` and `gate` parts, until the client goes away. */
async function writeParts(
  state: ServerState,
  writer: EventStreamWriter,
  encoder: WireEncoder,
  parts: ScriptedPart[],
): Promise<void> {
  for (const part of parts) {
    if (!writer.isOpen) return;
    if (isDelayPart(part)) {
      await waitAt(part, state.shutdown.signal);
    } else {
      await writer.send(encoder.content(part));
    }
  }
}

async function pauseForDelays(state: ServerState, parts: ScriptedPart[]): Promise<void> {
  for (const part of parts) {
    if (isDelayPart(part)) await waitAt(part, state.shutdown.signal);
  }
}

/** Default usage: 10 input tokens, one output token per text part and tool call. */
function usageFor(parts: ScriptedPart[], scripted: TokenUsage | undefined): TokenUsage {
  if (scripted) return scripted;
  const output = parts.filter((part) => 'text' in part || 'toolCall' in part).length;
  return { input: DEFAULT_INPUT_TOKENS, output };
}

// ---------------------------------------------------------------------------
// Server-sent events
// ---------------------------------------------------------------------------

/** One SSE event: an optional `event:` name and the `data:` payload (already serialised). */
interface ServerSentEvent {
  name?: string;
  data: string;
}

interface EventStreamWriter {
  /** False once the client disconnected or the server is shutting down. */
  readonly isOpen: boolean;
  /** Writes the events one by one, each flushed before the next, pausing between them. */
  send(events: ServerSentEvent[]): Promise<void>;
}

function startEventStream(state: ServerState, response: ServerResponse, eventDelayMs: number): EventStreamWriter {
  let clientGone = false;
  let eventsWritten = 0;
  response.on('close', () => {
    clientGone = true;
  });
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  response.flushHeaders();

  const writer: EventStreamWriter = {
    get isOpen() {
      return !clientGone && !response.destroyed && !state.shutdown.signal.aborted;
    },
    async send(events) {
      for (const event of events) {
        if (eventsWritten > 0 && eventDelayMs > 0) await pause(eventDelayMs, state.shutdown.signal);
        if (!writer.isOpen) return;
        const lines =
          event.name === undefined ? `data: ${event.data}\n\n` : `event: ${event.name}\ndata: ${event.data}\n\n`;
        await new Promise<void>((resolve) => response.write(lines, () => resolve()));
        eventsWritten += 1;
      }
    },
  };
  return writer;
}

// ---------------------------------------------------------------------------
// Wire encoders: scripted parts → wire events and non-streaming bodies
// ---------------------------------------------------------------------------

/**
 * Turns the content parts of one step into the events of one wire format. Encoders are
 * stateful: `content` opens and closes blocks/items as the kind of content changes.
 */
interface WireEncoder {
  /** Events that open the response, before any content. */
  start(): ServerSentEvent[];
  /** Events that carry one content part. */
  content(part: ContentPart): ServerSentEvent[];
  /** The events that close the stream (open blocks, finish reason, usage), and the body a
   *  non-streaming request receives for the same content. */
  finish(): { events: ServerSentEvent[]; body: unknown };
}

interface EncoderContext {
  model: string;
  usage: TokenUsage;
  createdAt: number;
  nextId(prefix: string, separator?: string): string;
}

function createEncoder(
  state: ServerState,
  body: Record<string, unknown>,
  model: string,
  usage: TokenUsage,
): WireEncoder {
  const context: EncoderContext = {
    model,
    usage,
    createdAt: Math.floor(Date.now() / 1000),
    nextId(prefix, separator = '_') {
      const next = (state.idCounters.get(prefix) ?? 0) + 1;
      state.idCounters.set(prefix, next);
      return `${prefix}${separator}${next}`;
    },
  };
  switch (state.options.wire) {
    case 'openai-chat':
      return new ChatCompletionsEncoder(
        context,
        isRecord(body.stream_options) && body.stream_options.include_usage === true,
      );
    case 'openai-responses':
      return new ResponsesEncoder(context, state.emittedItems);
    case 'anthropic':
      return new AnthropicEncoder(context, usesAnthropicJsonTool(body));
  }
}

/**
 * OpenAI Chat Completions stream:
 *   data: chunk {delta: {role: "assistant"}}
 *   data: chunk {delta: {content}} | {delta: {reasoning_content}}
 *         | {delta: {tool_calls: [{index, id, type, function: {name, arguments: ""}}]}}
 *           followed by {delta: {tool_calls: [{index, function: {arguments: piece}}]}} …
 *   data: chunk {delta: {}, finish_reason: "stop" | "tool_calls"}
 *   data: chunk {choices: [], usage}        (only when stream_options.include_usage)
 *   data: [DONE]
 */
class ChatCompletionsEncoder implements WireEncoder {
  private readonly completionId: string;
  private text = '';
  private reasoning = '';
  private readonly toolCalls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];

  constructor(
    private readonly context: EncoderContext,
    private readonly includeUsage: boolean,
  ) {
    this.completionId = context.nextId('chatcmpl', '-');
  }

  start(): ServerSentEvent[] {
    return [this.chunk({ role: 'assistant' })];
  }

  content(part: ContentPart): ServerSentEvent[] {
    if ('text' in part) {
      this.text += part.text;
      return [this.chunk({ content: part.text })];
    }
    if ('reasoning' in part) {
      this.reasoning += part.reasoning;
      return [this.chunk({ reasoning_content: part.reasoning })];
    }
    const index = this.toolCalls.length;
    const id = part.toolCall.id ?? this.context.nextId('call');
    const argumentsText = serialiseArguments(part.toolCall.arguments);
    this.toolCalls.push({ id, type: 'function', function: { name: part.toolCall.name, arguments: argumentsText } });
    return [
      this.chunk({
        tool_calls: [{ index, id, type: 'function', function: { name: part.toolCall.name, arguments: '' } }],
      }),
      ...splitIntoPieces(argumentsText, 3).map((piece) =>
        this.chunk({ tool_calls: [{ index, function: { arguments: piece } }] }),
      ),
    ];
  }

  finish(): { events: ServerSentEvent[]; body: unknown } {
    const finishReason = this.toolCalls.length > 0 ? 'tool_calls' : 'stop';
    const events = [this.chunk({}, finishReason)];
    if (this.includeUsage) {
      events.push(json({ ...this.envelope('chat.completion.chunk'), choices: [], usage: this.usage() }));
    }
    events.push({ data: '[DONE]' });

    const message: Record<string, unknown> = {
      role: 'assistant',
      content: this.text === '' && this.toolCalls.length > 0 ? null : this.text,
      refusal: null,
    };
    if (this.reasoning !== '') message.reasoning_content = this.reasoning;
    if (this.toolCalls.length > 0) message.tool_calls = this.toolCalls;
    const body = {
      ...this.envelope('chat.completion'),
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      usage: this.usage(),
    };
    return { events, body };
  }

  private envelope(object: string) {
    return { id: this.completionId, object, created: this.context.createdAt, model: this.context.model };
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): ServerSentEvent {
    return json({
      ...this.envelope('chat.completion.chunk'),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
  }

  private usage() {
    const { input, output } = this.context.usage;
    return {
      prompt_tokens: input,
      completion_tokens: output,
      total_tokens: input + output,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    };
  }
}

/**
 * OpenAI Responses API stream (each event as `event: <type>` + `data: {type, sequence_number, …}`):
 *   response.created, response.in_progress
 *   text:      response.output_item.added (message), response.content_part.added,
 *              response.output_text.delta …, response.output_text.done,
 *              response.content_part.done, response.output_item.done
 *   reasoning: response.output_item.added (reasoning), response.reasoning_summary_part.added,
 *              response.reasoning_summary_text.delta …, response.reasoning_summary_text.done,
 *              response.reasoning_summary_part.done, response.output_item.done
 *   tool call: response.output_item.added (function_call), response.function_call_arguments.delta …,
 *              response.function_call_arguments.done, response.output_item.done
 *   response.completed (full response with output items and usage)
 * Consecutive text parts share one message item; consecutive reasoning parts one summary.
 */
class ResponsesEncoder implements WireEncoder {
  private readonly responseId: string;
  private sequenceNumber = 0;
  private readonly completedItems: Record<string, unknown>[] = [];
  private openItem: { kind: 'message' | 'reasoning'; id: string; outputIndex: number; text: string } | undefined;

  constructor(
    private readonly context: EncoderContext,
    private readonly emittedItems: Map<string, EmittedItem>,
  ) {
    this.responseId = context.nextId('resp');
  }

  start(): ServerSentEvent[] {
    return [
      this.event('response.created', { response: this.snapshot('in_progress') }),
      this.event('response.in_progress', { response: this.snapshot('in_progress') }),
    ];
  }

  content(part: ContentPart): ServerSentEvent[] {
    if ('toolCall' in part) return [...this.closeOpenItem(), ...this.functionCall(part)];
    const kind = 'text' in part ? 'message' : 'reasoning';
    const delta = 'text' in part ? part.text : part.reasoning;
    const events = this.openItem?.kind === kind ? [] : [...this.closeOpenItem(), ...this.openNewItem(kind)];
    const item = this.openItem!;
    item.text += delta;
    if (kind === 'message') {
      events.push(
        this.event('response.output_text.delta', {
          item_id: item.id,
          output_index: item.outputIndex,
          content_index: 0,
          delta,
          logprobs: [],
        }),
      );
    } else {
      events.push(
        this.event('response.reasoning_summary_text.delta', {
          item_id: item.id,
          output_index: item.outputIndex,
          summary_index: 0,
          delta,
        }),
      );
    }
    return events;
  }

  finish(): { events: ServerSentEvent[]; body: unknown } {
    const events = this.closeOpenItem();
    const response = this.snapshot('completed', this.usage());
    events.push(this.event('response.completed', { response }));
    return { events, body: response };
  }

  private openNewItem(kind: 'message' | 'reasoning'): ServerSentEvent[] {
    const outputIndex = this.completedItems.length;
    if (kind === 'message') {
      const id = this.context.nextId('msg');
      this.openItem = { kind, id, outputIndex, text: '' };
      return [
        this.event('response.output_item.added', {
          output_index: outputIndex,
          item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] },
        }),
        this.event('response.content_part.added', {
          item_id: id,
          output_index: outputIndex,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
        }),
      ];
    }
    const id = this.context.nextId('rs');
    this.openItem = { kind, id, outputIndex, text: '' };
    return [
      this.event('response.output_item.added', {
        output_index: outputIndex,
        item: { type: 'reasoning', id, summary: [] },
      }),
      this.event('response.reasoning_summary_part.added', {
        item_id: id,
        output_index: outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      }),
    ];
  }

  private closeOpenItem(): ServerSentEvent[] {
    const item = this.openItem;
    if (!item) return [];
    this.openItem = undefined;
    const { id, outputIndex, text } = item;
    if (item.kind === 'message') {
      const outputText = { type: 'output_text', text, annotations: [], logprobs: [] };
      const done = { type: 'message', id, status: 'completed', role: 'assistant', content: [outputText] };
      this.completedItems.push(done);
      this.emittedItems.set(id, { kind: 'message', text });
      return [
        this.event('response.output_text.done', {
          item_id: id,
          output_index: outputIndex,
          content_index: 0,
          text,
          logprobs: [],
        }),
        this.event('response.content_part.done', {
          item_id: id,
          output_index: outputIndex,
          content_index: 0,
          part: outputText,
        }),
        this.event('response.output_item.done', { output_index: outputIndex, item: done }),
      ];
    }
    const summaryText = { type: 'summary_text', text };
    const done = { type: 'reasoning', id, summary: [summaryText] };
    this.completedItems.push(done);
    this.emittedItems.set(id, { kind: 'reasoning' });
    return [
      this.event('response.reasoning_summary_text.done', {
        item_id: id,
        output_index: outputIndex,
        summary_index: 0,
        text,
      }),
      this.event('response.reasoning_summary_part.done', {
        item_id: id,
        output_index: outputIndex,
        summary_index: 0,
        part: summaryText,
      }),
      this.event('response.output_item.done', { output_index: outputIndex, item: done }),
    ];
  }

  private functionCall(part: ToolCallPart): ServerSentEvent[] {
    const outputIndex = this.completedItems.length;
    const id = this.context.nextId('fc');
    const callId = part.toolCall.id ?? this.context.nextId('call');
    const { name } = part.toolCall;
    const argumentsText = serialiseArguments(part.toolCall.arguments);
    const done = { type: 'function_call', id, call_id: callId, name, arguments: argumentsText, status: 'completed' };
    this.completedItems.push(done);
    this.emittedItems.set(id, { kind: 'function_call', callId, name, arguments: argumentsText });
    return [
      this.event('response.output_item.added', {
        output_index: outputIndex,
        item: { ...done, arguments: '', status: 'in_progress' },
      }),
      ...splitIntoPieces(argumentsText, 3).map((delta) =>
        this.event('response.function_call_arguments.delta', { item_id: id, output_index: outputIndex, delta }),
      ),
      this.event('response.function_call_arguments.done', {
        item_id: id,
        output_index: outputIndex,
        arguments: argumentsText,
      }),
      this.event('response.output_item.done', { output_index: outputIndex, item: done }),
    ];
  }

  private snapshot(status: 'in_progress' | 'completed', usage: unknown = null) {
    return {
      id: this.responseId,
      object: 'response',
      created_at: this.context.createdAt,
      status,
      error: null,
      incomplete_details: null,
      model: this.context.model,
      output: status === 'completed' ? this.completedItems : [],
      usage,
    };
  }

  private usage() {
    const { input, output } = this.context.usage;
    return {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + output,
    };
  }

  private event(type: string, fields: Record<string, unknown>): ServerSentEvent {
    const event = json({ type, sequence_number: this.sequenceNumber, ...fields }, type);
    this.sequenceNumber += 1;
    return event;
  }
}

/**
 * Anthropic Messages stream (each event as `event: <type>` + `data: {type, …}`):
 *   message_start (usage.input_tokens), ping
 *   text:      content_block_start {text}, content_block_delta text_delta …, content_block_stop
 *   reasoning: content_block_start {thinking}, content_block_delta thinking_delta …,
 *              content_block_delta signature_delta, content_block_stop
 *   tool call: content_block_start {tool_use, input: {}}, content_block_delta input_json_delta …,
 *              content_block_stop
 *   message_delta {stop_reason: "end_turn" | "tool_use", usage.output_tokens}, message_stop
 * Consecutive text (or reasoning) parts share one block. When the request asks for JSON
 * through the forced `json` tool, text parts become the input of a `json` tool_use block,
 * as a real model answers such a request.
 */
class AnthropicEncoder implements WireEncoder {
  private readonly messageId: string;
  private readonly completedBlocks: Record<string, unknown>[] = [];
  private openBlock:
    | { kind: 'text' | 'thinking' | 'json'; index: number; text: string; toolUseId?: string }
    | undefined;

  constructor(
    private readonly context: EncoderContext,
    private readonly answersWithJsonTool: boolean,
  ) {
    this.messageId = context.nextId('msg');
  }

  start(): ServerSentEvent[] {
    const message = {
      id: this.messageId,
      type: 'message',
      role: 'assistant',
      model: this.context.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: this.context.usage.input,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
    return [this.event('message_start', { message }), this.event('ping', {})];
  }

  content(part: ContentPart): ServerSentEvent[] {
    if ('toolCall' in part) {
      const events = this.closeOpenBlock();
      const index = this.completedBlocks.length;
      const id = part.toolCall.id ?? this.context.nextId('toolu');
      const { name } = part.toolCall;
      const argumentsText = serialiseArguments(part.toolCall.arguments);
      this.completedBlocks.push({ type: 'tool_use', id, name, input: parseOrKeep(argumentsText) });
      events.push(
        this.event('content_block_start', { index, content_block: { type: 'tool_use', id, name, input: {} } }),
        ...splitIntoPieces(argumentsText, 3).map((piece) =>
          this.event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }),
        ),
        this.event('content_block_stop', { index }),
      );
      return events;
    }

    const kind = 'reasoning' in part ? 'thinking' : this.answersWithJsonTool ? 'json' : 'text';
    const piece = 'reasoning' in part ? part.reasoning : part.text;
    const events = this.openBlock?.kind === kind ? [] : [...this.closeOpenBlock(), this.openNewBlock(kind)];
    const block = this.openBlock!;
    block.text += piece;
    const delta =
      kind === 'thinking'
        ? { type: 'thinking_delta', thinking: piece }
        : kind === 'json'
          ? { type: 'input_json_delta', partial_json: piece }
          : { type: 'text_delta', text: piece };
    events.push(this.event('content_block_delta', { index: block.index, delta }));
    return events;
  }

  finish(): { events: ServerSentEvent[]; body: unknown } {
    const events = this.closeOpenBlock();
    const stopReason = this.completedBlocks.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn';
    const { input, output } = this.context.usage;
    events.push(
      this.event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: output },
      }),
      this.event('message_stop', {}),
    );
    const body = {
      id: this.messageId,
      type: 'message',
      role: 'assistant',
      model: this.context.model,
      content: this.completedBlocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    return { events, body };
  }

  private openNewBlock(kind: 'text' | 'thinking' | 'json'): ServerSentEvent {
    const index = this.completedBlocks.length;
    if (kind === 'json') {
      const toolUseId = this.context.nextId('toolu');
      this.openBlock = { kind, index, text: '', toolUseId };
      return this.event('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: toolUseId, name: 'json', input: {} },
      });
    }
    this.openBlock = { kind, index, text: '' };
    const contentBlock =
      kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
    return this.event('content_block_start', { index, content_block: contentBlock });
  }

  private closeOpenBlock(): ServerSentEvent[] {
    const block = this.openBlock;
    if (!block) return [];
    this.openBlock = undefined;
    const events: ServerSentEvent[] = [];
    if (block.kind === 'text') {
      this.completedBlocks.push({ type: 'text', text: block.text });
    } else if (block.kind === 'json') {
      this.completedBlocks.push({
        type: 'tool_use',
        id: block.toolUseId,
        name: 'json',
        input: parseOrKeep(block.text),
      });
    } else {
      const signature = Buffer.from(`fake-signature:${block.text.length}`).toString('base64');
      this.completedBlocks.push({ type: 'thinking', thinking: block.text, signature });
      events.push(
        this.event('content_block_delta', { index: block.index, delta: { type: 'signature_delta', signature } }),
      );
    }
    events.push(this.event('content_block_stop', { index: block.index }));
    return events;
  }

  private event(type: string, fields: Record<string, unknown>): ServerSentEvent {
    return json({ type, ...fields }, type);
  }
}

function json(data: unknown, name?: string): ServerSentEvent {
  return name === undefined ? { data: JSON.stringify(data) } : { name, data: JSON.stringify(data) };
}

// ---------------------------------------------------------------------------
// Request normalisation
// ---------------------------------------------------------------------------

function recordRequest(
  state: ServerState,
  path: string,
  request: IncomingMessage,
  body: Record<string, unknown>,
): RecordedRequest {
  const { wire } = state.options;
  const base = { wire, path, headers: { ...request.headers }, body };
  switch (wire) {
    case 'openai-chat':
      return {
        ...base,
        messages: normaliseChatMessages(body),
        toolNames: toolNamesOf(body, (tool) => (isRecord(tool.function) ? tool.function.name : undefined)),
        wantsJson: isJsonFormat(body.response_format),
      };
    case 'openai-responses':
      return {
        ...base,
        messages: normaliseResponsesInput(body, state.emittedItems),
        toolNames: toolNamesOf(body, (tool) => tool.name ?? tool.type),
        wantsJson: isRecord(body.text) && isJsonFormat(body.text.format),
      };
    case 'anthropic': {
      const jsonTool = usesAnthropicJsonTool(body);
      const outputFormat = isRecord(body.output_config) ? body.output_config.format : undefined;
      return {
        ...base,
        messages: normaliseAnthropicMessages(body),
        toolNames: toolNamesOf(body, (tool) => tool.name).filter((name) => !(jsonTool && name === 'json')),
        wantsJson: jsonTool || isJsonFormat(outputFormat),
      };
    }
  }
}

/** Builds a normalised conversation, merging consecutive assistant (or tool) entries into one message. */
class ConversationBuilder {
  readonly messages: NormalisedMessage[] = [];

  /** Adds content as a new message, or to the last one when both are assistant (or tool)
   *  messages. Returns the message written to. */
  add(role: NormalisedMessage['role'], addition: Partial<Omit<NormalisedMessage, 'role'>>): NormalisedMessage {
    const last = this.messages.at(-1);
    const mergesIntoLast = last !== undefined && last.role === role && (role === 'assistant' || role === 'tool');
    const target: NormalisedMessage = mergesIntoLast ? last : { role, text: '', toolCalls: [], toolResults: [] };
    if (!mergesIntoLast) this.messages.push(target);
    target.text += addition.text ?? '';
    target.toolCalls.push(...(addition.toolCalls ?? []));
    target.toolResults.push(...(addition.toolResults ?? []));
    return target;
  }
}

function normaliseChatMessages(body: Record<string, unknown>): NormalisedMessage[] {
  const conversation = new ConversationBuilder();
  for (const message of asArray(body.messages)) {
    if (!isRecord(message)) continue;
    switch (message.role) {
      case 'system':
      case 'developer':
        conversation.add('system', { text: textOf(message.content) });
        break;
      case 'user':
        conversation.add('user', { text: textOf(message.content) });
        break;
      case 'assistant':
        conversation.add('assistant', {
          text: textOf(message.content),
          toolCalls: asArray(message.tool_calls)
            .filter(isRecord)
            .map((call) => {
              const fn = isRecord(call.function) ? call.function : {};
              return { id: String(call.id ?? ''), name: String(fn.name ?? ''), arguments: String(fn.arguments ?? '') };
            }),
        });
        break;
      case 'tool':
        conversation.add('tool', {
          toolResults: [{ id: String(message.tool_call_id ?? ''), content: textOf(message.content) }],
        });
        break;
    }
  }
  return conversation.messages;
}

function normaliseResponsesInput(
  body: Record<string, unknown>,
  emittedItems: Map<string, EmittedItem>,
): NormalisedMessage[] {
  const conversation = new ConversationBuilder();
  if (typeof body.instructions === 'string' && body.instructions !== '') {
    conversation.add('system', { text: body.instructions });
  }
  if (typeof body.input === 'string') {
    conversation.add('user', { text: body.input });
    return conversation.messages;
  }
  for (const item of asArray(body.input)) {
    if (!isRecord(item)) continue;
    if (item.type === undefined || item.type === 'message') {
      if (item.role === 'system' || item.role === 'developer')
        conversation.add('system', { text: textOf(item.content) });
      else if (item.role === 'user') conversation.add('user', { text: textOf(item.content) });
      else if (item.role === 'assistant') conversation.add('assistant', { text: textOf(item.content) });
    } else if (item.type === 'function_call') {
      conversation.add('assistant', {
        toolCalls: [
          { id: String(item.call_id ?? ''), name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
        ],
      });
    } else if (item.type === 'function_call_output') {
      conversation.add('tool', { toolResults: [{ id: String(item.call_id ?? ''), content: textOf(item.output) }] });
    } else if (item.type === 'item_reference' && typeof item.id === 'string') {
      // With `store` on, the SDK refers back to earlier output items by id instead of
      // resending them; resolve the ones this server emitted.
      const emitted = emittedItems.get(item.id);
      if (emitted?.kind === 'message') conversation.add('assistant', { text: emitted.text });
      if (emitted?.kind === 'function_call') {
        conversation.add('assistant', {
          toolCalls: [{ id: emitted.callId, name: emitted.name, arguments: emitted.arguments }],
        });
      }
    }
    // Reasoning items and provider tool items carry no normalised content.
  }
  return conversation.messages;
}

function normaliseAnthropicMessages(body: Record<string, unknown>): NormalisedMessage[] {
  const conversation = new ConversationBuilder();
  if (typeof body.system === 'string') {
    conversation.add('system', { text: body.system });
  } else {
    for (const block of asArray(body.system)) {
      if (isRecord(block) && typeof block.text === 'string') conversation.add('system', { text: block.text });
    }
  }
  for (const message of asArray(body.messages)) {
    if (!isRecord(message)) continue;
    if (message.role === 'system') {
      conversation.add('system', { text: textOf(message.content) });
      continue;
    }
    if (typeof message.content === 'string') {
      conversation.add(message.role === 'assistant' ? 'assistant' : 'user', { text: message.content });
      continue;
    }
    // The user message of this Anthropic message that its text blocks are appended to.
    let userMessage: NormalisedMessage | undefined;
    for (const block of asArray(message.content)) {
      if (!isRecord(block)) continue;
      if (message.role === 'assistant') {
        if (block.type === 'text') conversation.add('assistant', { text: String(block.text ?? '') });
        if (block.type === 'tool_use') {
          conversation.add('assistant', {
            toolCalls: [
              {
                id: String(block.id ?? ''),
                name: String(block.name ?? ''),
                arguments: JSON.stringify(block.input ?? {}),
              },
            ],
          });
        }
      } else if (block.type === 'tool_result') {
        const result: NormalisedMessage['toolResults'][number] = {
          id: String(block.tool_use_id ?? ''),
          content: textOf(block.content),
        };
        if (block.is_error === true) result.isError = true;
        conversation.add('tool', { toolResults: [result] });
      } else if (block.type === 'text') {
        // Consecutive text blocks of one Anthropic user message form one user message.
        const text = String(block.text ?? '');
        if (userMessage !== undefined && conversation.messages.at(-1) === userMessage) userMessage.text += text;
        else userMessage = conversation.add('user', { text });
      }
    }
  }
  return conversation.messages;
}

/** True when an Anthropic request asks for JSON through the SDK's forced `json` tool. */
function usesAnthropicJsonTool(body: Record<string, unknown>): boolean {
  const jsonTool = asArray(body.tools).find((tool) => isRecord(tool) && tool.name === 'json');
  if (!isRecord(jsonTool)) return false;
  const choice = isRecord(body.tool_choice) ? body.tool_choice : {};
  return (
    choice.type === 'any' ||
    (choice.type === 'tool' && choice.name === 'json') ||
    jsonTool.description === 'Respond with a JSON object.'
  );
}

function isJsonFormat(format: unknown): boolean {
  return isRecord(format) && (format.type === 'json_schema' || format.type === 'json_object');
}

function toolNamesOf(body: Record<string, unknown>, nameOf: (tool: Record<string, unknown>) => unknown): string[] {
  return asArray(body.tools)
    .filter(isRecord)
    .map(nameOf)
    .filter((name): name is string => typeof name === 'string');
}

/** Text of a content value: a string as is, or the concatenated `text` of content parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

// ---------------------------------------------------------------------------
// Step helpers
// ---------------------------------------------------------------------------

/**
 * Step chooser for multi-step tool loops that must survive a crash and re-request: picks
 * steps[n] where n = number of tool results in the request's messages after the last user
 * message that has non-empty text and no tool results (clamped to the last step). The
 * choice depends only on the conversation, so a resent request gets the same step.
 */
export function stepByToolResults(steps: ScriptedStep[]): (request: RecordedRequest) => ScriptedStep {
  if (steps.length === 0) throw new Error('stepByToolResults needs at least one step');
  return (request) => {
    const { messages } = request;
    let turnStart = -1;
    messages.forEach((message, index) => {
      if (message.role === 'user' && message.text !== '' && message.toolResults.length === 0) turnStart = index;
    });
    const toolResults = messages.slice(turnStart + 1).reduce((count, message) => count + message.toolResults.length, 0);
    return steps[Math.min(toolResults, steps.length - 1)]!;
  };
}

/** A text-only step. The text is split into `chunks` pieces of similar length, or by
 *  default into words (each with its trailing whitespace). */
export function textStep(
  text: string,
  options: { chunks?: number; usage?: { input: number; output: number } } = {},
): ScriptedStep {
  const pieces =
    options.chunks === undefined
      ? text.split(/(?<=\s)(?=\S)/).filter((piece) => piece !== '')
      : splitIntoPieces(text, options.chunks);
  const step: PartsStep = { parts: pieces.map((piece) => ({ text: piece })) };
  if (options.usage) step.usage = options.usage;
  return step;
}

/** A step with one or more tool calls, optionally preceded by text. */
export function toolStep(calls: { id?: string; name: string; arguments: unknown }[], text?: string): ScriptedStep {
  const parts: ScriptedPart[] = text ? [{ text }] : [];
  for (const call of calls) parts.push({ toolCall: call });
  return { parts };
}

/**
 * An OpenAI Chat provider whose model makes `calls` (ids call_1, call_2, … in one batch), then
 * answers "Done."; closed by `cleanup`.
 */
export async function startCallingProvider(
  cleanup: { add(close: () => unknown): void },
  calls: { name: string; arguments: unknown }[],
): Promise<FakeProvider> {
  const provider = await startFakeProvider({
    wire: 'openai-chat',
    steps: stepByToolResults([
      toolStep(calls.map((call, index) => ({ id: `call_${index + 1}`, ...call }))),
      textStep('Done.'),
    ]),
  });
  cleanup.add(() => provider.close());
  return provider;
}

/** What the model was sent as the results of its calls in the last request, in order. */
export function toolResultsSent(provider: FakeProvider): string[] {
  return provider.requests.at(-1)!.messages.flatMap((message) => message.toolResults.map((result) => result.content));
}

// ---------------------------------------------------------------------------
// Small utilities
// ---------------------------------------------------------------------------

function isErrorStep(step: ScriptedStep): step is ErrorStep {
  return 'status' in step;
}

function isHangUpStep(step: ScriptedStep): step is HangUpStep {
  return 'hangUpAfterParts' in step;
}

function isDelayPart(part: ScriptedPart): part is { delayMs: number } | { gate: Gate } {
  return 'delayMs' in part || 'gate' in part;
}

/** Tool arguments as sent on the wire: strings verbatim, anything else as JSON ('{}' for undefined). */
function serialiseArguments(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value === undefined ? {} : value);
}

function parseOrKeep(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Splits text into at most `count` non-empty pieces of similar length ([] for ''). */
function splitIntoPieces(text: string, count: number): string[] {
  if (text === '') return [];
  const pieceLength = Math.ceil(text.length / Math.max(1, Math.floor(count)));
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += pieceLength) pieces.push(text.slice(start, start + pieceLength));
  return pieces;
}

function errorBody(wire: WireFormat, status: number, message: string): unknown {
  if (wire === 'anthropic') {
    const type =
      {
        400: 'invalid_request_error',
        401: 'authentication_error',
        403: 'permission_error',
        404: 'not_found_error',
        413: 'request_too_large',
        429: 'rate_limit_error',
        529: 'overloaded_error',
      }[status] ?? 'api_error';
    return { type: 'error', error: { type, message } };
  }
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : null } };
}

function defaultErrorMessage(status: number): string {
  if (status === 429) return 'Rate limit reached (scripted by the fake provider)';
  if (status >= 500) return `The server had an error (scripted status ${status})`;
  return `Request failed (scripted status ${status})`;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  response.end(payload);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** Waits out a delay part, or until its gate opens; less if `signal` aborts first. Never rejects. */
function waitAt(part: { delayMs: number } | { gate: Gate }, signal: AbortSignal): Promise<void> {
  if ('delayMs' in part) return pause(part.delayMs, signal);
  if (signal.aborted) return Promise.resolve();
  part.gate.arrive();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void part.gate.opened.then(done);
  });
}

/** Waits `milliseconds`, or less if `signal` aborts first. Never rejects. */
function pause(milliseconds: number, signal: AbortSignal): Promise<void> {
  if (milliseconds <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, milliseconds);
    signal.addEventListener('abort', done, { once: true });
  });
}

function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
