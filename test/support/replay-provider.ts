/**
 * Replays recorded provider streams (test/fixtures/provider-streams, see its README) from a real
 * HTTP server on 127.0.0.1, byte for byte: the whole body at once, one SSE event per write, or one
 * byte per write; and cut after N events, the connection then ended cleanly or destroyed.
 *
 * Recordings come in three shapes: `*.chunks.txt` (one SSE `data:` payload per line; framed here as
 * the provider frames them: `event:` lines for Anthropic and the OpenAI Responses API, a final
 * `data: [DONE]` for Chat Completions; a file holding several Responses streams back to back is split
 * at each `response.created`), `*.sse` (a raw SSE body) and `*.yml` (httpmock cassettes: one
 * exchange per document, the response body as a literal block). An exchange recorded between jp and
 * a real server (`llama-server/NNN-resp.sse`) has its status and headers in `NNN-meta.json` beside it:
 * an error body, or an empty 200, is replayed with them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { repositoryRoot } from './jp.ts';

export const fixturesDirectory = path.join(repositoryRoot, 'test', 'fixtures', 'provider-streams');

/** One recorded HTTP response. */
export interface Recording {
  status: number;
  headers: Record<string, string>;
  /** The body split into SSE events (each ending with its blank line), in order. */
  events: string[];
}

function sseEvents(body: string): string[] {
  const events: string[] = [];
  let rest = body;
  for (;;) {
    const match = /\r?\n\r?\n/.exec(rest);
    if (!match) break;
    events.push(rest.slice(0, match.index + match[0].length));
    rest = rest.slice(match.index + match[0].length);
  }
  if (rest !== '') events.push(rest);
  return events;
}

const eventStream = { 'content-type': 'text/event-stream' };

function fromChunks(relative: string, text: string): Recording[] {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const named =
    relative.includes('anthropic/') && !relative.includes('openai-compatible')
      ? 'anthropic'
      : relative.includes('/responses/')
        ? 'responses'
        : 'chat';
  if (named === 'chat') {
    return [
      { status: 200, headers: eventStream, events: [...lines.map((line) => `data: ${line}\n\n`), 'data: [DONE]\n\n'] },
    ];
  }
  const recordings: Recording[] = [];
  for (const line of lines) {
    const type = (JSON.parse(line) as { type: string }).type;
    if (recordings.length === 0 || (named === 'responses' && type === 'response.created'))
      recordings.push({ status: 200, headers: eventStream, events: [] });
    recordings[recordings.length - 1]!.events.push(`event: ${type}\ndata: ${line}\n\n`);
  }
  return recordings;
}

function fromCassette(text: string): Recording[] {
  return text
    .split(/^---$/m)
    .filter((document) => /^then:/m.test(document))
    .map((document) => {
      const lines = document.split('\n');
      const status = Number(/^ {2}status: (\d+)/m.exec(document)?.[1] ?? 200);
      const headers: Record<string, string> = {};
      for (const match of document.matchAll(/- name: (.+)\n\s+value: (.+)/g))
        headers[match[1]!.trim()] = match[2]!.trim();
      const start = lines.findIndex((line) => /^ {2}body: \|/.test(line));
      const body: string[] = [];
      for (const line of lines.slice(start + 1)) {
        if (line !== '' && !line.startsWith('    ')) break;
        body.push(line.slice(4));
      }
      return { status, headers, events: sseEvents(body.join('\n')) };
    });
}

/** A recording of a streamed body as a server sent it (status 200, text/event-stream). */
export function recordingOf(body: string): Recording {
  return { status: 200, headers: eventStream, events: sseEvents(body) };
}

/** Headers the replaying server sets itself (framing and connection), left out of a recorded exchange's. */
const hopByHop = new Set(['transfer-encoding', 'content-length', 'connection', 'keep-alive', 'date']);

/** `NNN-resp.sse` with its `NNN-meta.json`: the status and headers the server sent, the body unchanged. */
function fromExchange(relative: string, text: string): Recording | undefined {
  const metaFile = path.join(fixturesDirectory, relative.replace(/-resp\.sse$/, '-meta.json'));
  if (!relative.endsWith('-resp.sse') || !existsSync(metaFile)) return undefined;
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as {
    status: number;
    response_headers: Record<string, string>;
  };
  const headers = Object.fromEntries(
    Object.entries(meta.response_headers).filter(([name]) => !hopByHop.has(name.toLowerCase())),
  );
  const streamed = /event-stream/.test(headers['content-type'] ?? '');
  return { status: meta.status, headers, events: text === '' ? [] : streamed ? sseEvents(text) : [text] };
}

