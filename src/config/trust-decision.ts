/**
 * The decision about the workspace config's trust (DESIGN §10), made once by the client before a
 * run starts, as a pure function of what is known: the workspace config of the process's snapshot
 * (its trust hash, and its keys that need trust for this user) and the user's recorded decision
 * (workspace/trust-store.ts), gathered by currentTrustState, the one reader of both here and in
 * `jp trust`. It says which hash the run trusts, or that the user must be asked
 * (the prompt is the client's: cli/workspace-trust.ts). The process that loads the configuration
 * goes by the decision (RunRequest.config.trusted_workspace_sha256), never re-deciding.
 */
import { readRecord, realRoot, type TrustDecision as RecordedDecision } from '../workspace/trust-store.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { ConfigSnapshot } from './snapshot.ts';
import { workspaceKeysNeedingTrust, type UntrustedKey, type WorkspaceTrust } from './trust.ts';

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
  /** The user trusted this workspace's config before, as it was then (the last decision trusts other content). */
  trustedBefore: boolean;
  /** The settings that needed trust when the user last trusted this workspace (key → JSON of its value), if ever. */
  lastTrusted: Record<string, string> | undefined;
}

/**
 * The workspace config of `snapshot` and what its user decided about it; undefined when there is
 * none. `record` is the last decision recorded for the workspace (whatever content it was about),
 * `realRoot` the workspace root's real path, which a decision must be about.
 */
export function workspaceConfigState(
  snapshot: ConfigSnapshot,
  record: RecordedDecision | undefined,
  realRoot: string,
): WorkspaceConfigState | undefined {
  const workspace = snapshot.workspace;
  if (!workspace) return undefined;
  const layer = workspace.file.tableIfValid();
  const aboutThis = record?.workspace === realRoot && record.config_sha256 === workspace.trustSha256;
  return {
    file: workspace.file.path,
    sha256: workspace.trustSha256,
    needingTrust: layer ? workspaceKeysNeedingTrust(layer, snapshot.user.tableIfValid() ?? {}) : [],
    trusted: aboutThis ? record.trusted : undefined,
    trustedBefore: record?.trusted === true,
    lastTrusted: record?.trusted_keys,
  };
}

/** The workspace config of `snapshot` as it is now and what its user decided about it; undefined when there is none. */
export function currentTrustState(workspace: Workspace, snapshot: ConfigSnapshot): WorkspaceConfigState | undefined {
  if (workspace.isDefault) return undefined;
  return workspaceConfigState(snapshot, readRecord(workspace), realRoot(workspace));
}

export type TrustVerdict =
  /** Decided: the run goes by `trust`. */
  | { ask: false; trust: WorkspaceTrust }
  /** The user must say, at the terminal: the run goes by `ifTrusted` or `ifNot` (and the answer is recorded). */
  | { ask: true; state: WorkspaceConfigState; ifTrusted: WorkspaceTrust; ifNot: WorkspaceTrust };

/**
 * What a run goes by. A config with keys that need trust and no decision for its content is asked
 * about when the user can be asked (`mayAsk`); otherwise (and headless, always) those keys are
 * left out, and named.
 */
export function decideWorkspaceTrust(
  state: WorkspaceConfigState | undefined,
  options: { mayAsk: boolean },
): TrustVerdict {
  if (!state) return { ask: false, trust: { trustedSha256: null, ignored: [], file: undefined, state: 'no config' } };
  const trusted: WorkspaceTrust = { trustedSha256: state.sha256, ignored: [], file: state.file, state: 'trusted' };
  if (state.trusted === true) return { ask: false, trust: trusted };
  const untrusted: WorkspaceTrust = {
    trustedSha256: null,
    ignored: state.needingTrust,
    file: state.file,
    state:
      state.trusted === false ? 'not trusted' : state.trustedBefore ? 'changed since you trusted it' : 'no decision',
  };
  if (state.needingTrust.length === 0 || state.trusted === false || !options.mayAsk)
    return { ask: false, trust: untrusted };
  return { ask: true, state, ifTrusted: trusted, ifNot: { ...untrusted, state: 'not trusted' } };
}
