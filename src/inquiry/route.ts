import type { DetachedPolicy, Inquiry, PromptAction } from './types.ts';

export interface RouteContext {
  /** A client that can prompt a human is attached (DESIGN §4); computed once by the caller. */
  hasClient: boolean;
  /** The detached policy resolved for this tool and inquiry kind. */
  policy: DetachedPolicy;
  /** The user's `questions.<id>.exclusive` override, when set. */
  configExclusive: boolean | undefined;
}

/**
 * The one decision point for every inquiry. Pure and total.
 *
 * - A human who can answer always gets the question.
 * - `defer` persists the inquiry for a human to answer later.
 * - `auto` approves runs, escalations and deliveries, and sends questions to the LLM unless they
 *   are exclusive. (An escalation has its own policy kind, `escalate`, whose default is `deny`.)
 * - `defaults` answers questions with their default; runs, escalations and deliveries have none.
 * - `deny` fails everything.
 *
 * Exclusivity only concerns questions: `auto` never routes a run or a delivery to the LLM.
 * The caller resolves a select question's configured `default_option` into `question.default`.
 */
export function route(inquiry: Inquiry, context: RouteContext): PromptAction {
  if (context.hasClient) return 'PromptClient';
  switch (context.policy) {
    case 'defer':
      return 'Defer';
    case 'deny':
      return 'Fail';
    case 'auto':
      return autoAction(inquiry, context);
    case 'defaults':
      if (inquiry.kind !== 'tool_question') return 'Fail';
      return inquiry.question.default === undefined ? 'Fail' : 'UseDefault';
  }
}

/** `auto`: approve and deliver; a question goes to the model unless it is exclusive. */
function autoAction(inquiry: Inquiry, context: RouteContext): PromptAction {
  switch (inquiry.kind) {
    case 'run_tool':
    case 'escalate':
      return 'AutoApprove';
    case 'deliver_tool_result':
      return 'AutoDeliver';
    case 'tool_question': {
      const exclusive = context.configExclusive ?? inquiry.question.exclusive;
      return exclusive ? 'Fail' : 'LlmInquiry';
    }
  }
}
