/**
 * Which connection failures are retried: only transient ones (a resolver that did not answer, a
 * refused or reset connection). A host name that does not resolve, a port fetch refuses, a URL it
 * cannot use or a certificate it rejects fail at once (exit 1), naming the base URL key.
 */
import { Secrets } from '../../src/redact.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyProviderError } from '../../src/llm/provider-errors.ts';
import type { ModelSpec } from '../../src/llm/resolve.ts';

const spec = {
  id: 'openai/gpt-test',
  provider: 'openai',
  model: 'gpt-test',
  baseUrl: 'http://api.example.invalid/v1',
  apiKeyVariable: 'OPENAI_API_KEY',
} as ModelSpec;

/** What fetch throws: `TypeError: fetch failed` with the system's error as its cause. */
function fetchFailed(cause: Error): TypeError {
  return new TypeError('fetch failed', { cause });
}

function systemError(message: string, code: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { code, ...extra });
}

describe('connection failures', () => {
  it('getaddrinfo ENOTFOUND is final at once, naming the host and the key', () => {
    const error = classifyProviderError(
      fetchFailed(
        systemError('getaddrinfo ENOTFOUND api.example.invalid', 'ENOTFOUND', { hostname: 'api.example.invalid' }),
      ),
      spec,
      'request',
      new Secrets(),
    );
    assert.equal(error.status, 'error');
    assert.equal(error.code, 'host_not_found');
    assert.match(error.message, /the host name api\.example\.invalid does not resolve \(ENOTFOUND\)/);
    assert.match(error.hint!, /providers\.openai\.base_url/);
  });

  it('"bad port" is final at once', () => {
    const error = classifyProviderError(fetchFailed(new Error('bad port')), spec, 'request', new Secrets());
    assert.equal(error.status, 'error');
    assert.equal(error.code, 'bad_port');
  });

  it('a rejected certificate is final at once, with NODE_EXTRA_CA_CERTS as the way out', () => {
    const error = classifyProviderError(
      fetchFailed(systemError('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT')),
      spec,
      'request',
      new Secrets(),
    );
    assert.equal(error.status, 'error');
    assert.match(error.hint!, /NODE_EXTRA_CA_CERTS/);
  });

  it('EAI_AGAIN, ECONNREFUSED and ECONNRESET are retried (exit 6 when retries run out)', () => {
    for (const [message, code] of [
      ['getaddrinfo EAI_AGAIN api.example.invalid', 'EAI_AGAIN'],
      ['connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED'],
      ['read ECONNRESET', 'ECONNRESET'],
    ] as const) {
      const error = classifyProviderError(fetchFailed(systemError(message, code)), spec, 'request', new Secrets());
      assert.equal(error.status, 'retryable', code);
    }
  });

  it('ECONNREFUSED from a server on this machine is final at once, naming the server to start by its port', () => {
    for (const [baseUrl, named] of [
      ['http://127.0.0.1:11434/v1', /ollama serve/],
      ['http://localhost:8080/v1', /llama-server/],
      ['http://[::1]:1234/v1', /LM Studio/],
      ['http://127.0.0.1:8000/v1', /vllm serve/],
      ['http://127.0.0.1:9999/v1', /Start the server that should answer at http:\/\/127\.0\.0\.1:9999\/v1/],
    ] as const) {
      const local = { ...spec, provider: 'openai-compatible', compatibleName: 'local', baseUrl } as ModelSpec;
      const error = classifyProviderError(
        fetchFailed(systemError('connect ECONNREFUSED', 'ECONNREFUSED')),
        local,
        'request',
        new Secrets(),
      );
      assert.equal(error.status, 'error', baseUrl);
      assert.equal(error.code, 'server_not_running');
      assert.match(error.hint!, named);
      assert.match(error.hint!, /providers\.openai-compatible\.local\.base_url/);
    }
  });
});
