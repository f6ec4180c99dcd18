/**
 * The `fetch` the provider SDKs are given: Node's own, so redirects are followed as fetch follows
 * them, sent through undici's EnvHttpProxyAgent when the environment names a proxy (`HTTPS_PROXY`,
 * `HTTP_PROXY`, lower case too, with `NO_PROXY`). undici is loaded only then; a proxy that will not
 * open a tunnel fails the request (proxy-tunnel.ts). A wire observer
 * (-vvvvv) sees each request body and each raw chunk of the response. Text deltas already received
 * reach the SDK merged (delta-coalescing.ts).
 */
import { coalescingTextDeltas, type DeltaWire } from './delta-coalescing.ts';

/** Sees a request's body and each raw chunk of its response as text (secrets are redacted by the logger). */
export type WireObserver = (
  message: 'request' | 'response' | 'response chunk',
  fields: Record<string, unknown>,
) => void;

type Fetch = typeof globalThis.fetch;

/**
 * `onResponse` is told each request's signal once its response headers arrived: the SDKs await more
 * than the headers before they hand a stream over (OpenAI's, the first output event).
 */
export async function providerFetch(
  environment: NodeJS.ProcessEnv,
  deltas: DeltaWire,
  wire?: WireObserver,
  onResponse?: (signal: AbortSignal) => void,
): Promise<Fetch> {
  const httpsProxy = environment.https_proxy || environment.HTTPS_PROXY;
  const httpProxy = environment.http_proxy || environment.HTTP_PROXY;
  let fetch: Fetch | undefined;
  if (httpsProxy || httpProxy) {
    const [{ EnvHttpProxyAgent, Pool }, { tunnelClientFactory }] = await Promise.all([
      import('undici'),
      import('./proxy-tunnel.ts'),
    ]);
    const dispatcher = new EnvHttpProxyAgent({
      clientFactory: tunnelClientFactory(Pool),
      ...(httpProxy ? { httpProxy } : {}),
      ...(httpsProxy ? { httpsProxy } : {}),
      noProxy: environment.no_proxy ?? environment.NO_PROXY ?? '',
    });
    fetch = (input, init) => globalThis.fetch(input, { ...init, dispatcher } as RequestInit);
  }
  const plain = fetch ?? ((input, init) => globalThis.fetch(input, init));
  const base: Fetch = onResponse
    ? async (input, init) => {
        const response = await plain(input, init);
        if (init?.signal) onResponse(init.signal);
        return response;
      }
    : plain;
  return coalescingTextDeltas(wire ? observed(base, wire) : base, deltas);
}

function observed(fetch: Fetch, wire: WireObserver): Fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = init?.body;
    wire('request', {
      method: init?.method ?? 'GET',
      url,
      body:
        typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body).toString('utf8') : undefined,
    });
    const response = await fetch(input, init);
    wire('response', { url, status: response.status });
    if (!response.body) return response;
    const decoder = new TextDecoder();
    const seen = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          wire('response chunk', { url, text: decoder.decode(chunk, { stream: true }) });
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(seen, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
