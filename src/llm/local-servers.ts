/**
 * A server on this machine that refuses the connection is not running: a retry will not start it.
 * The error names the server to start, by the port the common local servers listen on by default.
 */
import { ProviderError } from '../errors.ts';

/** Whether the base URL names this machine (a loopback address or `localhost`). */
export function isLoopback(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\./.test(host);
}

/** The local servers people run, by the port each listens on by default, and how to start each. */
const localServers: Record<string, string> = {
  '11434': 'Ollama listens on port 11434: start it with `ollama serve` (and `ollama pull <model>` once)',
  '8080': "llama.cpp's llama-server listens on port 8080: start it with `llama-server -m <model.gguf> --port 8080`",
  '1234': 'LM Studio serves on port 1234: start its server (Developer tab, or `lms server start`)',
  '8000':
    'vLLM and llama-cpp-python listen on port 8000: start one (`vllm serve <model>`, or ' +
    '`python -m llama_cpp.server --model <model.gguf>`)',
};

/** A connection to a server on this machine refused: nothing listens there, and a retry will not start it. */
export function serverNotRunning(
  server: { id: string; name: string; baseUrl: string; key: string },
  link: Error,
  cause: unknown,
): ProviderError {
  const base = server.baseUrl;
  let port = '';
  try {
    const url = new URL(base);
    port = url.port || (url.protocol === 'https:' ? '443' : '80');
  } catch {
    // isLoopback parsed it already
  }
  const known = localServers[port];
  const address = (link as { address?: string; port?: number }).address;
  return new ProviderError(
    'server_not_running',
    `${server.id}: nothing is listening at ${base} (connection refused${address ? ` by ${address}` : ''}): ` +
      `is the ${server.name} server running?`,
    {
      hint: [
        known ? `${known}.` : `Start the server that should answer at ${base}.`,
        `If it runs elsewhere, set ${server.key} to its address.`,
      ].join('\n'),
      cause,
    },
  );
}
