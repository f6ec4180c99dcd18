/**
 * Where a user's trust decision about a workspace config is kept (DESIGN §10): user-local, never in
 * `.jp/` (which travels with the repository), in `$XDG_DATA_HOME/jp/workspace/<id>/trust.json`
 * (0600, in 0700 directories). One decision per workspace, keyed by the workspace's real path and
 * the config's content hash: a changed config has no decision until its user makes one again.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { ensurePrivateDirectory, readRegularFile, writeFileAtomic } from './files.ts';
import type { Workspace } from './workspace.ts';

export interface TrustDecision {
  /** The workspace root's real path. */
  workspace: string;
  /** SHA-256 of the config file's text (configContentHash). */
  config_sha256: string;
  trusted: boolean;
  decided_at: string;
  /** `jp trust`, `jp trust --revoke`, or `prompt`. */
  decided_by: string;
  /**
   * The settings that needed trust when the user last trusted this workspace's config (dotted key
   * → JSON of its value), kept across later decisions: what a re-trust shows as changed.
   */
  trusted_keys?: Record<string, string>;
}

export function trustFile(workspace: Workspace): string {
  return path.join(workspace.userDirectory, 'trust.json');
}

/** The workspace root's real path: what a decision is about. */
export function realRoot(workspace: Workspace): string {
  try {
    return realpathSync(workspace.root);
  } catch {
    return workspace.root;
  }
}

/**
 * The decision about the workspace's config with this content hash, if its user made one. A missing,
 * unreadable or damaged record, or one about another directory or content, is no decision.
 */
export function trustDecision(workspace: Workspace, configSha256: string): TrustDecision | undefined {
  const recorded = readRecord(workspace);
  if (!recorded || recorded.workspace !== realRoot(workspace) || recorded.config_sha256 !== configSha256)
    return undefined;
  return recorded;
}

/** The last decision recorded for the workspace, whatever content it was about. */
export function readRecord(workspace: Workspace): TrustDecision | undefined {
  try {
    const content = readRegularFile(trustFile(workspace), 64 * 1024);
    if (!content) return undefined;
    const parsed = JSON.parse(content.toString('utf8')) as TrustDecision;
    if (
      typeof parsed.workspace !== 'string' ||
      typeof parsed.config_sha256 !== 'string' ||
      typeof parsed.trusted !== 'boolean'
    )
      return undefined;
    return parsed;
  } catch {
    return undefined;
  }
}

/**
 * Records the user's decision about the config with this content hash, replacing any earlier one.
 * `keys` are the settings that need trust in it (dotted key → JSON of its value): kept as
 * `trusted_keys` when it is trusted; otherwise the last trusted ones are kept.
 */
export function recordTrustDecision(
  workspace: Workspace,
  configSha256: string,
  trusted: boolean,
  decidedBy: string,
  keys: Record<string, string>,
): TrustDecision {
  const previous = readRecord(workspace);
  const trustedKeys = trusted ? keys : previous?.workspace === realRoot(workspace) ? previous.trusted_keys : undefined;
  const decision: TrustDecision = {
    workspace: realRoot(workspace),
    config_sha256: configSha256,
    trusted,
    decided_at: new Date().toISOString(),
    decided_by: decidedBy,
    ...(trustedKeys ? { trusted_keys: trustedKeys } : {}),
  };
  ensurePrivateDirectory(workspace.userDirectory);
  writeFileAtomic(trustFile(workspace), JSON.stringify(decision, null, 2) + '\n');
  return decision;
}

/** Forgets any decision about the workspace. */
export function forgetTrustDecision(workspace: Workspace): void {
  ensurePrivateDirectory(workspace.userDirectory);
  writeFileAtomic(trustFile(workspace), '{}\n');
}
