/**
 * The configuration files as one process read them: each file is read once (readConfigSnapshot, in
 * the client) and parsed at most once, and everything the configuration decides is derived from
 * this one snapshot: the safe directories, the workspace config's trust hash, the client's secret
 * variables, the theme and the merged configuration (load.ts). The client hands the snapshot to the
 * process that runs the turn with the run request (`toWire`, `fromWire`), so a query server reads no
 * config file at all and both processes go by the same text.
 */
import { parse as parseToml, TomlError } from 'smol-toml';
import { ConfigError } from '../errors.ts';
import type { ConfigFilesWire } from '../protocol/run-request.ts';
import { readConfigFile } from '../workspace/files.ts';
import type { Table } from './cascade.ts';
import { workspaceScripts, workspaceTrustHash } from './trust.ts';

type Parsed = { ok: true; table: Table } | { ok: false; error: ConfigError };

/** One config file as read: its path, and its text (undefined: there is no file). */
export class ConfigFile<Text extends string | undefined = string | undefined> {
  private parsed: Parsed | undefined;

  constructor(
    readonly path: string,
    readonly text: Text,
  ) {}

  /** The file's table; undefined when there is no file. Invalid TOML is a ConfigError naming the line and column. */
  table(): Table | undefined {
    if (this.text === undefined) return undefined;
    this.parsed ??= parseFile(this.path, this.text);
    if (!this.parsed.ok) throw this.parsed.error;
    return this.parsed.table;
  }

  /** The file's table, or undefined when there is none or it is not TOML (what loading reports, others skip). */
  tableIfValid(): Table | undefined {
    try {
      return this.table();
    } catch {
      return undefined;
    }
  }
}

/** The workspace config, with the hash its trust is keyed by. */
export interface WorkspaceConfig {
  file: ConfigFile<string>;
  /** Its text and the workspace scripts it names (workspaceTrustHash), hashed when it was read. */
  trustSha256: string;
}

export class ConfigSnapshot {
  constructor(
    /** `$XDG_CONFIG_HOME/jp/config.toml`, read or found absent. */
    readonly user: ConfigFile,
    /** `<workspace>/.jp/config.toml`; undefined when the workspace has none (or there is no workspace). */
    readonly workspace: WorkspaceConfig | undefined,
  ) {}

  toWire(): ConfigFilesWire {
    return {
      user: { path: this.user.path, text: this.user.text ?? null },
      workspace: this.workspace
        ? { path: this.workspace.file.path, text: this.workspace.file.text, trust_sha256: this.workspace.trustSha256 }
        : null,
    };
  }

  static fromWire(wire: ConfigFilesWire): ConfigSnapshot {
    return new ConfigSnapshot(
      new ConfigFile(wire.user.path, wire.user.text ?? undefined),
      wire.workspace
        ? {
            file: new ConfigFile(wire.workspace.path, wire.workspace.text),
            trustSha256: wire.workspace.trust_sha256,
          }
        : undefined,
    );
  }
}

/** A config file read now: a file that is not a regular file or is too large is a ConfigError (readConfigFile). */
export function readConfigFileAt(path: string): ConfigFile {
  return new ConfigFile(path, readConfigFile(path));
}

/**
 * The snapshot of this process: the user config (read already, to learn the safe directories
 * before the workspace was resolved) and the workspace config, read now and hashed with the
 * scripts it names.
 */
export function readConfigSnapshot(
  user: ConfigFile,
  workspace: { file: string; root: string } | undefined,
): ConfigSnapshot {
  const text = workspace ? readConfigFile(workspace.file) : undefined;
  if (!workspace || text === undefined) return new ConfigSnapshot(user, undefined);
  const file = new ConfigFile(workspace.file, text);
  // Parsed here for the scripts it names (and kept parsed); a text that is not TOML is hashed alone: loading says why.
  const table = file.tableIfValid();
  const trustSha256 = workspaceTrustHash(text, table ? workspaceScripts(table, workspace.root) : [], workspace.root);
  return new ConfigSnapshot(user, { file, trustSha256 });
}

function parseFile(file: string, source: string): Parsed {
  try {
    return { ok: true, table: parseToml(source) as Table };
  } catch (error) {
    if (error instanceof TomlError) {
      const firstLine = error.message.split('\n')[0] ?? 'invalid TOML';
      return {
        ok: false,
        error: new ConfigError(`${file}:${error.line}:${error.column}: invalid TOML: ${firstLine}`, {
          hint: 'Fix the syntax at that line; nothing was written.',
        }),
      };
    }
    throw error;
  }
}