/** The recorded responses of a fixture, relative to test/fixtures/provider-streams. */
export function loadRecording(relative: string): Recording[] {
  const text = readFileSync(path.join(fixturesDirectory, relative), 'utf8');
  if (relative.endsWith('.chunks.txt')) return fromChunks(relative, text);
  const exchange = fromExchange(relative, text);
  if (exchange) return [exchange];
  if (relative.endsWith('.sse')) return [{ status: 200, headers: eventStream, events: sseEvents(text) }];
  if (relative.endsWith('.yml')) return fromCassette(text);
  throw new Error(`unknown recording format: ${relative}`);
}

/** The JSON payloads of a recording's first `events` events (all of them by default), `[DONE]` left out. */
export function recordedPayloads(recording: Recording, events = recording.events.length): Record<string, any>[] {
  return recording.events.slice(0, events).flatMap((event) =>
    event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:') && line.slice('data:'.length).trim() !== '[DONE]')
      .map((line) => JSON.parse(line.slice('data:'.length)) as Record<string, any>),
  );
}

/**
 * The answer text a recording streams in its first `events` events, read from the provider's own
 * framing (Chat Completions `delta.content`, Anthropic `text_delta`, Responses `output_text.delta`):
 * what jp must show, worked out without jp.
 */
export function recordedText(recording: Recording, events?: number): string {
  return recordedPayloads(recording, events)
    .map((payload) => {
      if (payload.type === 'response.output_text.delta') return payload.delta as string;
      if (payload.type === 'content_block_delta')
        return payload.delta?.type === 'text_delta' ? (payload.delta.text as string) : '';
      return (payload.choices?.[0]?.delta?.content as string | null | undefined) ?? '';
    })
    .join('');
}

/** The reasoning a recording streams (Anthropic `thinking_delta`, Responses summary deltas, Chat `reasoning_content`). */
export function recordedReasoning(recording: Recording, events?: number): string {
  return recordedPayloads(recording, events)
    .map((payload) => {
      if (payload.type === 'response.reasoning_summary_text.delta') return payload.delta as string;
      if (payload.type === 'content_block_delta')
        return payload.delta?.type === 'thinking_delta' ? (payload.delta.thinking as string) : '';
      const delta = payload.choices?.[0]?.delta;
      return ((delta?.reasoning_content ?? delta?.reasoning) as string | null | undefined) ?? '';
    })
    .join('');
}

/**
 * The model a recording says answered (Chat `model`, Anthropic `message.model`, Responses
 * `response.model`), the first that is not empty: what jp is asked for when a test replays it, so
 * that jp does not warn of another model answering.
 */
export function recordedModel(recording: Recording): string | undefined {
  for (const payload of recordedPayloads(recording)) {
    const model = payload.model ?? payload.message?.model ?? payload.response?.model;
    if (typeof model === 'string' && model !== '') return model;
  }
  return undefined;
}

/** The signatures of a recording's Anthropic thinking blocks, in order. */
export function recordedSignatures(recording: Recording): string[] {
  return recordedPayloads(recording)
    .filter((payload) => payload.type === 'content_block_delta' && payload.delta?.type === 'signature_delta')
    .map((payload) => payload.delta.signature as string);
}

/** The index just past the `occurrence`-th event (1-based) that contains `marker`: cut there to stop right after it. */
export function eventsThrough(recording: Recording, marker: string, occurrence = 1): number {
  let seen = 0;
  const index = recording.events.findIndex((event) => event.includes(marker) && ++seen === occurrence);
  if (index < 0) throw new Error(`the recording has no ${occurrence}th event with ${marker}`);
  return index + 1;
}

/** A plain (not streamed) HTTP response, such as an error with its headers. */
export function plainResponse(status: number, body: string, headers: Record<string, string> = {}): Recording {
  return { status, headers: { 'content-type': 'application/json', ...headers }, events: [body] };
}

