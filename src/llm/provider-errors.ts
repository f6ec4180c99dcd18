/**
 * Provider failures as jp errors. Whether a failure is worth a retry is the provider SDK's call
 * (`isRetryable` on its errors, the error type of a streamed error event), never the HTTP status
 * alone; a quota or billing error is final at once. Messages carry the provider's own words, not
 * its raw JSON, and say what to check, naming the config key and the variable that matter.
 * Connection failures (nothing answered) are told apart in connection-failures.ts.
 */
import { APICallError } from '@ai-sdk/provider';
import { JpError, ProviderError, RetryableProviderError } from '../errors.ts';
import type { Secrets } from '../redact.ts';
import { isNetworkFailure, permanentConnectionFailure, type ReachedServer } from './connection-failures.ts';
import type { ModelSpec } from './resolve.ts';

/** Where a failure happened: before the response started, or while its body streamed. */
export type FailurePhase = 'request' | 'stream';

const displayNames: Record<string, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  ollama: 'Ollama',
  test: 'the test provider',
};

export function providerName(spec: ModelSpec): string {
  return spec.compatibleName ?? displayNames[spec.provider] ?? spec.provider;
}

/** The config key that holds this provider's base URL. */
export function baseUrlKey(spec: ModelSpec): string {
  return spec.provider === 'openai-compatible'
    ? `providers.openai-compatible.${spec.compatibleName}.base_url`
    : `providers.${spec.provider}.base_url`;
}

function defaultBaseUrl(spec: ModelSpec): string {
  if (spec.baseUrl) return spec.baseUrl.replace(/\/$/, '');
  return spec.provider === 'anthropic' ? 'https://api.anthropic.com/v1' : 'https://api.openai.com/v1';
}

/** The server a model's requests go to, as a connection failure names it. */
function serverOf(spec: ModelSpec): ReachedServer {
  return { id: spec.id, name: providerName(spec), baseUrl: defaultBaseUrl(spec), key: baseUrlKey(spec) };
}

/** The command that lists the models the key can use, where the provider has one. */
function modelListCommand(spec: ModelSpec): string | undefined {
  const base = defaultBaseUrl(spec);
  const key = spec.apiKeyVariable;
  switch (spec.provider) {
    case 'openai':
      return `curl ${base}/models -H "Authorization: Bearer $${key}"`;
    case 'anthropic':
      return `curl ${base}/models -H "x-api-key: $${key}" -H "anthropic-version: 2023-06-01"`;
    case 'ollama':
      return 'ollama list';
    case 'openai-compatible':
      return key ? `curl ${base}/models -H "Authorization: Bearer $${key}"` : `curl ${base}/models`;
    default:
      return undefined;
  }
}

/** An error the provider described: in an HTTP error body, or as an error event inside the stream. */
interface ProviderDescription {
  message: string | undefined;
  type: string | undefined;
  code: string | undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}

/**
 * Finds `{message, type, code}` in the shapes providers use: `{error: {...}}`, `{type: "error", error: {...}}`,
 * `{message}`.
 */
function describe(value: unknown): ProviderDescription | undefined {
  const record = asRecord(value);
  if (!record) return undefined;
  const inner = asRecord(record.error);
  if (inner) return { message: text(inner.message), type: text(inner.type), code: text(inner.code) };
  if (typeof record.error === 'string')
    return { message: record.error, type: text(record.type), code: text(record.code) };
  if (typeof record.message === 'string')
    return { message: record.message, type: text(record.type), code: text(record.code) };
  return undefined;
}

function describeBody(body: string | undefined): ProviderDescription | undefined {
  if (!body) return undefined;
  try {
    return describe(JSON.parse(body));
  } catch {
    const trimmed = body.trim();
    return trimmed
      ? { message: trimmed.length > 300 ? `${trimmed.slice(0, 299)}…` : trimmed, type: undefined, code: undefined }
      : undefined;
  }
}

/**
 * A request longer than the model's context window, in each provider's own words: OpenAI's code
 * `context_length_exceeded` (Chat and Responses), Anthropic's invalid_request_error `prompt is too
 * long: N tokens > M maximum`, llama.cpp's `exceed_context_size_error` (`request (N tokens) exceeds
 * the available context size (M tokens)`), vLLM's and other compatible servers' `maximum context
 * length is M tokens`.
 */
