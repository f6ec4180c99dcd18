/**
 * Keeps each request of a turn within the model's context window (DESIGN §6): before a request
 * estimated past the threshold share of the window, older turns are summarised (compact.ts); a
 * request the provider refuses as too long before any part of its response arrived is compacted to
 * what the provider said it takes (or 60% of the estimate) and sent once more. That a window is
 * assumed for a model jp does not know is said once a run.
 */
import { JpError } from '../errors.ts';
import type { ContextWindow } from '../llm/context-window.ts';
import { statedContextLimit } from '../llm/provider-errors.ts';
import type { PromptMessage, StreamPart, ToolSpec } from '../llm/types.ts';
import { compactHistory, type CompactionContext } from './compact.ts';
import { defaultThreshold, estimateRequest } from './compaction.ts';

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

export class ContextGuard {
  private windowNoticeSaid = false;

  constructor(private readonly options: ContextGuardOptions) {}

  /** Compacts first when the next request is estimated to pass the threshold of the context window. */
  async beforeRequest(tools: ToolSpec[]): Promise<void> {
    const { window, compaction } = this.options;
    if (!window) return;
    const estimate = this.estimate(tools);
    if (window.source === 'default' && !this.windowNoticeSaid && estimate > window.tokens / 2) {
      this.windowNoticeSaid = true;
      compaction.notice(
        `the context window of ${compaction.model.id} is not known to jp; assuming ${window.tokens} tokens (set assistant.context_window to its real size)`,
      );
    }
    if (estimate <= window.tokens * (this.options.threshold ?? defaultThreshold)) return;
    await compactHistory(compaction, 'threshold', window.tokens);
  }

  /**
   * Runs `request`; when it throws a ContextLengthRefusal, compacts and runs it once more. A refusal
   * that nothing could be cut for, or a second one, is thrown as the provider's error.
   */
  async request<T>(tools: ToolSpec[], request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof ContextLengthRefusal)) throw error;
      // The provider counts differently than the estimate: compact to what it said it takes, once.
      const window = this.options.window?.tokens ?? Number.POSITIVE_INFINITY;
      const limit = Math.min(window, statedContextLimit(error.error) ?? Math.floor(this.estimate(tools) * 0.6));
      const { compaction } = this.options;
      compaction.notice(
        `${compaction.model.id} refused the request as too long for its context window; compacting the conversation and retrying once`,
      );
      if (!(await compactHistory(compaction, 'context_length', limit))) throw error.error;
      try {
        return await request();
      } catch (again) {
        throw again instanceof ContextLengthRefusal ? again.error : again;
      }
    }
  }

  private estimate(tools: ToolSpec[]): number {
    return estimateRequest(this.options.compaction.events, this.options.prompt(), tools);
  }
}
