/**
 * What every command gets from the composition root: the process facts, the global options, the
 * output channels, and lazy access to the workspace, the config and the logger (a command that
 * does not need them does not pay for them). The config files are read once per process (the user
 * config first, for its safe directories, before the workspace is resolved) into one snapshot
 * (config/snapshot.ts), from which everything the configuration decides here is derived.
 */
import { outputLine } from '../report/envelope.ts';
import path from 'node:path';
import { readConfigFile } from '../workspace/files.ts';
import { formatErrorForHumans, type JpError } from '../errors.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { ConfigInputs } from '../config/layers.ts';
import type { ConfigFile, ConfigSnapshot } from '../config/snapshot.ts';
import type { WorkspaceTrust } from '../config/trust.ts';
import { userConfigFile } from '../config/paths.ts';
import { Secrets } from '../redact.ts';
import { visible } from '../output/sanitize.ts';
import { resolveFormat, SafeWriter, type OutputFormat } from '../output/channels.ts';
import { createLogger, defaultLogFile, type Logger, type LogSettings } from '../output/logger.ts';
import { dataHome, resolveWorkspace, type Workspace } from '../workspace/workspace.ts';
import { acceptOwnership, skippedWorkspaceWarning } from '../workspace/ownership.ts';
import type { Facts } from './facts.ts';
import type { GlobalOptions } from './global-options.ts';

export type FlagValue = ConfigInputs['flags'][number];

export interface ContextOptions {
  /**
   * False for `jp acp`: its working directory is nobody's workspace (each session names its own),
   * so nothing of this context reads one: not its secrets, not its config.
   */
  launchWorkspace?: boolean;
}

export class CommandContext {
  readonly facts: Facts;
  readonly globals: GlobalOptions;
  readonly stdout = SafeWriter.of(process.stdout);
  readonly stderr = SafeWriter.of(process.stderr);
  readonly format: OutputFormat;
  /** This process's secrets: registered before anything is written that may quote one (registerSecrets). */
  readonly secrets: Secrets;
  private cachedWorkspace: Workspace | undefined;
  private cachedLogger: Promise<Logger> | undefined;
  private readonly launchWorkspace: boolean;

  /** `secrets`: the process's, when this context is one more of it (an editor's session under `jp acp`). */
  constructor(facts: Facts, globals: GlobalOptions, secrets = new Secrets(), options: ContextOptions = {}) {
    this.facts = facts;
    this.globals = globals;
    this.secrets = secrets;
    this.launchWorkspace = options.launchWorkspace ?? true;
    this.format = resolveFormat(globals.format, facts.stdoutIsTerminal);
  }

  /**
   * The workspace of the working directory. One another user could write (ownership.ts) is passed
   * over, with one warning naming it, unless the user's safe.directories accepts it (loaded by
   * loadSafeDirectories before any command); jp goes on as if it were not there.
   */
  workspace(): Workspace {
    if (this.cachedWorkspace) return this.cachedWorkspace;
    if (!this.launchWorkspace)
      throw new Error('this command has no workspace of its own (each of its sessions has one)');
    const workspace = resolveWorkspace(this.facts.cwd, this.facts.environment);
    for (const skipped of workspace.skipped) this.warn(skippedWorkspaceWarning(skipped));
    this.cachedWorkspace = workspace;
    return workspace;
  }

  /** The user config's text, read once (the read's error is the config's: thrown where it is loaded). */
  private userConfigRead: { text: string | undefined } | { error: unknown } | undefined;
  private userConfig: Promise<ConfigFile> | undefined;
  private snapshot: Promise<ConfigSnapshot> | undefined;

  private userConfigText(): { text: string | undefined } | { error: unknown } {
    if (this.userConfigRead) return this.userConfigRead;
    try {
      // Never blocks (a FIFO or a device is refused): the command that loads the config says so.
      this.userConfigRead = { text: readConfigFile(userConfigFile(this.facts.environment)) };
    } catch (error) {
      this.userConfigRead = { error };
    }
    return this.userConfigRead;
  }

  /** The user config file, read once; its parser is loaded only by what needs it. */
  private userConfigOnce(): Promise<ConfigFile> {
    this.userConfig ??= import('../config/snapshot.ts').then(({ ConfigFile }) => {
      const read = this.userConfigText();
      if ('error' in read) throw read.error;
      return new ConfigFile(userConfigFile(this.facts.environment), read.text);
    });
    return this.userConfig;
  }

  /**
   * Accepts the workspace roots of the user config's safe.directories (before any command resolves
   * its workspace): the TOML parser is loaded only for a user config that mentions `directories`.
   */
  async loadSafeDirectories(): Promise<void> {
    const read = this.userConfigText();
    if (!('text' in read) || !read.text?.includes('directories')) return;
    const [{ safeDirectories }, file] = await Promise.all([
      import('../config/safe-directories.ts'),
      this.userConfigOnce(),
    ]);
    acceptOwnership(safeDirectories(file));
  }

  /** This process's config snapshot: the user config and the workspace's, each read once. */
  configSnapshot(): Promise<ConfigSnapshot> {
    this.snapshot ??= Promise.all([import('../config/snapshot.ts'), this.userConfigOnce()]).then(
      ([{ readConfigSnapshot }, user]) => {
        const workspace = this.launchWorkspace ? this.workspace() : undefined;
        return readConfigSnapshot(
          user,
          workspace === undefined || workspace.isDefault
            ? undefined
            : { file: workspace.configFile, root: workspace.root },
        );
      },
    );
    return this.snapshot;
  }

