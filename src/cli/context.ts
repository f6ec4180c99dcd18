/**
 * What every command gets from the composition root: the process facts, the global options, the
 * output channels, and lazy access to the workspace, the config and the logger (a command that
 * does not need them does not pay for them).
 */
import { outputLine } from '../report/envelope.ts';
import path from 'node:path';
import { readConfigFile } from '../workspace/files.ts';
import { formatErrorForHumans, type JpError } from '../errors.ts';
import type { ConfigInputs, LoadedConfig } from '../config/load.ts';
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
  readonly stdout = new SafeWriter(process.stdout);
  readonly stderr = new SafeWriter(process.stderr);
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

  /**
   * Reads safe.directories from the user config, when it has one: the TOML parser is loaded only
   * for a user config that mentions `directories`.
   */
  async loadSafeDirectories(): Promise<void> {
    const file = userConfigFile(this.facts.environment);
    let text: string | undefined;
    try {
      // Never blocks (a FIFO or a device is refused): the command that loads the config says so.
      text = readConfigFile(file);
    } catch {
      return;
    }
    if (text === undefined || !text.includes('directories')) return;
    const { safeDirectories } = await import('../config/safe-directories.ts');
    acceptOwnership(safeDirectories(file));
  }

  configInputs(flags: FlagValue[] = [], conversation?: ConfigInputs['conversation']): ConfigInputs {
    const workspace = this.launchWorkspace ? this.workspace() : undefined;
    return {
      userFile: userConfigFile(this.facts.environment),
      workspaceFile: workspace === undefined || workspace.isDefault ? undefined : workspace.configFile,
      environment: this.facts.environment,
      ...(conversation ? { conversation } : {}),
      cfgArguments: this.globals.cfg,
      flags,
    };
  }

  /** Loads and validates the configuration; the schema is imported only by commands that need it. */
  async config(flags: FlagValue[] = [], conversation?: ConfigInputs['conversation']): Promise<LoadedConfig> {
    const { loadConfig } = await import('../config/load.ts');
    const { storedTrust } = await import('./stored-trust.ts');
    // Commands other than `jp query` never ask about trust: they go by what the user decided.
    return loadConfig({
      ...this.configInputs(flags, conversation),
      trustedWorkspaceSha256: await storedTrust(this.workspace()),
    });
  }

  /** `ui.theme` from the configuration; undefined when unset or when the configuration cannot be read (the run reports that). */
  async configuredTheme(): Promise<'dark' | 'light' | undefined> {
    try {
      return (await this.config()).value.ui?.theme;
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
   * Registers the secrets this process can know of (clientSecretVariables) before it writes anything
   * that may quote one; the TOML parser is loaded only then.
   */
  registerSecrets(): Promise<void> {
    this.secretsRegistered ??= import('./secret-variables.ts').then(
      ({ clientSecretVariables, clientMcpEnvironments, clientMcpHeaders }) => {
        this.secrets.add(this.facts.environment, clientSecretVariables(this.configInputs()));
        for (const environment of clientMcpEnvironments(this.configInputs())) this.secrets.addNamed(environment);
        for (const headers of clientMcpHeaders(this.configInputs())) this.secrets.addHeaders(headers);
      },
    );
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
