/**
 * `jp approvals [revoke <n>... | revoke --all]`: the lasting approvals the user gave at prompts in
 * this workspace (workspace/approvals.ts), numbered oldest first, and revoking them. Kept in the
 * user's local state, never in the repository.
 */
import { UsageError } from '../../errors.ts';
import { describeRule } from '../../approvals/rules.ts';
import { approvalsFile, readApprovals, revokeApprovals, type StoredApproval } from '../../approvals/store.ts';
import type { CommandContext } from '../context.ts';

function shown(approvals: readonly StoredApproval[], numbers: readonly number[]): object[] {
  return approvals.map((approval, index) => ({
    number: numbers[index]!,
    rule: approval.rule,
    description: describeRule(approval.rule),
    approved_at: approval.approved_at,
  }));
}

export async function approvalsCommand(
  context: CommandContext,
  action: string | undefined,
  numbers: readonly string[],
  options: { all?: boolean },
): Promise<number> {
  const workspace = context.workspace();
  const approvals = readApprovals(workspace);
  if (action === undefined) {
    if (context.format === 'json') {
      context.jsonLine(context.stdout, 'approvals', {
        approvals: shown(
          approvals,
          approvals.map((_, index) => index + 1),
        ),
      });
      return 0;
    }
    if (approvals.length === 0) {
      context.stdout.write(
        `No lasting approvals in this workspace (${workspace.root}). At a permission prompt, \`a\` gives one.\n`,
      );
      return 0;
    }
    const lines = approvals.map(
      (approval, index) => `${index + 1}. ${describeRule(approval.rule)} (approved ${approval.approved_at})`,
    );
    context.stdout.write(
      `${lines.join('\n')}\nKept in ${approvalsFile(workspace)}; \`jp approvals revoke <n>\` revokes one.\n`,
    );
    return 0;
  }
  if (action !== 'revoke')
    throw new UsageError('unknown_action', `unknown action ${JSON.stringify(action)}`, {
      hint: 'jp approvals lists them; jp approvals revoke <n>... (or --all) revokes them.',
    });
  const positions = options.all
    ? approvals.map((_, index) => index)
    : numbers.map((text) => {
        const number = Number(text);
        if (!Number.isInteger(number) || number < 1 || number > approvals.length)
          throw new UsageError(
            'no_such_approval',
            `there is no approval ${JSON.stringify(text)}: this workspace has ${approvals.length}`,
            { hint: 'jp approvals lists them with their numbers.' },
          );
        return number - 1;
      });
  if (positions.length === 0)
    throw new UsageError('nothing_to_revoke', 'revoke what? name approvals by number, or --all', {
      hint: 'jp approvals lists them with their numbers.',
    });
  const removed = revokeApprovals(workspace, positions);
  if (context.format === 'json')
    context.jsonLine(context.stdout, 'approvals', {
      approvals: shown(
        removed,
        positions.map((position) => position + 1),
      ),
      revoked: true,
    });
  else for (const approval of removed) context.status(`Revoked: ${describeRule(approval.rule)}`);
  return 0;
}