/** What one request gets: a recording, played whole or cut. */
export interface Reply {
  recording: Recording;
  /**
   * Stop after this many events; `close` says what the connection does then: ends cleanly, is
   * destroyed (no final chunk), or stays open sending nothing (a stall).
   */
  cutAfterEvents?: number;
  close?: 'end' | 'destroy' | 'stall';
  /** The response headers are sent only once this settles (a server that queues the request). */
  headersAfter?: Promise<unknown>;
}

export interface ReplayOptions {
  /** Request i gets replies[i] (past the end: the last one again), or a function of the index. */
  replies: Reply[] | ((index: number) => Reply);
  /** `whole`: the body in one write; `event`: one write per SSE event; `byte`: one byte per write. */
  writes?: 'whole' | 'event' | 'byte';
  /** With `event` writes: milliseconds between two events, as a server that generates them one by one. */
  paceMilliseconds?: number;
}

export interface ReplayRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface ReplayProvider {
  /** http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  port: number;
  requests: ReplayRequest[];
  close(): Promise<void>;
}

export async function startReplayProvider(options: ReplayOptions): Promise<ReplayProvider> {
  const requests: ReplayRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text
      }
      const index = requests.length;
      requests.push({ path: request.url ?? '', headers: request.headers, body });
      const replies = options.replies;
      const reply = typeof replies === 'function' ? replies(index) : replies[Math.min(index, replies.length - 1)]!;
      play(reply, response, options.writes ?? 'event', options.paceMilliseconds ?? 0).catch(() => response.destroy());
    });
    response.on('error', () => {});
  });
  server.on('connection', (socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

function write(response: ServerResponse, data: string | Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (response.destroyed) return resolve();
    response.write(data, () => resolve());
  });
}

async function play(
  reply: Reply,
  response: ServerResponse,
  writes: 'whole' | 'event' | 'byte',
  paceMilliseconds: number,
): Promise<void> {
  const { recording } = reply;
  const events =
    reply.cutAfterEvents === undefined ? recording.events : recording.events.slice(0, reply.cutAfterEvents);
  if (reply.headersAfter) await reply.headersAfter;
  if (response.destroyed) return;
  response.writeHead(recording.status, recording.headers);
  if (writes === 'whole') {
    await write(response, events.join(''));
  } else {
    for (const [index, event] of events.entries()) {
      if (writes === 'event') {
        if (paceMilliseconds > 0 && index > 0) await new Promise((resolve) => setTimeout(resolve, paceMilliseconds));
        await write(response, event);
      } else {
        const bytes = Buffer.from(event, 'utf8');
        for (let index = 0; index < bytes.length; index++) await write(response, bytes.subarray(index, index + 1));
      }
    }
  }
  if (reply.cutAfterEvents !== undefined && reply.close === 'destroy') response.destroy();
  else if (reply.cutAfterEvents === undefined || reply.close !== 'stall') response.end();
}

/** How jp is pointed at a replay server: the built-in providers, or an OpenAI-compatible entry `compatible:<name>`. */
export type ReplayKind = 'openai-chat' | 'openai-responses' | 'anthropic' | `compatible:${string}`;

export function replayModelArguments(
  kind: ReplayKind,
  baseUrl: string,
  model = 'recorded-model',
): { args: string[]; env: NodeJS.ProcessEnv } {
  if (kind.startsWith('compatible:')) {
    const name = kind.slice('compatible:'.length);
    return {
      args: [
        '-m',
        `${name}/${model}`,
        '-c',
        `providers.openai-compatible.${name}={ base_url = "${baseUrl}", api_key_env = "REPLAY_KEY" }`,
      ],
      env: { REPLAY_KEY: 'replay-key-0000000000' },
    };
  }
  if (kind === 'anthropic')
    return {
      args: ['-m', `anthropic/${model}`, '-c', `providers.anthropic.base_url="${baseUrl}"`],
      env: { ANTHROPIC_API_KEY: 'sk-ant-replay-000000000000000000' },
    };
  return {
    args: [
      '-m',
      `openai/${model}`,
      '-c',
      `providers.openai.base_url="${baseUrl}"`,
      '-c',
      `providers.openai.api="${kind === 'openai-chat' ? 'chat' : 'responses'}"`,
    ],
    env: { OPENAI_API_KEY: 'sk-replay-000000000000000000' },
  };
}