  /** What loading this process's configuration goes by, but for the trust decision. */
  async configInputs(flags: FlagValue[] = [], conversation?: ConfigInputs['conversation']): Promise<ConfigInputs> {
    return {
      snapshot: await this.configSnapshot(),
      environment: this.facts.environment,
      ...(conversation ? { conversation } : {}),
      cfgArguments: this.globals.cfg,
      flags,
    };
  }

  private trust: Promise<WorkspaceTrust> | undefined;

  /** The trust the user decided for this process's workspace config, never asked (only a run asks: query.ts). */
  decidedTrust(): Promise<WorkspaceTrust> {
    this.trust ??= Promise.all([import('./workspace-trust.ts'), this.configSnapshot()]).then(
      ([{ settleWorkspaceTrust }, snapshot]) =>
        settleWorkspaceTrust(this.workspace(), snapshot, { mayAsk: false, environment: this.facts.environment }),
    );
    return this.trust;
  }

  /**
   * Loads and validates the configuration, with the trust the user decided; the schema is imported
   * only by commands that need it.
   */
  async config(flags: FlagValue[] = [], conversation?: ConfigInputs['conversation']): Promise<LoadedConfig> {
    const [{ loadConfig }, trust, inputs] = await Promise.all([
      import('../config/load.ts'),
      this.decidedTrust(),
      this.configInputs(flags, conversation),
    ]);
    return loadConfig({ ...inputs, trustedWorkspaceSha256: trust.trustedSha256 });
  }

  /**
   * `ui.theme` from the configuration's layers; undefined when none sets it or the files cannot be
   * read (the run reports that).
   */
  async configuredTheme(): Promise<'dark' | 'light' | undefined> {
    try {
      const [{ configuredTheme }, inputs] = await Promise.all([import('../config/theme.ts'), this.configInputs()]);
      return configuredTheme(inputs);
    } catch {
      return undefined;
    }
  }

  logSettings(): LogSettings {
    const chosen = this.globals.logFile ?? this.facts.environment.JP_LOG_FILE;
    return {
      verbosity: this.globals.verbosity,
      // Absolute: a query server does not run in the user's directory.
      file:
        chosen === undefined
          ? defaultLogFile(dataHome(this.facts.environment))
          : chosen === '-'
            ? chosen
            : path.resolve(this.facts.cwd, chosen),
      format: this.globals.logFormat,
      isDefaultFile: chosen === undefined,
    };
  }

  logger(): Promise<Logger> {
    this.cachedLogger ??= this.registerSecrets().then(() =>
      createLogger(this.logSettings(), this.secrets, { role: 'client' }),
    );
    return this.cachedLogger;
  }

  private secretsRegistered: Promise<void> | undefined;

  /**
   * Registers the secrets this process can know of (clientSecrets, from the config snapshot)
   * before it writes anything that may quote one.
   */
  registerSecrets(): Promise<void> {
    this.secretsRegistered ??= import('./secret-variables.ts').then(async ({ clientSecrets }) => {
      let inputs: ConfigInputs | undefined;
      try {
        inputs = await this.configInputs();
      } catch {
        // A config that cannot be read (the command that loads it says why) adds nothing; the user
        // config still counts when only the workspace's failed.
        try {
          const { ConfigSnapshot } = await import('../config/snapshot.ts');
          const snapshot = new ConfigSnapshot(await this.userConfigOnce(), undefined);
          inputs = { snapshot, environment: this.facts.environment, cfgArguments: this.globals.cfg, flags: [] };
        } catch {
          // the provider keys only
        }
      }
      const found = clientSecrets(inputs);
      this.secrets.add(this.facts.environment, found.variables);
      for (const environment of found.environments) this.secrets.addNamed(environment);
      for (const headers of found.headers) this.secrets.addHeaders(headers);
    });
    return this.secretsRegistered;
  }

  /** A warning on stderr, in the output format; shown even with --quiet. */
  warn(message: string): void {
    if (this.format === 'json') this.jsonLine(this.stderr, 'warning', { message });
    else this.stderr.write(`jp: warning: ${visible(message)}\n`);
  }

  /** One chrome line on stderr, in the output format. */
  status(message: string): void {
    if (this.globals.quiet) return;
    if (this.format === 'json') this.jsonLine(this.stderr, 'status', { message });
    else this.stderr.write(visible(message) + '\n');
  }

  jsonLine(
    target: SafeWriter,
    type: string,
    fields: Record<string, unknown>,
    conversationId: string | null = null,
  ): void {
    target.write(outputLine(type, fields, conversationId));
  }

  /** Reports an error on stderr in the output format; returns its exit code. */
  reportError(error: JpError, conversationId: string | null = null): number {
    if (this.format === 'json') {
      this.jsonLine(
        this.stderr,
        'error',
        {
          code: error.code,
          message: error.message,
          ...(error.hint ? { hint: error.hint } : {}),
          exit_code: error.exitCode,
        },
        conversationId,
      );
    } else {
      // An error may quote what a provider, a tool or a file said: shown visibly, never obeyed.
      this.stderr.write(visible(formatErrorForHumans(error)) + '\n');
    }
    return error.exitCode;
  }
}
