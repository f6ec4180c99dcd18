/**
 * The user's lasting approvals in a turn (inquiry/approval-rule.ts): a call a kept rule covers runs
 * without asking, with a human there or not (leaving the sandbox is still asked); a person's
 * "always" answer at a prompt keeps its rule, when the rule covers the call it answered. Nothing
 * else adds one: not a policy, a hook or the model.
 */
import { describeRule, ruleCovers } from '../approvals/rules.ts';
import type { ApprovalRule } from '../inquiry/approval-rule.ts';
import type { TurnHost } from './host.ts';

/** Where the rules are kept (workspace/approvals.ts, bound to the run's workspace by the run). */
export interface ApprovalStore {
  rules(): ApprovalRule[];
  add(rule: ApprovalRule): void;
}

/** The kept rule that covers this call, said to the clients; undefined when none does. */
export function coveringApproval(
  store: ApprovalStore | undefined,
  host: Pick<TurnHost, 'notice'>,
  tool: string,
  argumentsValue: unknown,
): ApprovalRule | undefined {
  const rule = store?.rules().find((candidate) => ruleCovers(candidate, tool, argumentsValue));
  if (rule)
    host.notice(
      'info',
      `${tool} runs without asking: you approved ${describeRule(rule)}, in this workspace (\`jp approvals\` lists ` +
        `them and revokes one)`,
    );
  return rule;
}

/** Keeps a person's "always" answer, if its rule covers the call it answered. */
export function keepApproval(
  store: ApprovalStore | undefined,
  by: string,
  rule: ApprovalRule,
  tool: string,
  argumentsValue: unknown,
): void {
  if (by === 'user' && ruleCovers(rule, tool, argumentsValue)) store?.add(rule);
}
