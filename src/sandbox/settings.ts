/**
 * What the command sandbox is for one run (DESIGN §10): `[sandbox]` resolved from the merged
 * config, each value with the key and layer that set it, and the one-line description the tool
 * header, `config show --effective` and the system prompt use.
 */
import type { Config } from '../config/schema.ts';
import type { LoadedConfig } from '../config/load.ts';
import { credentialPaths } from './credentials.ts';

export const sandboxModes = ['workspace-write', 'read-only', 'off'] as const;
export type SandboxMode = (typeof sandboxModes)[number];

export interface SandboxSettings {
  mode: SandboxMode;
  /** The network is reachable from inside (off by default). */
  network: boolean;
  /** Directories writable besides the workspace (workspace-write only), as configured. */
  writableRoots: string[];
  /** Paths hidden besides the built-in list, as configured. */
  hiddenPaths: string[];
  /** All of the home directory is hidden but the workspace, writable and readable roots. */
  hideHome: boolean;
  /** With hideHome: directories shown read-only, as configured. */
  readableRoots: string[];
  /** `sandbox.bwrap_path`: the bubblewrap program the user named, instead of the system paths. */
  bwrapPath: string | undefined;
}

/** The user's credentials no sandboxed command may see, relative to the home directory (credentials.ts). */
export const builtinHiddenPaths: readonly string[] = credentialPaths;

export function sandboxSettingsOf(config: Config): SandboxSettings {
  const table = config.sandbox ?? {};
  return {
    mode: table.mode ?? 'workspace-write',
    network: table.network ?? false,
    writableRoots: table.writable_roots ?? [],
    hiddenPaths: table.hidden_paths ?? [],
    hideHome: table.hide_home ?? false,
    readableRoots: table.readable_roots ?? [],
    bwrapPath: table.bwrap_path,
  };
}

/** `workspace-write, no network`, `read-only, network`, `off`. */
export function describeSandboxSettings(settings: SandboxSettings): string {
  if (settings.mode === 'off') return 'off';
  return `${settings.mode}, ${settings.network ? 'network' : 'no network'}${settings.hideHome ? ', home hidden' : ''}`;
}

/**
 * The effective sandbox of a config in one sentence, for the model's system prompt: what commands
 * may write and reach, and how to leave the sandbox.
 */
export function describeSandboxForModel(config: Config): string {
  const settings = sandboxSettingsOf(config);
  if (settings.mode === 'off') return 'Commands run without a sandbox (sandbox.mode = "off").';
  const writes =
    settings.mode === 'read-only'
      ? 'nothing is writable but $TMPDIR'
      : `the workspace is writable except .jp/ and what git runs (.git/config, .git/hooks, .git/info; commits ` +
        `work)${settings.writableRoots.length > 0 ? `, and so are ${settings.writableRoots.join(', ')}` : ''}; ` +
        `$TMPDIR is a private writable directory; everything else is read-only`;
  return (
    `Commands (run_command, local tools) run in a sandbox (${describeSandboxSettings(settings)}): ${writes}; ` +
    `the network is ${settings.network ? 'reachable' : 'off'}; the user's credentials (~/.ssh, git, cloud and ` +
    `registry logins, histories) and jp's own state are not visible. ` +
    'When a command needs more, call run_command again with "escalate": true and a "justification"; a human decides.'
  );
}

/** The lines of `jp config show --effective <tool>` for a tool whose commands are sandboxed. */
export function describeEffectiveSandbox(loaded: LoadedConfig): string[] {
  const settings = sandboxSettingsOf(loaded.value);
  const source = (key: string): string => {
    const layer = loaded.sources.get(key);
    return layer ? `set by ${key} (${layer.label})` : 'set by built-in (built-in default)';
  };
  const lines = [`  sandbox               = ${describeSandboxSettings(settings)}`];
  lines.push(`  sandbox.mode          = ${settings.mode.padEnd(10)} ${source('sandbox.mode')}`);
  lines.push(`  sandbox.network       = ${String(settings.network).padEnd(10)} ${source('sandbox.network')}`);
  lines.push(
    `  sandbox.writable_roots = ${JSON.stringify(settings.writableRoots)} ${source('sandbox.writable_roots')}`,
  );
  if (settings.hideHome)
    lines.push(
      `  sandbox.hide_home     = true       ${source('sandbox.hide_home')}`,
      `  sandbox.readable_roots = ${JSON.stringify(settings.readableRoots)} ${source('sandbox.readable_roots')}`,
    );
  lines.push(
    `  sandbox.hidden_paths  = ${JSON.stringify(settings.hiddenPaths)} (besides ${builtinHiddenPaths.length} ` +
      `built-in credential paths, shell histories and jp's own directories) ${source('sandbox.hidden_paths')}`,
  );
  return lines;
}
