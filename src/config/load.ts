/**
 * The configuration cascade (DESIGN §3), later layers win:
 * built-in defaults → user file → workspace file → JP_CFG_* environment → the conversation's
 * recorded settings → --cfg → flags, merged by one rule (cascade.ts). The files come from the
 * process's snapshot (snapshot.ts): loading reads no file. Each layer is checked on its own for
 * what it can get wrong alone (an unknown key, a wrong type), so an error names where it came from;
 * the merged configuration is checked whole (a key that another layer supplies, such as a
 * provider's base_url under a `--cfg` of its context_window, is missing only if every layer leaves
 * it out), its errors named at the layer that set the table. Loading never writes.
 * The keys of the workspace file that need trust (trust.ts) are left out unless the caller trusts
 * that file's content (`trustedWorkspaceSha256`); they are listed in `ignored`.
 */
import { ConfigError } from '../errors.ts';
import { mergeOver, type Sources, type Table } from './cascade.ts';
import { writtenLayers, type ConfigInputs, type Layer } from './layers.ts';
import { locateKey } from './locate.ts';
import { configSchema, type Config } from './schema.ts';
import { withoutKeys, workspaceKeysNeedingTrust, type UntrustedKey } from './trust.ts';
import { didYouMean } from './suggest.ts';

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
  /** The workspace config file that was read, with its trust hash, if there is one. */
  workspace: { file: string; sha256: string; trusted: boolean } | undefined;
}

export function loadConfig(inputs: ConfigInputs): LoadedConfig {
  const layers = writtenLayers(inputs, 'strict');
  let ignored: IgnoredKey[] = [];
  let workspace: LoadedConfig['workspace'];
  for (const layer of layers) {
    if (layer.kind !== 'default') validateLayer(layer.value, (keyPath) => whereIn(layer, keyPath));
    if (layer.kind !== 'workspace' || !inputs.snapshot.workspace) continue;
    const sha256 = inputs.snapshot.workspace.trustSha256;
    const trusted = inputs.trustedWorkspaceSha256 === sha256;
    workspace = { file: layer.label, sha256, trusted };
    if (trusted) continue;
    // Compared with the user's own layers below it: the built-in defaults and the user config.
    const untrusted = workspaceKeysNeedingTrust(layer.value, layers.find((other) => other.kind === 'user')?.value);
    ignored = untrusted.map((key) => ({ ...key, where: whereIn(layer, key.path) }));
    layer.value = withoutKeys(layer.value, untrusted);
  }

  const sources: Sources<Layer> = new Map();
  let merged: Table = {};
  for (const layer of layers) merged = mergeOver(merged, layer.value, { map: sources, origin: layer });
  const result = configSchema.safeParse(merged, { reportInput: true });
  if (!result.success) throw schemaError(result.error.issues, (keyPath) => whereMerged(sources, keyPath));
  return { value: result.data, sources, layers, ignored, workspace };
}

/** `file:line` of the key in a file layer (the line of the nearest enclosing key it finds), else the layer in words. */
function whereIn(layer: Layer, keyPath: readonly string[]): string {
  if (layer.kind === 'env') return `environment variable ${layer.label}`;
  if (layer.text === undefined) return layer.label;
  const line = locateKey(layer.text, keyPath);
  return line === undefined ? layer.label : `${layer.label}:${line}`;
}

/**
 * Where a problem of the merged configuration at `keyPath` was made: the layer that set that key or
 * the nearest table above it that a layer wrote (a key missing from a table is the table's
 * problem), else the first layer that set a key under it.
 */
function whereMerged(sources: Sources<Layer>, keyPath: readonly string[]): string {
  for (let length = keyPath.length; length > 0; length--) {
    const dotted = keyPath.slice(0, length).join('.');
    const exact = sources.get(dotted);
    if (exact) return whereIn(exact, keyPath.slice(0, length));
    for (const [key, layer] of sources)
      if (key.startsWith(dotted + '.')) return whereIn(layer, keyPath.slice(0, length));
  }
  return 'the merged configuration';
}

/**
 * Checks one layer alone: what it sets must be known keys of the right types. A key it leaves out
 * is not its problem (another layer may set it): the merged configuration is checked for those.
 */
function validateLayer(value: Record<string, unknown>, where: (keyPath: string[]) => string): void {
  const result = configSchema.safeParse(value, { reportInput: true });
  if (result.success) return;
  const issues = (result.error.issues as readonly Issue[]).filter((issue) => !onlyMissing(issue));
  if (issues.length > 0) throw schemaError(issues, where);
}

/** An issue that says only that a key is missing (in every form a union accepts, for a union). */
function onlyMissing(issue: Issue): boolean {
  if (issue.code === 'invalid_type') return issue.input === undefined;
  if (issue.code === 'invalid_union') return (issue.errors ?? []).some((branch) => branch.every(onlyMissing));
  return false;
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
  /** For invalid_union: each accepted form's issues. */
  errors?: Issue[][];
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
      detail =
        `expected a value ${issue.inclusive ? 'of at least' : 'greater than'} ${String(issue.minimum)}, ` +
        `got ${describeValue(issue.input)}`;
      break;
    case 'too_big':
      detail =
        `expected a value ${issue.inclusive ? 'of at most' : 'less than'} ${String(issue.maximum)}, ` +
        `got ${describeValue(issue.input)}`;
      break;
    case 'invalid_key':
      detail =
        `the name ${JSON.stringify(issue.input)} is not allowed: ` + `${issue.issues?.[0]?.message ?? 'invalid name'}`;
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
    if ((layer.kind === 'cfg' || layer.kind === 'flag') && !layer.unrecorded) result = mergeOver(result, layer.value);
  return result;
}

/**
 * Where the key at `keyPath` (or a key under it) was set, for messages: `file:line` for a config
 * file, else the layer's label (`--cfg ...`, `JP_CFG_...`).
 */
export function originOf(loaded: LoadedConfig, keyPath: readonly string[]): string {
  const dotted = keyPath.join('.');
  for (const [key, layer] of loaded.sources)
    if (key === dotted || key.startsWith(dotted + '.'))
      return layer.kind === 'env' ? layer.label : whereIn(layer, keyPath);
  return 'the configuration';
}