function isContextLength(description: ProviderDescription | undefined): boolean {
  if (!description) return false;
  if (/context_length_exceeded|exceed_context_size/i.test(`${description.code ?? ''} ${description.type ?? ''}`))
    return true;
  const message = description.message ?? '';
  return (
    /prompt is too long|maximum context length|exceeds? the (available )?context (size|window|length)/i.test(message) ||
    /context[_ ]length[_ ]exceeded|input is too long for the model/i.test(message)
  );
}

/** The provider's stated context limit, in tokens, when its error names one. */
export function statedContextLimit(error: JpError): number | undefined {
  const match =
    /tokens?\s*>\s*(\d+)\s*maximum/i.exec(error.message) ??
    /maximum context length is (\d+)/i.exec(error.message) ??
    /available context size \((\d+)/i.exec(error.message) ??
    /context (?:window|length|size) (?:of|is) (\d+)/i.exec(error.message);
  const limit = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(limit) && limit > 0 ? limit : undefined;
}

/**
 * A server's own words that the request itself is wrong (a validation error): llama-cpp-python
 * answers HTTP 500 with pydantic's `N validation errors`, others say `invalid_request_error`,
 * `Field required`, `is not valid`.
 */
function isInvalidRequest(description: ProviderDescription | undefined): boolean {
  if (!description) return false;
  if (/invalid_request|validation|bad_request/i.test(`${description.code ?? ''} ${description.type ?? ''}`))
    return true;
  const message = description.message ?? '';
  return (
    /\bvalidation errors?\b|\binvalid request\b|field required|input should be/i.test(message) ||
    /is not valid|unprocessable|malformed/i.test(message)
  );
}

/** The provider's words, cut to a few lines: a validation error can run to kilobytes. */
function shortSaid(description: ProviderDescription | undefined, secrets: Secrets): string {
  const message = description?.message;
  if (!message) return '';
  const redacted = secrets.redact(message).trim();
  const lines = redacted.split('\n');
  let kept = lines.slice(0, 3).join('\n');
  if (kept.length > 400) kept = `${kept.slice(0, 399)}…`;
  const left = redacted.length - kept.length;
  return `: ${kept}${left > 0 && kept.length < redacted.length ? `\n[… ${left} more characters]` : ''}`;
}

function contextLengthError(spec: ModelSpec, said: string, cause: unknown): ProviderError {
  return new ProviderError(
    'context_length_exceeded',
    `${spec.id}: ${providerName(spec)} refused the request as longer than the model's context window${said}`,
    {
      hint:
        'jp compacts the conversation and retries once; when that is not enough, ' +
        "set assistant.context_window to the model's real window (or a little less).",
      cause,
    },
  );
}

const quotaWords = /insufficient_quota|billing|quota|credit balance|payment/i;

function isQuota(description: ProviderDescription | undefined, status: number | undefined): boolean {
  if (status === 402) return true;
  if (!description) return false;
  return (
    quotaWords.test(description.code ?? '') ||
    quotaWords.test(description.type ?? '') ||
    /exceeded your current quota|credit balance is too low|billing/i.test(description.message ?? '')
  );
}

function causeText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    const message = current.message;
    if (
      message &&
      !parts.includes(message) &&
      message !== 'fetch failed' &&
      message !== 'Failed to process successful response'
    ) {
      parts.push(code && !message.includes(code) ? `${message} (${code})` : message);
    }
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(': ') || String(error);
}

function retryHint(): string {
  return 'Resume with `jp query --continue` once it is reachable again.';
}

