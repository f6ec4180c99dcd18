/**
 * Failures of the connection to a provider's server, told apart by the error codes in their chain of
 * causes: those a retry cannot mend (a refused loopback server, a name that does not resolve, a port
 * or URL fetch will not use, a rejected certificate, no memory for fetch's parser) and the network
 * failures a retry may mend.
 */
import { type JpError, ProviderError } from '../errors.ts';
import type { Secrets } from '../redact.ts';
import { isLoopback, serverNotRunning } from './local-servers.ts';

/** The server a request went to: the model's id, the provider's name, its base URL and config key. */
export interface ReachedServer {
  id: string;
  name: string;
  baseUrl: string;
  key: string;
}

/** The errors in a chain of causes, outermost first. */
function causeChain(error: unknown): Error[] {
  const chain: Error[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

/**
 * A connection failure that a retry cannot mend (exit 1 at once, not after four retries): the host
 * name does not resolve (ENOTFOUND; EAI_AGAIN, a resolver that did not answer, is retried), a port
 * fetch refuses to use ("bad port"), a URL it cannot use, a certificate it does not accept, or no
 * memory for fetch's HTTP parser (WebAssembly) under an address-space limit.
 */
export function permanentConnectionFailure(
  error: unknown,
  server: ReachedServer,
  secrets: Secrets,
): JpError | undefined {
  const chain = causeChain(error);
  const where = `${server.id}: cannot reach ${server.name} at ${server.baseUrl}`;
  const check = `Check ${server.key} (now ${server.baseUrl}); retrying would not help.`;
  for (const link of chain) {
    const code = (link as NodeJS.ErrnoException).code ?? '';
    if (code === 'ECONNREFUSED' && isLoopback(server.baseUrl) && refusedBy(link, server.baseUrl))
      return serverNotRunning(server, link, error);
    if (code === 'ENOTFOUND') {
      const host = (link as { hostname?: string }).hostname;
      return new ProviderError(
        'host_not_found',
        `${where}: the host name ${host ? `${host} ` : ''}does not resolve (ENOTFOUND)`,
        { hint: `${check} If the name is right, check the DNS settings of this machine.`, cause: error },
      );
    }
    if (/^bad port$/i.test(link.message)) {
      return new ProviderError(
        'bad_port',
        `${where}: fetch refuses to connect to that port (bad port: it belongs to another protocol)`,
        { hint: check, cause: error },
      );
    }
    if (code === 'ERR_INVALID_URL' || /^(invalid url|unknown scheme|unsupported protocol)/i.test(link.message)) {
      return new ProviderError('bad_url', `${where}: the URL cannot be used (${secrets.redact(link.message)})`, {
        hint: check,
        cause: error,
      });
    }
    if (
      /^(CERT_|ERR_TLS_CERT|UNABLE_TO_(GET|VERIFY)|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/.test(code)
    ) {
      return new ProviderError('certificate_rejected', `${where}: its TLS certificate is not accepted (${code})`, {
        hint: `${check} A private certificate authority is given to Node with NODE_EXTRA_CA_CERTS=<file>.`,
        cause: error,
      });
    }
    if (link instanceof RangeError && /WebAssembly.*Out of memory/i.test(link.message)) {
      return new ProviderError(
        'address_space_limit',
        `${where}: Node could not reserve memory for fetch's HTTP parser (WebAssembly): ` +
          'the address space of this process is limited (ulimit -v)',
        {
          hint:
            'WebAssembly reserves ~10 GB of address space per instance unless Node runs with ' +
            '--disable-wasm-trap-handler (Node 20.15 or later; ' +
            'jp passes it to its query servers when ulimit -v is set). ' +
            'Raise the limit (ulimit -v unlimited), or run without --no-server.',
          cause: error,
        },
      );
    }
  }
  return undefined;
}

/** A failure of the connection (refused, reset, timed out, no route), which a retry may mend. */
export function isNetworkFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code ?? '';
    if (/^(ECONN|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR)/.test(code)) return true;
    if (current instanceof TypeError && /fetch failed|terminated/i.test(current.message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Whether a refused connection was refused by the server at `baseUrl` itself, and not by another
 * address on the way (a proxy): the refusal names the port it tried.
 */
function refusedBy(link: Error, baseUrl: string): boolean {
  const port = (link as { port?: unknown }).port;
  if (typeof port !== 'number') return true;
  const url = new URL(baseUrl);
  return port === Number(url.port || (url.protocol === 'https:' ? 443 : 80));
}
