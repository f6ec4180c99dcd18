/**
 * The `fetch` jp hands to the provider SDKs: the subset they use (POST a body, read status, headers
 * and a streamed body), on node:http / node:https. Node's global fetch loads undici and compiles its
 * WebAssembly HTTP parser on first use, which costs a CLI tens of milliseconds at start and more at
 * exit; this adapter costs neither. Connection failures surface as fetch's own
 * `TypeError('fetch failed')` with the cause, which the SDKs classify as retryable network errors.
 */
import type { IncomingMessage, RequestOptions } from 'node:http';
import { Readable } from 'node:stream';

type HeadersInput = Record<string, string | undefined> | Iterable<[string, string]> | undefined;

interface FetchInit {
  method?: string;
  headers?: HeadersInput;
  body?: string | Uint8Array | null;
  signal?: AbortSignal | null;
}

/**
 * The Fetch API's Headers: names are case-insensitive, iteration is sorted by name, repeated values
 * are joined with ", ". Node's global Headers is undici's, and touching it loads all of undici.
 */
export class FetchHeaders {
  private readonly map = new Map<string, string>();

  constructor(init?: FetchHeaders | Record<string, string | string[] | undefined> | Iterable<[string, string]>) {
    if (!init) return;
    if (init instanceof FetchHeaders) {
      init.forEach((value, name) => this.append(name, value));
    } else if (Symbol.iterator in Object(init)) {
      for (const [name, value] of init as Iterable<[string, string]>) this.append(name, value);
    } else {
      for (const [name, value] of Object.entries(init as Record<string, string | string[] | undefined>)) {
        if (value !== undefined) this.append(name, Array.isArray(value) ? value.join(', ') : value);
      }
    }
  }

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const existing = this.map.get(key);
    this.map.set(key, existing === undefined ? String(value) : `${existing}, ${value}`);
  }

  set(name: string, value: string): void {
    this.map.set(name.toLowerCase(), String(value));
  }

  delete(name: string): void {
    this.map.delete(name.toLowerCase());
  }

  get(name: string): string | null {
    return this.map.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }

  getSetCookie(): string[] {
    const cookie = this.map.get('set-cookie');
    return cookie === undefined ? [] : [cookie];
  }

  forEach(callback: (value: string, name: string, headers: FetchHeaders) => void): void {
    for (const [name, value] of this.entries()) callback(value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    yield* [...this.map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

/**
 * The provider SDKs build request headers with `new Headers(...)`. Until something needs undici,
 * the global Headers is this implementation: the SDKs' HTTP goes through httpFetch, not undici.
 * Only installed while the global is still Node's lazy, never-touched accessor.
 */
export function installFetchHeaders(): void {
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'Headers');
  if (descriptor && descriptor.get && descriptor.configurable) {
    Object.defineProperty(globalThis, 'Headers', { value: FetchHeaders, writable: true, configurable: true, enumerable: false });
  }
}

function requestHeaders(input: HeadersInput): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!input) return headers;
  const entries = Symbol.iterator in Object(input) ? (input as Iterable<[string, string]>) : Object.entries(input as Record<string, string | undefined>);
  for (const [name, value] of entries) if (value !== undefined) headers[name.toLowerCase()] = value;
  return headers;
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error('This operation was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

async function bodyBytes(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function responseOf(message: IncomingMessage, url: string) {
  const status = message.statusCode ?? 0;
  const body = Readable.toWeb(message) as unknown as ReadableStream<Uint8Array>;
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: message.statusMessage ?? '',
    url,
    redirected: false,
    type: 'basic' as const,
    headers: new FetchHeaders(message.headers),
    body,
    bodyUsed: false,
    text: async () => (await bodyBytes(body)).toString('utf8'),
    json: async () => JSON.parse((await bodyBytes(body)).toString('utf8')) as unknown,
    arrayBuffer: async () => {
      const bytes = await bodyBytes(body);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    },
  };
}

/** Sees a request's body and each raw chunk of its response as text (secrets are redacted by the logger). */
export type WireObserver = (message: 'request' | 'response' | 'response chunk', fields: Record<string, unknown>) => void;

/** httpFetch that shows its traffic to `observer`. */
export function observedFetch(observer: WireObserver): typeof httpFetch {
  return (input, init) => httpFetch(input, init, observer);
}

export async function httpFetch(input: string | URL | { url: string }, init: FetchInit = {}, observer?: WireObserver): Promise<ReturnType<typeof responseOf>> {
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fetchFailed(new Error(`unsupported protocol ${url.protocol}`));
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortError(signal);
  const transport = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const body = init.body ?? undefined;
  const headers = requestHeaders(init.headers);
  if (body !== undefined && headers['content-length'] === undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const options: RequestOptions = { method: init.method ?? 'GET', headers };
    let received: IncomingMessage | undefined;
    observer?.('request', { method: options.method, url: url.href, body: body === undefined ? undefined : typeof body === 'string' ? body : Buffer.from(body).toString('utf8') });
    const request = transport.request(url, options, (message) => {
      received = message;
      if (observer) {
        observer('response', { url: url.href, status: message.statusCode });
        message.on('data', (chunk: Buffer) => observer('response chunk', { url: url.href, text: chunk.toString('utf8') }));
      }
      resolve(responseOf(message, url.href));
    });
    // Once the response has started, aborting must end its body with an AbortError, as fetch does.
    const onAbort = (): void => {
      const error = abortError(signal!);
      if (received) received.destroy(error);
      request.destroy(error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    request.on('close', () => signal?.removeEventListener('abort', onAbort));
    request.on('error', (error) => reject(signal?.aborted ? abortError(signal) : fetchFailed(error)));
    request.end(body);
  });
}
