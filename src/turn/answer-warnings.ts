/**
 * What a turn says about an answer although it goes on (a notice, and a warning of the result): cut
 * at a limit, made only of reasoning, given by another model than the one asked for. The model the
 * provider said answered is kept for the turn's end.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { askedModel, isOtherModel, otherModelWarning } from '../llm/answering-model.ts';
import type { ContextWindow } from '../llm/context-window.ts';
import { cutAtLimitWarning, reasoningOnlyWarning, type FinishPart } from './limits.ts';

export interface AnswerWarningsOptions {
  /** The turn's warnings, in the order said; this adds to them. */
  warnings: { code: string; message: string }[];
  /** Says a warning (after the deltas that precede it). */
  say(message: string): void;
  modelId: string;
  conversationId: string;
  maxOutputTokens: number | undefined;
  window: ContextWindow | undefined;
}

export class AnswerWarnings {
  /** The model the provider said answered the last response, when it said. */
  responseModel: string | undefined;
  private otherModelSaid = false;

  constructor(private readonly options: AnswerWarningsOptions) {}

  private add(code: string, message: string): void {
    this.options.warnings.push({ code, message });
    this.options.say(message);
  }

  /** An answer that ended at a length finish: what stopped it (limits.ts). */
  cutAtLimit(finish: FinishPart): void {
    const { maxOutputTokens, window } = this.options;
    this.add('output_limit', cutAtLimitWarning(finish, { maxOutputTokens, window }));
  }

  /**
   * A last step that streamed reasoning and no answer (a thinking template that never closes its
   * reasoning): the answer is empty, and that is said, not left for an empty success.
   */
  reasoningOnly(stepEvents: readonly ConversationEvent[]): void {
    let message = '';
    let reasoning = 0;
    for (const event of stepEvents) {
      if (event.type !== 'chat_response') continue;
      if ('message' in event) message += event.message;
      else reasoning += event.reasoning.length;
    }
    if (message.trim() !== '' || reasoning === 0) return;
    this.add('reasoning_only', reasoningOnlyWarning(reasoning, this.options.conversationId));
  }

  /** The model the provider says answered: kept, and said once when it is not the one asked for. */
  answeredBy(model: string): void {
    this.responseModel = model;
    const { modelId } = this.options;
    if (this.otherModelSaid || !isOtherModel(askedModel(modelId), model)) return;
    this.otherModelSaid = true;
    this.add('model_mismatch', otherModelWarning(modelId, model));
  }
}
