/**
 * Keeps each request of a turn within the model's context window (DESIGN §6). Before a request
 * estimated past the threshold share of the window, older turns are summarised (compact.ts); a
 * request still known to be too big after that (its least estimate passes the window) is not sent:
 * the error names the window, the sizes and what to change (window-report.ts). A request the
 * provider refuses as too long before any part of its response arrived is compacted to what the
 * provider said it takes (or 60% of the estimate) and sent once more, when there was something to
 * compact. What is said on the way is what is done. That a window is assumed for a model jp does
 * not know is said once a run.
 */
import { JpError } from '../errors.ts';
import type { ContextWindow } from '../llm/context-window.ts';
import { statedContextLimit } from '../llm/provider-errors.ts';
import type { PromptMessage, StreamPart, ToolSpec } from '../llm/types.ts';
import { compactHistory, type CompactionContext } from './compact.ts';
import { charactersPerToken, defaultThreshold, estimateRequest, type RequestEstimate } from './compaction.ts';
import { nothingLeftToCompact, requestParts, requestTooBig } from './window-report.ts';

/** A request refused as longer than the context window, before anything of its response arrived. */
export class ContextLengthRefusal extends Error {
  constructor(readonly error: JpError) {
    super(error.message);
  }
}

/** Passes a model's stream on; a context-length error before its first part is thrown as a ContextLengthRefusal. */
export async function* refusalMarked(stream: AsyncIterable<StreamPart>): AsyncGenerator<StreamPart> {
  let received = false;
  try {
    for await (const part of stream) {
      received = true;
      yield part;
    }
  } catch (error) {
    if (!received && JpError.isInstance(error) && error.code === 'context_length_exceeded')
      throw new ContextLengthRefusal(error);
    throw error;
  }
}

export interface ContextGuardOptions {
  compaction: CompactionContext;
  /** undefined: never compact before a request (the test provider). */
  window: ContextWindow | undefined;
  /** Share of the window a request may reach (assistant.compaction.threshold). */
  threshold: number | undefined;
  /** The messages the next request sends. */
  prompt(): PromptMessage[];
}

/** A request estimated past the threshold share of the window (ChatRequest.likelyOverflow). */
export type LikelyOverflow = { estimate: number; window: number } | undefined;

export class ContextGuard {
  private windowNoticeSaid = false;

  constructor(private readonly options: ContextGuardOptions) {}

  /**
   * Compacts first when the next request is estimated to pass the threshold of the context window;
   * throws, sending nothing, when it is known to be too big even then.
   */
  async beforeRequest(tools: ToolSpec[]): Promise<void> {
    const { window, compaction } = this.options;
    if (!window) return;
    let estimate = this.estimate(tools);
    if (window.source === 'default' && !this.windowNoticeSaid && estimate.tokens > window.tokens / 2) {
      this.windowNoticeSaid = true;
      compaction.notice(
        `the context window of ${compaction.model.id} is not known to jp; ` +
          `assuming ${window.tokens} tokens (set assistant.context_window to its real size)`,
      );
    }
    if (
      estimate.tokens > this.thresholdTokens(window) &&
      (await compactHistory(compaction, 'threshold', window.tokens, this.compactionOptions(tools, estimate)))
    )
      estimate = this.estimate(tools);
    if (estimate.least > window.tokens)
      throw requestTooBig(compaction.model.id, window, estimate, this.options.prompt(), tools);
  }

  /**
   * Runs `request`; when it throws a ContextLengthRefusal, compacts and runs it once more. A refusal
   * that nothing could be cut for, or a second one, is thrown as the provider's error.
   */
  async request<T>(tools: ToolSpec[], request: (likelyOverflow: LikelyOverflow) => Promise<T>): Promise<T> {
    try {
      return await request(this.likelyOverflow(tools));
    } catch (error) {
      if (!(error instanceof ContextLengthRefusal)) throw error;
      // The provider counts differently than the estimate: compact to what it said it takes, once.
      const stated = statedContextLimit(error.error);
      const window = this.options.window?.tokens ?? Number.POSITIVE_INFINITY;
      const limit = Math.min(window, stated ?? Math.floor(this.estimate(tools).tokens * 0.6));
      const { compaction } = this.options;
      if (
        !(await compactHistory(
          compaction,
          'context_length',
          limit,
          this.compactionOptions(tools, this.estimate(tools)),
        ))
      )
        throw nothingLeftToCompact(
          error.error,
          this.options.window,
          stated,
          this.estimate(tools),
          tools,
          this.options.prompt(),
        );
      compaction.notice(
        `retrying once the request ${compaction.model.id} refused as too long for its context window, now compacted`,
      );
      try {
        return await request(this.likelyOverflow(tools));
      } catch (again) {
        throw again instanceof ContextLengthRefusal ? again.error : again;
      }
    }
  }

  /** What compaction cannot shorten (the system prompt, the tools, the question), and the threshold. */
  private compactionOptions(tools: ToolSpec[], estimate: RequestEstimate): { fixedTokens: number; threshold: number } {
    const parts = requestParts(this.options.prompt(), tools, estimate.measured ?? charactersPerToken);
    return {
      fixedTokens: parts.system + parts.tools + parts.message,
      threshold: this.options.threshold ?? defaultThreshold,
    };
  }

  private thresholdTokens(window: ContextWindow): number {
    return window.tokens * (this.options.threshold ?? defaultThreshold);
  }

  private likelyOverflow(tools: ToolSpec[]): LikelyOverflow {
    const { window } = this.options;
    if (!window) return undefined;
    const estimate = this.estimate(tools);
    return estimate.tokens > this.thresholdTokens(window)
      ? { estimate: estimate.tokens, window: window.tokens }
      : undefined;
  }

  private estimate(tools: ToolSpec[]): RequestEstimate {
    return estimateRequest(this.options.compaction.events, this.options.prompt(), tools);
  }
}
