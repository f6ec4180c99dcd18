/**
 * The configuration cascade (DESIGN §3), later layers win:
 * built-in defaults → user file → workspace file → JP_CFG_* environment → --cfg → flags.
 * Every layer is validated on its own so an error names where it came from. Loading never writes.
 * The keys of the workspace file that need trust (trust.ts) are left out unless the caller trusts
 * that file's content (`trustedWorkspaceSha256`); they are listed in `ignored`.
 */
import { isTable, mergeTables } from './merge.ts';
import { readConfigFile } from '../workspace/files.ts';
import { parse as parseToml, TomlError } from 'smol-toml';
import { ConfigError } from '../errors.ts';
import { locateKey } from './locate.ts';
import { didYouMean } from './suggest.ts';
import path from 'node:path';
import { builtinDefaults } from './defaults.ts';
import { configSchema, hookEventNames, type Config } from './schema.ts';
import {
  withoutKeys,
  workspaceKeysNeedingTrust,
  workspaceScripts,
  workspaceTrustHash,
  type UntrustedKey,
} from './trust.ts';

export type LayerKind = 'default' | 'user' | 'workspace' | 'env' | 'conversation' | 'cfg' | 'flag';

export interface Layer {
  kind: LayerKind;
  /** Where it came from, for messages: a file path, `JP_CFG_X`, `--cfg a.b=c`, `--model`. */
  label: string;
  value: Record<string, unknown>;
  /** A flag that holds for this run only: never recorded in the conversation (commandLineOverrides). */
  unrecorded?: true;
}

export interface IgnoredKey extends UntrustedKey {
  /** `<file>:<line>` of the key. */
  where: string;
}

export interface LoadedConfig {
  value: Config;
  /** For every leaf key path (dotted), the layer that set it. */
  sources: Map<string, Layer>;
  layers: Layer[];
  /** Keys of an untrusted workspace config that were left out. */
  ignored: IgnoredKey[];
  /** The workspace config file that was read, with its content hash, if there is one. */
  workspace: { file: string; sha256: string; trusted: boolean } | undefined;
}

export interface ConfigInputs {
  /** `$XDG_CONFIG_HOME/jp/config.toml`; skipped when absent. */
  userFile: string | undefined;
  /** `<workspace>/.jp/config.toml`; skipped when absent. */
  workspaceFile: string | undefined;
  environment: NodeJS.ProcessEnv;
  /** Overrides recorded in the conversation (its config_delta events), with the conversation id. */
  conversation?: { id: string; delta: Record<string, unknown> };
  /** Raw `--cfg KEY=VALUE` arguments in command-line order. */
  cfgArguments: string[];
  /**
   * Values set by dedicated flags (`--model` ...), each with the flag that set it. `recorded: false`:
   * a setting of the client's session (an editor's mode), not of the conversation: not recorded in it.
   */
  flags: { label: string; path: string[]; value: unknown; recorded?: boolean | undefined }[];
  /**
   * The trust hash (workspaceTrustHash: its text and the workspace scripts it names) of the workspace config its user trusts, decided once by
   * the client (src/cli/workspace-trust.ts) and passed down; null or absent: not trusted.
   */
  trustedWorkspaceSha256?: string | null;
}

export const environmentPrefix = 'JP_CFG_';

