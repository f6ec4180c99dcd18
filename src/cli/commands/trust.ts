/**
 * `jp trust [--revoke] [--show]` (DESIGN §10): the user's decision about this workspace's
 * `.jp/config.toml` as it is now (its content hash), kept user-locally (workspace/trust-store.ts).
 * `jp trust` trusts it; `--revoke` records that it is not trusted (its settings that need trust are
 * ignored, and no run asks about this content again); `--show` prints the state and what needs trust.
 */
import { UsageError } from '../../errors.ts';
import { readRecord, recordTrustDecision } from '../../workspace/trust-store.ts';
import type { CommandContext } from '../context.ts';
import { currentTrustState, type WorkspaceConfigState } from '../../config/trust-decision.ts';
import { changedSinceTrust, describeUntrusted, fullValue, trustedKeysOf } from '../workspace-trust.ts';

type TrustState =
  | 'trusted'
  | 'not trusted'
  | 'changed since trusted'
  | 'no decision'
  | 'nothing to trust'
  | 'no config';

function stateOf(config: WorkspaceConfigState | undefined): TrustState {
  if (!config) return 'no config';
  if (config.trusted === true) return 'trusted';
  if (config.trusted === false) return 'not trusted';
  if (config.trustedBefore) return 'changed since trusted';
  return config.needingTrust.length === 0 ? 'nothing to trust' : 'no decision';
}

export async function trustCommand(
  context: CommandContext,
  options: { revoke?: boolean; show?: boolean },
): Promise<number> {
  if (options.revoke && options.show)
    throw new UsageError('flags_conflict', '--revoke and --show cannot be used together');
  const workspace = context.workspace();
  if (workspace.isDefault) {
    throw new UsageError('no_workspace', `not in a jp workspace: no .jp/ in ${context.facts.cwd} or above`, {
      hint: 'Trust is about a workspace config (.jp/config.toml); run jp trust inside the repository that has one.',
    });
  }
  const config = currentTrustState(workspace, await context.configSnapshot());

  if (options.show) {
    const state = stateOf(config);
    const record = readRecord(workspace);
    if (context.format === 'json') {
      context.jsonLine(context.stdout, 'trust', {
        workspace: workspace.root,
        config_file: workspace.configFile,
        config_sha256: config?.sha256 ?? null,
        state,
        decided_at: config?.trusted !== undefined ? (record?.decided_at ?? null) : null,
        needs_trust: (config?.needingTrust ?? []).map((key) => ({
          key: key.key,
          value: key.value,
          reason: key.reason,
          changed_since_trusted: config?.lastTrusted
            ? config.lastTrusted[key.key] !== (JSON.stringify(key.value) ?? 'null')
            : null,
        })),
      });
      return 0;
    }
    const decided =
      config?.trusted !== undefined && record ? ` (decided ${record.decided_at} by ${record.decided_by})` : '';
    const lines = [`workspace config: ${workspace.configFile}`, `state: ${state}${decided}`];
    if (config) lines.push(`sha256: ${config.sha256}`);
    if (config && config.needingTrust.length > 0) {
      lines.push(
        config.trusted === true
          ? 'settings it may use because you trust it:'
          : 'settings ignored until you trust it (`jp trust`):',
      );
      if (config.trusted !== true) {
        const changed = changedSinceTrust(config.needingTrust, config.lastTrusted);
        if (changed) lines.push(changed);
      }
      lines.push(
        ...describeUntrusted(config.needingTrust, '  ', config.trusted === true ? undefined : config.lastTrusted),
      );
    } else if (config?.trusted === true) {
      lines.push('(you trust it as it is; it has no settings that need trust)');
    }
    context.stdout.write(lines.join('\n') + '\n');
    return 0;
  }

  if (!config) {
    throw new UsageError(
      'no_workspace_config',
      `there is no workspace config to ${options.revoke ? 'revoke' : 'trust'}: ${workspace.configFile} does not exist`,
      {
        hint: 'Without one, only your own configuration applies; nothing needs trust.',
      },
    );
  }
  const changed =
    options.revoke || config.trusted === true ? undefined : changedSinceTrust(config.needingTrust, config.lastTrusted);
  recordTrustDecision(
    workspace,
    config.sha256,
    !options.revoke,
    options.revoke ? 'jp trust --revoke' : 'jp trust',
    trustedKeysOf(config.needingTrust),
  );
  const names = config.needingTrust.map((key) => `${key.key} = ${fullValue(key.value)}`).join(', ');
  if (options.revoke) {
    context.status(`Not trusted: ${workspace.configFile} as it is now.${names ? ` Ignored: ${names}.` : ''}`);
  } else {
    context.status(
      `Trusted: ${workspace.configFile} as it is now (sha256 ${config.sha256.slice(0, 12)}).` +
        `${changed ? ` ${changed[0]!.toUpperCase()}${changed.slice(1)}.` : ''}` +
        `${names ? ` Enabled: ${names}.` : ' It has no settings that need trust.'} ` +
        'A change to it, or to a workspace script it runs, needs `jp trust` again.',
    );
  }
  return 0;
}
