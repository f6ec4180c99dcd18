/**
 * Retries with exponential backoff on failures the provider's SDK calls retryable (rate limits,
 * overload, network, a broken or stalled stream), but only while the response has produced
 * nothing: once output has been shown, a retry would repeat it, so the failure ends the turn
 * instead, resumable with --continue. An attempt is abandoned when its response takes longer than
 * `headers_timeout_secs` to begin, or once begun goes `idle_timeout_secs` without a part.
 */
import { JpError, RetryableProviderError } from '../errors.ts';
import type { ChatModel, ChatRequest, StreamPart } from './types.ts';

export interface RetryOptions {
  maxRetries: number;
  baseDelayMilliseconds: number;
  maxDelayMilliseconds: number;
  /** Once the response has begun: abandon an attempt after this long without a stream part. */
  idleTimeoutMilliseconds: number;
  /**
   * Before it has begun: abandon an attempt after this long without the response's headers. A local
   * server with one slot sends none until the request ahead is done: a queue, not a stall.
   */
  headersTimeoutMilliseconds: number;
  /** Told before each wait, for chrome on stderr. */
  onRetry?: (attempt: number, delayMilliseconds: number, error: JpError) => void;
  /** Told once an attempt has waited `waitingNoticeMilliseconds` for the response to begin. */
  onWaiting?: (waitedMilliseconds: number, limitMilliseconds: number) => void;
}

/** How long a response may take to begin before jp says it is waiting (the idle timeout, when shorter). */
export const waitingNoticeMilliseconds = 5000;

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
      const controller = new AbortController();
      const forward = (): void => controller.abort(request.signal.reason);
      request.signal.addEventListener('abort', forward, { once: true });
      const watch = new AttemptWatch(this.options, () => controller.abort(new Error('timeout')));
      try {
        for await (const part of this.inner.stream({
          ...request,
          signal: controller.signal,
          onResponse: () => {
            watch.began();
            request.onResponse?.();
          },
        })) {
          watch.began();
          produced = true;
          yield part;
        }
        return;
      } catch (caught) {
        watch.stop();
        request.signal.removeEventListener('abort', forward);
        const error = watch.timedOut ? watch.timeoutError(this.id, caught) : caught;
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
        watch.stop();
        request.signal.removeEventListener('abort', forward);
      }
    }
  }
}

/**
 * The clock of one attempt: until the response begins (its headers, or a first part) the headers
 * limit applies, then the idle limit between parts. One timer, set once and re-armed only when it
 * fires early: a part only records when it came.
 */
class AttemptWatch {
  timedOut: 'headers' | 'idle' | undefined;
  private begun = false;
  private last = performance.now();
  private readonly start = this.last;
  private waitingSaid = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly options: RetryOptions,
    private readonly abort: () => void,
  ) {
    this.arm();
  }

  began(): void {
    this.begun = true;
    this.last = performance.now();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private noticeAfter(): number {
    return Math.min(waitingNoticeMilliseconds, this.options.idleTimeoutMilliseconds);
  }

  private arm(): void {
    if (this.stopped) return;
    const now = performance.now();
    const quiet = now - this.last;
    const limit = this.begun ? this.options.idleTimeoutMilliseconds : this.options.headersTimeoutMilliseconds;
    if (!this.begun && !this.waitingSaid && now - this.start >= this.noticeAfter()) {
      this.waitingSaid = true;
      this.options.onWaiting?.(now - this.start, limit);
    }
    if (quiet >= limit) {
      this.timedOut = this.begun ? 'idle' : 'headers';
      this.abort();
      return;
    }
    const untilNotice = !this.begun && !this.waitingSaid ? this.noticeAfter() - (now - this.start) : Infinity;
    this.timer = setTimeout(() => this.arm(), Math.max(1, Math.min(limit - quiet, untilNotice)));
  }

  timeoutError(id: string, cause: unknown): RetryableProviderError {
    if (this.timedOut === 'headers') {
      const seconds = Math.round(this.options.headersTimeoutMilliseconds / 1000);
      return new RetryableProviderError(
        'provider_timeout',
        `${id}: the provider did not begin to answer within ${seconds} s (no response headers)`,
        {
          hint:
            'A local server with every slot busy answers only when one is free: ' +
            'raise assistant.request.headers_timeout_secs, or resume later with `jp query --continue`.',
          cause,
        },
      );
    }
    return new RetryableProviderError(
      'provider_timeout',
      `${id}: no data from the provider for ${Math.round(this.options.idleTimeoutMilliseconds / 1000)} s`,
      {
        hint: 'Raise assistant.request.idle_timeout_secs, or resume later with `jp query --continue`.',
        cause,
      },
    );
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
      hint:
        'Resume after that with `jp query --continue`, or let jp wait that long: ' +
        `assistant.request.backoff_max_ms = ${seconds * 1000}.`,
      cause: error,
    },
  );
}
