/**
 * Retries with exponential backoff on failures the provider's SDK calls retryable (rate limits,
 * overload, network, a broken or stalled stream), but only while the response has produced
 * nothing: once output has been shown, a retry would repeat it, so the failure ends the turn
 * instead, resumable with --continue.
 */
import { JpError, RetryableProviderError } from '../errors.ts';
import type { ChatModel, ChatRequest, StreamPart } from './types.ts';

export interface RetryOptions {
  maxRetries: number;
  baseDelayMilliseconds: number;
  maxDelayMilliseconds: number;
  /** Abandon an attempt after this long without a stream part. */
  idleTimeoutMilliseconds: number;
  /** Told before each wait, for chrome on stderr. */
  onRetry?: (attempt: number, delayMilliseconds: number, error: JpError) => void;
}

export function backoffDelay(
  attempt: number,
  options: Pick<RetryOptions, 'baseDelayMilliseconds' | 'maxDelayMilliseconds'>,
): number {
  const exponential = options.baseDelayMilliseconds * 2 ** attempt;
  const jitter = 0.8 + Math.random() * 0.4;
  const delay = Math.min(options.maxDelayMilliseconds, Math.round(exponential * jitter));
  // A zero base and a huge attempt make 0 × Infinity: no wait, never NaN.
  return Number.isFinite(delay) ? delay : 0;
}

function abortableSleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, milliseconds);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class RetryingChatModel implements ChatModel {
  readonly id: string;
  private readonly inner: ChatModel;
  private readonly options: RetryOptions;

  constructor(inner: ChatModel, options: RetryOptions) {
    this.id = inner.id;
    this.inner = inner;
    this.options = options;
  }

  async *stream(request: ChatRequest): AsyncIterable<StreamPart> {
    for (let attempt = 0; ; attempt++) {
      let produced = false;
      // One attempt, aborted when no part arrives for idleTimeoutMilliseconds. The timer is set once
      // and re-armed only when it fires early: a stream part only records when it came.
      const controller = new AbortController();
      const forward = (): void => controller.abort(request.signal.reason);
      request.signal.addEventListener('abort', forward, { once: true });
      const limit = this.options.idleTimeoutMilliseconds;
      let lastPart = performance.now();
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined;
      const check = (): void => {
        const quiet = performance.now() - lastPart;
        if (quiet < limit) {
          timer = setTimeout(check, limit - quiet);
          return;
        }
        timedOut = true;
        controller.abort(new Error('idle timeout'));
      };
      timer = setTimeout(check, limit);
      try {
        for await (const part of this.inner.stream({ ...request, signal: controller.signal })) {
          lastPart = performance.now();
          produced = true;
          yield part;
        }
        return;
      } catch (caught) {
        clearTimeout(timer);
        request.signal.removeEventListener('abort', forward);
        const error = timedOut
          ? new RetryableProviderError(
              'provider_timeout',
              `${this.id}: no data from the provider for ${Math.round(limit / 1000)} s`,
              {
                hint: 'Raise assistant.request.idle_timeout_secs, or resume later with `jp query --continue`.',
                cause: caught,
              },
            )
          : caught;
        if (request.signal.aborted) throw error;
        const retryable = JpError.isInstance(error) && error.status === 'retryable';
        if (!retryable || produced || attempt >= this.options.maxRetries) throw error;
        const asked = retryAfter(error);
        // Never sooner than the provider asks; longer than the longest backoff is not waited for here.
        if (asked !== undefined && asked > this.options.maxDelayMilliseconds)
          throw askedToWait(error as JpError, asked);
        const delay = asked ?? backoffDelay(attempt, this.options);
        this.options.onRetry?.(attempt + 1, delay, error);
        await abortableSleep(delay, request.signal);
        if (request.signal.aborted) throw error;
      } finally {
        clearTimeout(timer);
        request.signal.removeEventListener('abort', forward);
      }
    }
  }
}

/**
 * How long the provider asks to wait before a retry: its `retry-after-ms` (OpenAI) or `Retry-After`
 * header (seconds or an HTTP date), when the error carries one.
 */
function retryAfter(error: unknown): number | undefined {
  const headers = (error as { cause?: { responseHeaders?: Record<string, string> } }).cause?.responseHeaders;
  if (!headers) return undefined;
  const milliseconds = Number(headers['retry-after-ms']);
  let delay: number | undefined =
    headers['retry-after-ms'] !== undefined && Number.isFinite(milliseconds) ? milliseconds : undefined;
  const header = headers['retry-after'];
  if (delay === undefined && header !== undefined) {
    const seconds = Number(header);
    delay = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  }
  return delay !== undefined && Number.isFinite(delay) ? Math.max(0, delay) : undefined;
}

/** The run ends retryable (exit 6) when the provider asks for a longer wait than jp's longest backoff. */
function askedToWait(error: JpError, milliseconds: number): RetryableProviderError {
  const seconds = Math.ceil(milliseconds / 1000);
  return new RetryableProviderError(
    error.code,
    `${error.message}; the provider asks to wait ${seconds} s before a retry`,
    {
      hint: `Resume after that with \`jp query --continue\`, or let jp wait that long: assistant.request.backoff_max_ms = ${seconds * 1000}.`,
      cause: error,
    },
  );
}
