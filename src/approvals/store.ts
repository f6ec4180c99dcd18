/**
 * The user's lasting approvals for a workspace (inquiry/approval-rule.ts, rules.ts): user-local, never in
 * `.jp/` (which travels with the repository), in `$XDG_DATA_HOME/jp/workspace/<id>/approvals.json`
 * (0600, in 0700 directories; a directory commands jp sandboxes cannot see, and outside the
 * workspace the file tools are confined to). Only a person's answer at a prompt adds a rule (the
 * run writes what its prompting client answered); `jp approvals` lists and revokes them. A missing,
 * unreadable or damaged file holds no rule (and a damaged one is never overwritten by a read).
 */
import path from 'node:path';
import { type ApprovalRule, parseApprovalRule } from '../inquiry/approval-rule.ts';
import { ensurePrivateDirectory, readRegularFile, writeFileAtomic } from '../workspace/files.ts';
import type { Workspace } from '../workspace/workspace.ts';

export interface StoredApproval {
  rule: ApprovalRule;
  /** When the user approved it (ISO 8601). */
  approved_at: string;
}

export function approvalsFile(workspace: Pick<Workspace, 'userDirectory'>): string {
  return path.join(workspace.userDirectory, 'approvals.json');
}

/** The workspace's approvals, oldest first; entries that do not read as a rule are skipped. */
export function readApprovals(workspace: Pick<Workspace, 'userDirectory'>): StoredApproval[] {
  let parsed: unknown;
  try {
    const content = readRegularFile(approvalsFile(workspace), 1024 * 1024);
    if (!content) return [];
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    return [];
  }
  const entries = (parsed as { approvals?: unknown } | null)?.approvals;
  if (!Array.isArray(entries)) return [];
  return entries.flatMap((entry: { rule?: unknown; approved_at?: unknown }) => {
    const rule = parseApprovalRule(entry?.rule);
    return rule ? [{ rule, approved_at: typeof entry.approved_at === 'string' ? entry.approved_at : '' }] : [];
  });
}

function writeApprovals(workspace: Pick<Workspace, 'userDirectory'>, approvals: StoredApproval[]): void {
  ensurePrivateDirectory(workspace.userDirectory);
  writeFileAtomic(approvalsFile(workspace), `${JSON.stringify({ version: 1, approvals }, null, 2)}\n`);
}

/** Adds `rule` (once: an equal rule already kept is left as it is). */
export function addApproval(workspace: Pick<Workspace, 'userDirectory'>, rule: ApprovalRule): void {
  const approvals = readApprovals(workspace);
  if (approvals.some((kept) => JSON.stringify(kept.rule) === JSON.stringify(rule))) return;
  writeApprovals(workspace, [...approvals, { rule, approved_at: new Date().toISOString() }]);
}

/** Removes the approvals at these 0-based positions (of readApprovals' list); returns those removed. */
export function revokeApprovals(
  workspace: Pick<Workspace, 'userDirectory'>,
  positions: readonly number[],
): StoredApproval[] {
  const approvals = readApprovals(workspace);
  const removed = approvals.filter((_, index) => positions.includes(index));
  if (removed.length > 0)
    writeApprovals(
      workspace,
      approvals.filter((_, index) => !positions.includes(index)),
    );
  return removed;
}
