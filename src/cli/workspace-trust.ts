/**
 * The trust prompt (DESIGN §10): the decision is config/trust-decision.ts's, made on the process's
 * config snapshot and the user's recorded decision; when it says the user must be asked, this asks
 * at the terminal (/dev/tty), once, and records the answer: yes trusts the config as it is, no
 * records that it is not trusted (either way the question is not asked again for this content;
 * `jp trust` changes the answer). Headless runs never ask. Also the words that show untrusted keys,
 * here and in `jp trust`.
 */
import type { ConfigSnapshot } from '../config/snapshot.ts';
import type { UntrustedKey, WorkspaceTrust } from '../config/trust.ts';
import { currentTrustState, decideWorkspaceTrust, type WorkspaceConfigState } from '../config/trust-decision.ts';
import { UsageError } from '../errors.ts';
import { visible } from '../output/sanitize.ts';
import { recordTrustDecision } from '../workspace/trust-store.ts';
import type { Workspace } from '../workspace/workspace.ts';

/**
 * What a run goes by: the decision about the snapshot's workspace config, after asking at the
 * terminal when it says to (`mayAsk`: the user can be asked now).
 */
export async function settleWorkspaceTrust(
  workspace: Workspace,
  snapshot: ConfigSnapshot,
  options: { mayAsk: boolean; environment: NodeJS.ProcessEnv },
): Promise<WorkspaceTrust> {
  const verdict = decideWorkspaceTrust(currentTrustState(workspace, snapshot), { mayAsk: options.mayAsk });
  if (!verdict.ask) return verdict.trust;
  const trusted = await askForTrust(verdict.state, options.environment);
  recordTrustDecision(workspace, verdict.state.sha256, trusted, 'prompt', trustedKeysOf(verdict.state.needingTrust));
  return trusted ? verdict.ifTrusted : verdict.ifNot;
}

/** A value as the user must see it to decide: whole (never cut), on one line, control characters shown visibly. */
export function fullValue(value: unknown): string {
  return visible(JSON.stringify(value) ?? String(value), { singleLine: true, invisible: true });
}

/** The settings as recorded with a trust decision: dotted key → JSON of its value. */
export function trustedKeysOf(keys: readonly UntrustedKey[]): Record<string, string> {
  return Object.fromEntries(keys.map((key) => [key.key, JSON.stringify(key.value) ?? 'null']));
}

/**
 * The lines that show untrusted keys: each key with its whole value, why it needs trust, and, when
 * the user trusted this workspace before (`lastTrusted`), whether it is new or changed since; keys
 * trusted then and gone now are listed as removed.
 */
export function describeUntrusted(
  keys: readonly UntrustedKey[],
  indent = '  ',
  lastTrusted?: Record<string, string>,
): string[] {
  const lines: string[] = [];
  for (const key of keys) {
    const recorded = lastTrusted?.[key.key];
    const mark =
      lastTrusted === undefined
        ? ''
        : recorded === undefined
          ? '  [NEW since you last trusted it]'
          : recorded !== (JSON.stringify(key.value) ?? 'null')
            ? '  [CHANGED since you last trusted it]'
            : '';
    lines.push(`${indent}${visible(key.key, { singleLine: true, invisible: true })} = ${fullValue(key.value)}${mark}`);
    if (recorded !== undefined && mark !== '')
      lines.push(`${indent}    was: ${visible(recorded, { singleLine: true, invisible: true })}`);
    lines.push(`${indent}    (${key.reason})`);
  }
  const current = new Set(keys.map((key) => key.key));
  for (const [key, value] of Object.entries(lastTrusted ?? {})) {
    if (!current.has(key))
      lines.push(
        `${indent}${visible(key, { singleLine: true, invisible: true })}  [REMOVED since you last trusted it; ` +
          `was ${visible(value, { singleLine: true, invisible: true })}]`,
      );
  }
  return lines;
}

/**
 * One line saying what changed since the user last trusted this workspace's config; undefined when
 * never, or nothing did.
 */
export function changedSinceTrust(
  keys: readonly UntrustedKey[],
  lastTrusted: Record<string, string> | undefined,
): string | undefined {
  if (!lastTrusted) return undefined;
  const changed = keys
    .filter((key) => lastTrusted[key.key] !== (JSON.stringify(key.value) ?? 'null'))
    .map((key) => key.key);
  const removed = Object.keys(lastTrusted).filter((key) => !keys.some((entry) => entry.key === key));
  const all = [...changed, ...removed];
  const names = all.map((key) => visible(key, { singleLine: true, invisible: true })).join(', ');
  return all.length > 0
    ? `changed since you last trusted it: ${names}`
    : 'no setting that needs trust changed since you last trusted it (other content or a script it runs did)';
}

/** Asks at the terminal; the question is built before the terminal is opened (nothing is left open if that fails). */
async function askForTrust(state: WorkspaceConfigState, environment: NodeJS.ProcessEnv): Promise<boolean> {
  const changed = changedSinceTrust(state.needingTrust, state.lastTrusted);
  const title =
    `This workspace's config ${visible(state.file, { singleLine: true, invisible: true })} ` +
    `has settings that need your trust${changed ? ` (${changed})` : ''}:`;
  const lines = [
    ...describeUntrusted(state.needingTrust, '  ', state.lastTrusted),
    'If not, they are ignored, in this run and the next ones (`jp trust` changes that later).',
  ];
  const { TerminalPrompter } = await import('../client/prompts.ts');
  const prompter = new TerminalPrompter({ environment });
  try {
    return await prompter.trustKey(title, lines, 'Trust this config as it is now?', new AbortController().signal);
  } catch {
    throw new UsageError('cancelled', 'cancelled: nothing was sent', {
      hint:
        `Review ${state.file}, then \`jp trust\` to trust it, ` +
        `or \`jp trust --revoke\` to run without its settings that need trust.`,
    });
  } finally {
    prompter.close();
  }
}