export function loadConfig(inputs: ConfigInputs): LoadedConfig {
  const layers: Layer[] = [
    { kind: 'default', label: 'built-in default', value: builtinDefaults as Record<string, unknown> },
  ];
  let ignored: IgnoredKey[] = [];
  let workspace: LoadedConfig['workspace'];
  for (const [kind, file] of [
    ['user', inputs.userFile],
    ['workspace', inputs.workspaceFile],
  ] as const) {
    if (!file) continue;
    const source = readConfigFile(file);
    if (source === undefined) continue;
    let value = parseFile(file, source);
    const where = (keyPath: readonly string[]): string => {
      const line = locateKey(source, keyPath);
      return line === undefined ? file : `${file}:${line}`;
    };
    validateLayer(value, where);
    if (kind === 'workspace') {
      const root = path.dirname(path.dirname(file));
      const sha256 = workspaceTrustHash(source, workspaceScripts(value, root), root);
      const trusted = inputs.trustedWorkspaceSha256 === sha256;
      workspace = { file, sha256, trusted };
      if (!trusted) {
        // Compared with the user's own layers read so far: the built-in defaults and the user config.
        const untrusted = workspaceKeysNeedingTrust(value, layers.find((layer) => layer.kind === 'user')?.value);
        ignored = untrusted.map((key) => ({ ...key, where: where(key.path) }));
        value = withoutKeys(value, untrusted);
      }
    }
    layers.push({ kind, label: file, value });
  }
  // Sorted by code point: localeCompare would initialise ICU collation, tens of ms at start-up.
  for (const [name, raw] of Object.entries(inputs.environment).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!name.startsWith(environmentPrefix) || raw === undefined) continue;
    const keyPath = name.slice(environmentPrefix.length).toLowerCase().split('__').filter(Boolean);
    if (keyPath.length === 0) throw new ConfigError(`environment variable ${name} names no configuration key`);
    const value = setPath({}, keyPath, parseScalar(raw));
    validateLayer(value, () => `environment variable ${name}`);
    layers.push({ kind: 'env', label: name, value });
  }
  if (inputs.conversation && Object.keys(inputs.conversation.delta).length > 0) {
    const label = `conversation ${inputs.conversation.id} (settings recorded by earlier queries)`;
    validateLayer(inputs.conversation.delta, () => label);
    layers.push({ kind: 'conversation', label, value: inputs.conversation.delta });
  }
  for (const argument of inputs.cfgArguments) {
    const equals = argument.indexOf('=');
    if (equals <= 0) {
      throw new ConfigError(`--cfg ${JSON.stringify(argument)} is not KEY=VALUE`, {
        hint: 'Write it as a dotted key and a TOML value, e.g. --cfg assistant.model=openai/gpt-4.1-mini',
      });
    }
    const keyPath = argument.slice(0, equals).trim().split('.');
    if (keyPath.some((segment) => segment === '')) {
      throw new ConfigError(`--cfg ${JSON.stringify(argument)}: the key has an empty segment`);
    }
    const value = setPath({}, keyPath, parseScalar(argument.slice(equals + 1)));
    validateLayer(value, () => `--cfg ${argument}`);
    layers.push({ kind: 'cfg', label: `--cfg ${argument}`, value });
  }
  for (const flag of inputs.flags) {
    const value = setPath({}, flag.path, flag.value);
    validateLayer(value, () => flag.label);
    layers.push({ kind: 'flag', label: flag.label, value, ...(flag.recorded === false ? { unrecorded: true } : {}) });
  }

  const sources = new Map<string, Layer>();
  let merged: Record<string, unknown> = {};
  for (const layer of layers) merged = mergeLayer(merged, layer, sources, []);
  const result = configSchema.safeParse(merged, { reportInput: true });
  if (!result.success) throw schemaError(result.error.issues, () => 'the merged configuration');
  return { value: result.data, sources, layers, ignored, workspace };
}

function parseFile(file: string, source: string): Record<string, unknown> {
  try {
    return parseToml(source) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof TomlError) {
      const firstLine = error.message.split('\n')[0] ?? 'invalid TOML';
      throw new ConfigError(`${file}:${error.line}:${error.column}: invalid TOML: ${firstLine}`, {
        hint: 'Fix the syntax at that line; nothing was written.',
      });
    }
    throw error;
  }
}

/** A `--cfg` or environment value: a TOML value when it parses as one, else the raw string. */
export function parseScalar(raw: string): unknown {
  try {
    return (parseToml(`value = ${raw}`) as { value: unknown }).value;
  } catch {
    return raw;
  }
}

function setPath(target: Record<string, unknown>, keyPath: readonly string[], value: unknown): Record<string, unknown> {
  let cursor = target;
  keyPath.forEach((segment, index) => {
    if (index === keyPath.length - 1) {
      cursor[segment] = value;
      return;
    }
    const next = (cursor[segment] ??= {}) as Record<string, unknown>;
    cursor = next;
  });
  return target;
}

function validateLayer(value: Record<string, unknown>, where: (keyPath: string[]) => string): void {
  const result = configSchema.safeParse(value, { reportInput: true });
  if (!result.success) throw schemaError(result.error.issues, where);
}

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
  expected?: string;
  values?: unknown[];
  input?: unknown;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  issues?: Issue[];
}

function schemaError(issues: readonly unknown[], where: (keyPath: string[]) => string): ConfigError {
  const lines = (issues as Issue[]).slice(0, 5).map((issue) => describeIssue(issue, where));
  const [first, ...rest] = lines;
  return new ConfigError(first ?? 'invalid configuration', {
    hint: [...rest, 'Nothing was written; fix the key and run again (`jp config show` prints the merged config).'].join(
      '\n',
    ),
  });
}

