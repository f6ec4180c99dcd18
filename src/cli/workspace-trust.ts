/**
 * Deciding about the workspace config's trust (DESIGN §10), once, in the client, before a run
 * starts. The decision is the content hash the user trusts (or null); it is passed down to the
 * process that loads the configuration (RunRequest.config.trusted_workspace_sha256), which leaves
 * the trust-requiring keys out of any other content: nothing re-decides.
 *
 * A config with trust-requiring keys and no decision for its content is asked about at the
 * terminal (/dev/tty), once: yes trusts it, no records that it is not trusted (either way the
 * question is not asked again for this content; `jp trust` changes the answer). Headless runs never
 * ask: the keys are ignored and named in a warning.
 */
import { workspaceKeysNeedingTrust, type UntrustedKey, type WorkspaceTrust } from '../config/trust.ts';
import { UsageError } from '../errors.ts';
import { visible } from '../output/sanitize.ts';
import { readRecord, recordTrustDecision, trustDecision } from '../workspace/trust-store.ts';
import type { CommandContext } from './context.ts';
import { canPrompt } from './facts.ts';
import { trustHashOf } from './stored-trust.ts';
import { readConfigFile } from '../workspace/files.ts';

export interface WorkspaceConfigState {
  file: string;
  /** The trust hash: the config's text and the workspace scripts it names (workspaceTrustHash). */
  sha256: string;
  /**
   * Its keys that need trust for this user (compared with the built-in defaults and the user config,
   * as loading does; empty when its TOML does not parse: loading reports that).
   */
  needingTrust: UntrustedKey[];
  /** The user's decision about this content, if any. */
  trusted: boolean | undefined;
  /** The settings that needed trust when the user last trusted this workspace (key → JSON of its value), if ever. */
  lastTrusted: Record<string, string> | undefined;
}

/**
 * The workspace config as it is now and what its user decided about it; undefined when there is
 * none. Its keys that need trust are looked for only when that matters (not trusted), unless `allKeys`.
 */
export async function workspaceConfigState(
  context: CommandContext,
  options: { allKeys?: boolean } = {},
): Promise<WorkspaceConfigState | undefined> {
  const workspace = context.workspace();
  if (workspace.isDefault) return undefined;
  // Absent: undefined. Not a regular file, too large, unreadable: the ConfigError says which (exit 2).
  const source = readConfigFile(workspace.configFile);
  if (source === undefined) return undefined;
  const { sha256, layer } = await trustHashOf(workspace, source);
  const decision = trustDecision(workspace, sha256);
  const state: WorkspaceConfigState = {
    file: workspace.configFile,
    sha256,
    needingTrust: [],
    trusted: decision?.trusted,
    lastTrusted: readRecord(workspace)?.trusted_keys,
  };
  if ((decision?.trusted && !options.allKeys) || !layer) return state;
  const { parse } = await import('smol-toml');
  state.needingTrust = workspaceKeysNeedingTrust(layer, userLayer(context.configInputs().userFile, parse));
  return state;
}

/** The user config as a layer to compare with: {} when there is none, or it cannot be read or parsed (loading reports that). */
function userLayer(file: string | undefined, parse: (source: string) => unknown): unknown {
  if (!file) return {};
  try {
    return parse(readConfigFile(file) ?? '');
  } catch {
    return {};
  }
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
        `${indent}${visible(key, { singleLine: true, invisible: true })}  [REMOVED since you last trusted it; was ${visible(value, { singleLine: true, invisible: true })}]`,
      );
  }
  return lines;
}

/** One line saying what changed since the user last trusted this workspace's config; undefined when never, or nothing did. */
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
  return all.length > 0
    ? `changed since you last trusted it: ${all.map((key) => visible(key, { singleLine: true, invisible: true })).join(', ')}`
    : 'no setting that needs trust changed since you last trusted it (other content or a script it runs did)';
}

/** The warning a run prints when it ignores untrusted keys. */
/** Decides for a run: asks at the terminal when it may (`ask`) and the config has keys that need trust and no decision. */
export async function decideWorkspaceTrust(
  context: CommandContext,
  options: { ask: boolean },
): Promise<WorkspaceTrust> {
  const workspace = context.workspace();
  const state = await workspaceConfigState(context);
  if (!state) return { trustedSha256: null, ignored: [], file: undefined, state: 'no config' };
  if (state.trusted === true) return { trustedSha256: state.sha256, ignored: [], file: state.file, state: 'trusted' };
  const undecided = readRecord(workspace)?.trusted ? 'changed since you trusted it' : 'no decision';
  const untrusted: WorkspaceTrust = {
    trustedSha256: null,
    ignored: state.needingTrust,
    file: state.file,
    state: state.trusted === false ? 'not trusted' : undecided,
  };
  if (state.needingTrust.length === 0 || state.trusted === false || !options.ask || !canPrompt(context.facts))
    return untrusted;
  const trusted = await askForTrust(context, state);
  recordTrustDecision(workspace, state.sha256, trusted, 'prompt', trustedKeysOf(state.needingTrust));
  return trusted
    ? { trustedSha256: state.sha256, ignored: [], file: state.file, state: 'trusted' }
    : { ...untrusted, state: 'not trusted' };
}

async function askForTrust(context: CommandContext, state: WorkspaceConfigState): Promise<boolean> {
  const { TerminalPrompter } = await import('../client/prompts.ts');
  const prompter = new TerminalPrompter({ environment: context.facts.environment });
  const changed = changedSinceTrust(state.needingTrust, state.lastTrusted);
  const title = `This workspace's config ${visible(state.file, { singleLine: true, invisible: true })} has settings that need your trust${changed ? ` (${changed})` : ''}:`;
  const lines = [
    ...describeUntrusted(state.needingTrust, '  ', state.lastTrusted),
    'If not, they are ignored, in this run and the next ones (`jp trust` changes that later).',
  ];
  try {
    return await prompter.trustKey(title, lines, 'Trust this config as it is now?', new AbortController().signal);
  } catch {
    throw new UsageError('cancelled', 'cancelled: nothing was sent', {
      hint: `Review ${state.file}, then \`jp trust\` to trust it, or \`jp trust --revoke\` to run without its settings that need trust.`,
    });
  } finally {
    prompter.close();
  }
}