/** Maps an SDK, network or streamed provider error to a jp error. */
export function classifyProviderError(error: unknown, spec: ModelSpec, phase: FailurePhase, secrets: Secrets): JpError {
  if (JpError.isInstance(error)) return error;
  const name = providerName(spec);
  const prefix = `${spec.id}:`;

  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const description = describe(error.data) ?? describeBody(error.responseBody);
    const said = description?.message ? `: ${secrets.redact(description.message)}` : '';
    // A 2xx status means the response had started: reading its body failed, the connection broke.
    if (phase === 'stream' && (status === undefined || (status >= 200 && status < 300)))
      return brokenStream(spec, secrets, error);
    if (status === undefined) {
      const permanent = permanentConnectionFailure(error.cause ?? error, serverOf(spec), secrets);
      if (permanent) return permanent;
      return new RetryableProviderError(
        'network_error',
        `${prefix} cannot reach ${name} at ${defaultBaseUrl(spec)}: ${secrets.redact(causeText(error.cause ?? error))}`,
        {
          hint: `Check the network, a proxy (HTTPS_PROXY, NO_PROXY) and ${baseUrlKey(spec)}. ${retryHint()}`,
          cause: error,
        },
      );
    }
    if (isQuota(description, status)) return quotaError(spec, description, status, error, secrets);
    if (status === 400 || status === 413 || status === 422) {
      if (isContextLength(description)) return contextLengthError(spec, said, error);
    }
    if (status === 401 || status === 403) {
      const key = spec.apiKeyVariable;
      const keyTable =
        spec.provider === 'openai-compatible'
          ? `providers.openai-compatible.${spec.compatibleName}`
          : `providers.${spec.provider}`;
      return new ProviderError(
        'provider_auth_failed',
        `${prefix} ${name} refused ${key ? `the API key in ${key}` : 'the request without an API key'} ` +
          `(HTTP ${status})${said}`,
        {
          hint: key
            ? `Check ${key} (export ${key}=...), or point ` +
              `${keyTable}.api_key_env at the variable that holds the key.`
            : 'This server wants a key: set ' +
              `providers.openai-compatible.${spec.compatibleName}.api_key_env to the variable that holds it.`,
          cause: error,
        },
      );
    }
    if (status === 404) {
      const list = modelListCommand(spec);
      return new ProviderError(
        'provider_not_found',
        `${prefix} ${name} does not know the model "${spec.model}" or the endpoint (HTTP 404)${said}`,
        {
          hint: [
            `Check the model name in -m / assistant.model${list ? `; list the models with:\n  ${list}` : '.'}`,
            `Check ${baseUrlKey(spec)} (now ${defaultBaseUrl(spec)}).`,
          ].join('\n'),
          cause: error,
        },
      );
    }
    if (error.isRetryable && isInvalidRequest(description)) {
      // A server that answers 5xx for a request it cannot parse answers it the same every time.
      return new ProviderError(
        'provider_rejected_request',
        `${prefix} ${name} rejected the request as invalid (HTTP ${status})${shortSaid(description, secrets)}`,
        {
          hint:
            'Retrying the same request would not help. ' +
            `If ${name} is an OpenAI-compatible server, it may not accept part of what jp sends ` +
            '(tools, the tool-call messages); ' +
            'run with -vvvvv to log the request body and compare it with what the server documents.',
          cause: error,
        },
      );
    }
    if (error.isRetryable) {
      const code = status === 429 ? 'rate_limited' : status >= 500 ? 'provider_unavailable' : 'provider_retryable';
      const what = status === 429 ? 'rate limited' : status >= 500 ? 'provider error' : 'temporary failure';
      return new RetryableProviderError(code, `${prefix} ${name}: ${what} (HTTP ${status})${said}`, {
        hint:
          status === 429
            ? 'Wait and resume with `jp query --continue`, or raise assistant.request.max_retries.'
            : `${name} is failing or overloaded; resume later with \`jp query --continue\`.`,
        cause: error,
      });
    }
    return new ProviderError(
      'provider_rejected_request',
      `${prefix} ${name} rejected the request (HTTP ${status})${said}`,
      { cause: error },
    );
  }

  // An error event inside a 200 stream: the SDK hands its object over (OpenAI: with its own
  // `isRetryable`; Anthropic: `{type, message}`).
  const record = asRecord(error);
  if (record && !(error instanceof Error)) {
    const description = describe(record) ?? describe(record.data);
    const said = description?.message
      ? secrets.redact(description.message)
      : secrets.redact(JSON.stringify(record).slice(0, 300));
    if (isQuota(description, undefined)) return quotaError(spec, description, undefined, error, secrets);
    if (isContextLength(description)) return contextLengthError(spec, `: ${said}`, error);
    const retryable =
      typeof record.isRetryable === 'boolean'
        ? record.isRetryable
        : /overloaded|rate_limit|api_error|server_error|timeout/i.test(description?.type ?? '');
    if (retryable) {
      return new RetryableProviderError(
        'provider_unavailable',
        `${prefix} ${name} reported an error while streaming: ${said}`,
        {
          hint: `${name} is failing or overloaded; resume later with \`jp query --continue\`.`,
          cause: error,
        },
      );
    }
    return new ProviderError('provider_error', `${prefix} ${name} reported an error: ${said}`, { cause: error });
  }

  const permanent = permanentConnectionFailure(error, serverOf(spec), secrets);
  if (permanent) return permanent;
  if (isNetworkFailure(error)) {
    if (phase === 'stream') return brokenStream(spec, secrets, error);
    return new RetryableProviderError(
      'network_error',
      `${prefix} cannot reach ${name} at ${defaultBaseUrl(spec)}: ${secrets.redact(causeText(error))}`,
      {
        hint: `Check the network, a proxy (HTTPS_PROXY, NO_PROXY) and ${baseUrlKey(spec)}. ${retryHint()}`,
        cause: error,
      },
    );
  }
  return new ProviderError('provider_error', `${prefix} ${secrets.redact(causeText(error))}`, { cause: error });
}