function describeIssue(issue: Issue, where: (keyPath: string[]) => string): string {
  const keyPath = issue.path.map(String);
  if (issue.code === 'unrecognized_keys' && issue.keys) {
    const key = [...keyPath, issue.keys[0]!];
    return `${where(key)}: unknown key ${key.join('.')}${didYouMean(keyPath, issue.keys[0]!)}`;
  }
  const dotted = keyPath.join('.') || '(root)';
  let detail: string;
  switch (issue.code) {
    case 'invalid_type':
      detail = `expected ${issue.expected}, got ${describeValue(issue.input)}`;
      break;
    case 'invalid_value':
      detail = `expected one of ${(issue.values ?? []).map((value) => JSON.stringify(value)).join(', ')}`;
      break;
    case 'invalid_union':
      detail = 'not one of the accepted forms (see the configuration reference in the README)';
      break;
    case 'too_small':
      detail = `expected a value ${issue.inclusive ? 'of at least' : 'greater than'} ${String(issue.minimum)}, got ${describeValue(issue.input)}`;
      break;
    case 'too_big':
      detail = `expected a value ${issue.inclusive ? 'of at most' : 'less than'} ${String(issue.maximum)}, got ${describeValue(issue.input)}`;
      break;
    case 'invalid_key':
      detail = `the name ${JSON.stringify(issue.input)} is not allowed: ${issue.issues?.[0]?.message ?? 'invalid name'}`;
      break;
    default:
      detail = issue.message || issue.code;
  }
  return `${where(keyPath)}: invalid value for ${dotted}: ${detail}`;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'a table';
  return `${typeof value} ${JSON.stringify(value)}`;
}

/** The values set by --cfg and flags: what a query records in its conversation. */
export function commandLineOverrides(loaded: LoadedConfig): Record<string, unknown> {
  let result: Record<string, unknown> = {};
  for (const layer of loaded.layers)
    if ((layer.kind === 'cfg' || layer.kind === 'flag') && !layer.unrecorded) result = mergeTables(result, layer.value);
  return result;
}

/**
 * Where the key at `keyPath` (or a key under it) was set, for messages: `file:line` for a config
 * file, else the layer's label (`--cfg ...`, `JP_CFG_...`).
 */
export function originOf(loaded: LoadedConfig, keyPath: readonly string[]): string {
  const dotted = keyPath.join('.');
  for (const [key, layer] of loaded.sources) {
    if (key !== dotted && !key.startsWith(dotted + '.')) continue;
    if (layer.kind !== 'user' && layer.kind !== 'workspace') return layer.label;
    const source = readConfigFile(layer.label);
    const line = source === undefined ? undefined : locateKey(source, keyPath);
    return line === undefined ? layer.label : `${layer.label}:${line}`;
  }
  return 'the configuration';
}

/**
 * Keys whose list is the union of every layer's, not the last layer's: a later layer adds to it and
 * never removes, so a workspace config (`secrets.env_vars = []`) cannot take a secret its user
 * listed out of redaction. The layer recorded for such a key is the last one that added to it.
 */
const unionKeys: ReadonlySet<string> = new Set([
  'secrets.env_vars',
  'sandbox.hidden_paths',
  // Every layer's hooks run: a later layer cannot take away a guard an earlier one set.
  ...hookEventNames.map((event) => `hooks.${event}`),
]);

/** Deep-merges `layer` over `base`, recording the layer of every leaf it sets. */
function mergeLayer(
  base: Record<string, unknown>,
  layer: Layer,
  sources: Map<string, Layer>,
  prefix: string[],
  value: Record<string, unknown> = layer.value,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, incoming] of Object.entries(value)) {
    const keyPath = [...prefix, key];
    const existing = result[key];
    if (isTable(incoming) && isTable(existing)) {
      result[key] = mergeLayer(existing, layer, sources, keyPath, incoming);
      continue;
    }
    const dotted = keyPath.join('.');
    for (const known of [...sources.keys()]) if (known.startsWith(dotted + '.')) sources.delete(known);
    if (isTable(incoming)) {
      result[key] = mergeLayer({}, layer, sources, keyPath, incoming);
    } else if (unionKeys.has(dotted) && Array.isArray(existing) && Array.isArray(incoming)) {
      const union = [...new Set([...existing, ...incoming])];
      if (union.length > existing.length) sources.set(dotted, layer);
      result[key] = union;
    } else {
      result[key] = incoming;
      sources.set(dotted, layer);
    }
  }
  return result;
}
