/**
 * The client undici's proxy agent opens to the proxy itself, with one change: a proxy that closes
 * the connection while jp asks it for a tunnel (CONNECT) fails the request. undici 7 takes that
 * socket error for a recoverable one and reconnects at once, forever (nodejs/undici#3897, fixed in
 * undici 8, which needs Node 22): hundreds of connections a second whatever `max_retries` says.
 * The failure reaches the provider layer as a network error (code UND_ERR_PROXY_TUNNEL), retried
 * there with backoff like any other.
 */
import type { Dispatcher, Pool as PoolClass } from 'undici';

/** A tunnel the proxy did not open. */
export class ProxyTunnelError extends Error {
  readonly code = 'UND_ERR_PROXY_TUNNEL';
}

/** What the request's message says about the proxy: its origin, without credentials. */
function proxyOrigin(origin: URL): string {
  return `${origin.protocol}//${origin.host}`;
}

export function tunnelClientFactory(Pool: typeof PoolClass): (origin: URL, options: object) => Dispatcher {
  return (origin, options) => {
    const pool = new Pool(origin, options as PoolClass.Options);
    const connect = pool.connect.bind(pool) as (
      options: Dispatcher.ConnectOptions,
    ) => Promise<Dispatcher.ConnectData<null>>;
    const wrapped = async (request: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData<null>> => {
      try {
        return await connect(request);
      } catch (error) {
        if ((error as { name?: string }).name === 'AbortError') throw error;
        throw new ProxyTunnelError(`the proxy ${proxyOrigin(origin)} did not open a tunnel to ${request.path}`, {
          cause: error,
        });
      }
    };
    return Object.assign(pool, { connect: wrapped });
  };
}