function quotaError(
  spec: ModelSpec,
  description: ProviderDescription | undefined,
  status: number | undefined,
  cause: unknown,
  secrets: Secrets,
): JpError {
  const said = description?.message ? `: ${secrets.redact(description.message)}` : '';
  const whose = spec.apiKeyVariable ? ` whose key is in ${spec.apiKeyVariable}` : '';
  return new ProviderError(
    'quota_exceeded',
    `${spec.id}: ${providerName(spec)} refused the request for quota ` +
      `or billing${status ? ` (HTTP ${status})` : ''}${said}`,
    {
      hint: `Check the plan and billing of the account${whose}; retrying will not help until then.`,
      cause,
    },
  );
}

/** The response had started and its stream broke: the connection closed, errored or stalled. */
export function brokenStream(spec: ModelSpec, secrets: Secrets, cause: unknown, what?: string): RetryableProviderError {
  const detail = what ?? secrets.redact(causeText(cause));
  return new RetryableProviderError(
    'stream_broken',
    `${spec.id}: the connection to ${providerName(spec)} broke while streaming${detail ? ` (${detail})` : ''}`,
    {
      hint: 'The answer is incomplete; `jp query --continue` asks again.',
      cause,
    },
  );
}

/**
 * A 200 response whose body held nothing at all. Past the share of the window where jp compacts,
 * that is a server refusing a request longer than its context window (llama-cpp-python raises after
 * sending its headers): a context-length error, which compacts. Otherwise the stream broke.
 */
export function emptyResponse(
  spec: ModelSpec,
  likelyOverflow: { estimate: number; window: number } | undefined,
): JpError {
  const said = `${spec.id}: ${providerName(spec)} answered HTTP 200 with an empty body`;
  if (likelyOverflow) {
    return new ProviderError(
      'context_length_exceeded',
      `${said}, as a server does for a request longer than its context window ` +
        `(this one is estimated at ${likelyOverflow.estimate} tokens of a ${likelyOverflow.window}-token window)`,
      {
        hint:
          "Set assistant.context_window to the server's real window " +
          '(llama-cpp-python --n_ctx, llama-server --ctx-size), or give the model a larger one.',
      },
    );
  }
  const windowKey =
    spec.provider === 'openai-compatible'
      ? `providers.openai-compatible.${spec.compatibleName}.context_window`
      : 'the model table';
  return new RetryableProviderError('stream_broken', `${said} (no event at all: the stream broke before it began)`, {
    hint:
      'A server that answers an empty body may be refusing a request longer than its context window: ' +
      `check the server's log, and that assistant.context_window (or ${windowKey}) matches its window. ` +
      '`jp query --continue` asks again.',
  });
}

/**
 * A successful reply that is no event stream (an HTML page from a proxy's login or a wrong URL):
 * final at once, with its content type.
 */
export function notEventStream(spec: ModelSpec, contentType: string, secrets: Secrets): ProviderError {
  return new ProviderError(
    'not_event_stream',
    `${spec.id}: ${providerName(spec)} at ${defaultBaseUrl(spec)} answered with something ` +
      `that is not an event stream (content-type ${secrets.redact(contentType.split(';')[0]!.trim())})`,
    {
      hint:
        `Check ${baseUrlKey(spec)}: it should be the provider's API (it ends in /v1 for most); ` +
        'a proxy or a login page may be answering instead.',
    },
  );
}
