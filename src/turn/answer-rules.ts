/**
 * What settling an inquiry of one kind needs to know of its answers (inquiry/answer.ts), for the
 * resolver (inquiries.ts): how to read one from outside, and what each decision made without a
 * human is.
 */
import {
  approveOnce,
  denyOnce,
  noAnswer,
  parseDeliverAnswer,
  parseEscalateAnswer,
  parseQuestionAnswer,
  parseRunToolAnswer,
  type AnswerOf,
  type AnswerSource,
  type InquiryAnswer,
  type ParsedAnswer,
} from '../inquiry/answer.ts';
import type { Inquiry, InquiryOf, JsonValue, PromptAction } from '../inquiry/types.ts';

/**
 * A permission (run, escalate, deliver) is let through or refused; a question is answered with a
 * value (its default, the assistant's) or not.
 */
export type AnswerRules<A extends InquiryAnswer> = {
  parse(value: unknown, from: AnswerSource): ParsedAnswer<A>;
  /** The answer of `Fail`. */
  refusal: A;
} & ({ asks: 'permission'; letThrough: A } | { asks: 'question'; valued(value: JsonValue): A });

export const runRules: AnswerRules<AnswerOf<'run_tool'>> = {
  asks: 'permission',
  parse: parseRunToolAnswer,
  letThrough: approveOnce,
  refusal: denyOnce,
};

export const escalateRules: AnswerRules<AnswerOf<'escalate'>> = {
  asks: 'permission',
  parse: parseEscalateAnswer,
  letThrough: approveOnce,
  refusal: denyOnce,
};

export const deliverRules: AnswerRules<AnswerOf<'deliver_tool_result'>> = {
  asks: 'permission',
  parse: parseDeliverAnswer,
  letThrough: { decision: 'deliver' },
  refusal: denyOnce,
};

export function questionRules(inquiry: InquiryOf<'tool_question'>): AnswerRules<AnswerOf<'tool_question'>> {
  return {
    asks: 'question',
    parse: (value, from) => parseQuestionAnswer(inquiry.question, value, from),
    valued: (value) => ({ decision: 'answer', value }),
    refusal: noAnswer,
  };
}

/** route() gave an action that does not apply to this kind of inquiry: a bug of jp's, never the user's. */
export function inapplicable(action: PromptAction, inquiry: Inquiry): Error {
  return new Error(`internal error: ${action} does not apply to a ${inquiry.kind} inquiry`);
}
