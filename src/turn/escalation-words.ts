/**
 * What the model is told when an `escalate` inquiry is refused (DESIGN §10): a command kept in the
 * sandbox, a command not run because the sandbox cannot start, or a file tool's write inside
 * `.git/` (needs `git`) not made. Plain words, no I/O.
 */
import type { SandboxProblem } from '../sandbox/explain.ts';
import type { AnsweredBy } from '../inquiry/types.ts';

export function escalationRefusal(
  asked: { needs: string; justification: string } | undefined,
  problem: SandboxProblem | undefined,
  decided: { by: AnsweredBy; reason: string | undefined },
  sandboxDescription: string,
): string {
  const byPolicy = decided.by !== 'user';
  if (asked?.needs === 'git') {
    const why = byPolicy ? decided.reason : 'the user declined it';
    return `Not written: ${asked.justification}; ${why}. Do not work around it; ask the user to make the change.`;
  }
  const reason = byPolicy ? `${decided.reason}` : 'the user declined to run it outside the sandbox';
  if (problem)
    return (
      `Not run: the command sandbox is unavailable on this machine (${problem.cause}), and commands never run ` +
      `unconfined unless a human or the policy allows it; ${reason}. Do not retry; tell the user. ` +
      `Fix: ${problem.fix}.`
    );
  const why = byPolicy
    ? `${reason.charAt(0).toUpperCase()}${reason.slice(1)}`
    : 'The user declined to run this command outside the sandbox';
  return `${why}. Without "escalate", the command runs in the sandbox (${sandboxDescription}).`;
}
