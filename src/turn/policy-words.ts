/**
 * The plain words of a decision made without a human (DESIGN §4): the setting that decided, and
 * the key that would change the decision, for the model, the log and the result.
 */
import type { Resolved } from '../config/policy.ts';
import { type DetachedPolicy, type Inquiry, type PolicyKind, policyKindOf } from '../inquiry/types.ts';

export function settingOf(resolved: Resolved<DetachedPolicy>): string {
  return resolved.key === 'built-in'
    ? `the detached policy is "${resolved.value}" (${resolved.layer})`
    : `${resolved.key} = "${resolved.value}" (set in ${resolved.layer})`;
}

/**
 * Names the setting that decided, and the key that would change the decision: after a refusal, how
 * to let it proceed without a user; after a decision made without one, how to require a human.
 */
export function policySentence(
  tool: string,
  kind: PolicyKind,
  resolved: Resolved<DetachedPolicy>,
  decision: 'proceeded' | 'refused',
  gitWrite = false,
): string {
  const setting = settingOf(resolved);
  if (decision === 'proceeded')
    return (
      `${setting}; to require a human instead, ` + `set conversation.tools.${tool}.detached.${kind} = "deny" or "defer"`
    );
  if (kind === 'escalate' && gitWrite) {
    return (
      `${setting} (the shorthand detached = "auto" does not cover writing inside .git/); ` +
      `to allow it without a user, set conversation.tools.${tool}.detached.escalate = "auto"`
    );
  }
  if (kind === 'escalate') {
    return (
      `${setting} (the shorthand detached = "auto" does not cover leaving the sandbox); ` +
      `to let it run outside the sandbox without a user, set conversation.tools.${tool}.detached.escalate = "auto"`
    );
  }
  if (kind === 'tool') {
    return (
      `${setting}; to change it, set conversation.tools.${tool}.detached.tool = "auto" (let the assistant answer) ` +
      `or "defaults" (use the question's default)`
    );
  }
  const noDefault =
    resolved.value === 'defaults'
      ? ` ("defaults" has no default answer for ${kind === 'run' ? 'running a tool' : 'sharing a result'})`
      : '';
  return (
    `${setting}${noDefault}; to let it ${kind === 'run' ? 'run' : 'through'} without a user, ` +
    `set conversation.tools.${tool}.detached.${kind} = "auto"`
  );
}

export function failureReason(
  inquiry: Inquiry,
  resolved: Resolved<DetachedPolicy>,
  /** `clientCannotAsk`: the user is there, but their client cannot put this question (its own words). */
  detail: { exclusive: boolean; defaultProblem?: string; clientCannotAsk?: string },
): string {
  const kind = policyKindOf(inquiry.kind);
  const gitWrite = inquiry.kind === 'escalate' && inquiry.needs === 'git';
  const policy = policySentence(inquiry.tool, kind, resolved, 'refused', gitWrite);
  switch (inquiry.kind) {
    case 'run_tool':
      return `not run: no user is available to approve it, and ${policy}`;
    case 'deliver_tool_result':
      return `result not delivered: no user is available to approve sharing it, and ${policy}`;
    case 'escalate':
      if (gitWrite) return `no user is available to approve writing inside .git/, and ${policy}`;
      return `not run outside the sandbox: no user is available to approve it, and ${policy}`;
    case 'tool_question': {
      const question = JSON.stringify(inquiry.question.text);
      if (detail.clientCannotAsk) return `unanswered: ${question} was not put to the user: ${detail.clientCannotAsk}`;
      if (resolved.value === 'auto' && detail.exclusive) {
        return (
          `unanswered: no user is available to answer ${question}, and the question is exclusive ` +
          `(only a human may answer it; conversation.tools.${inquiry.tool}.questions.${inquiry.question.id}.exclusive)`
        );
      }
      if (resolved.value === 'defaults' && inquiry.question.answer_type === 'form') {
        return (
          `unanswered: no user is available to answer ${question}, ${settingOf(resolved)}, ` +
          `and ${detail.defaultProblem ?? 'the form has no default'}`
        );
      }
      if (resolved.value === 'defaults') {
        const why = detail.defaultProblem ?? 'the question has no default';
        const option =
          inquiry.question.answer_type === 'select' ? ' or .default_option = "first" | "last" | "<label>"' : '';
        return (
          `unanswered: no user is available to answer ${question}, and ${why}; ` +
          `set conversation.tools.${inquiry.tool}.questions.${inquiry.question.id}.default${option}`
        );
      }
      return `unanswered: no user is available to answer ${question}, and ${policy}`;
    }
  }
}
