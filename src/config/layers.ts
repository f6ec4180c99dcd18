/**
 * The layers of the configuration as written (DESIGN §3), lowest first: built-in defaults → user
 * file → workspace file → JP_CFG_* environment → the conversation's recorded settings → --cfg →
 * flags. The files come from the process's snapshot (snapshot.ts): nothing here reads a file. What
 * only looks for names in every layer (the client's secret variables, the theme) reads them here,
 * without the schema library; loading (load.ts) checks, trims and merges them.
 */
import { parse as parseToml } from 'smol-toml';
import { ConfigError } from '../errors.ts';
import { builtinDefaults } from './defaults.ts';
import type { ConfigSnapshot } from './snapshot.ts';

export type LayerKind = 'default' | 'user' | 'workspace' | 'env' | 'conversation' | 'cfg' | 'flag';

export interface Layer {
  kind: LayerKind;
  /** Where it came from, for messages: a file path, `JP_CFG_X`, `--cfg a.b=c`, `--model`. */
  label: string;
  value: Record<string, unknown>;
  /** A file layer's text, to name the line of a key (locateKey). */
  text?: string;
  /** A flag that holds for this run only: never recorded in the conversation (commandLineOverrides). */
  unrecorded?: true;
}

export interface ConfigInputs {
  /** The user and workspace config files, as this process read them. */
  snapshot: ConfigSnapshot;
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
   * The trust hash of the workspace config its user trusts (the snapshot's, when trusted), decided
   * once by the client (config/trust-decision.ts) and passed down; null or absent: not trusted.
   */
  trustedWorkspaceSha256?: string | null;
}

export const environmentPrefix = 'JP_CFG_';

/**
 * The layers of `inputs` as written, lowest first, neither checked nor trimmed of untrusted keys.
 * `strict`: a file that is not TOML or a `--cfg` that is not KEY=VALUE is an error; `lenient`: it
 * is skipped (for what only looks for names in every layer, such as the client's secret variables).
 */
export function writtenLayers(inputs: ConfigInputs, mode: 'strict' | 'lenient'): Layer[] {
  const layers: Layer[] = [{ kind: 'default', label: 'built-in default', value: builtinDefaults }];
  for (const [kind, file] of [
    ['user', inputs.snapshot.user],
    ['workspace', inputs.snapshot.workspace?.file],
  ] as const) {
    if (file?.text === undefined) continue;
    const value = mode === 'strict' ? file.table() : file.tableIfValid();
    if (value) layers.push({ kind, label: file.path, value, text: file.text });
  }
  // Sorted by code point: localeCompare would initialise ICU collation, tens of ms at start-up.
  for (const [name, raw] of Object.entries(inputs.environment).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!name.startsWith(environmentPrefix) || raw === undefined) continue;
    const keyPath = name.slice(environmentPrefix.length).toLowerCase().split('__').filter(Boolean);
    if (keyPath.length === 0) {
      if (mode === 'lenient') continue;
      throw new ConfigError(`environment variable ${name} names no configuration key`);
    }
    layers.push({ kind: 'env', label: name, value: setPath({}, keyPath, parseScalar(raw)) });
  }
  if (inputs.conversation && Object.keys(inputs.conversation.delta).length > 0) {
    const label = `conversation ${inputs.conversation.id} (settings recorded by earlier queries)`;
    layers.push({ kind: 'conversation', label, value: inputs.conversation.delta });
  }
  for (const argument of inputs.cfgArguments) {
    const equals = argument.indexOf('=');
    const keyPath = argument.slice(0, equals).trim().split('.');
    const malformed = equals <= 0 || keyPath.some((segment) => segment === '');
    if (malformed && mode === 'lenient') continue;
    if (equals <= 0) {
      throw new ConfigError(`--cfg ${JSON.stringify(argument)} is not KEY=VALUE`, {
        hint: 'Write it as a dotted key and a TOML value, e.g. --cfg assistant.model=openai/gpt-4.1-mini',
      });
    }
    if (malformed) throw new ConfigError(`--cfg ${JSON.stringify(argument)}: the key has an empty segment`);
    const value = setPath({}, keyPath, parseScalar(argument.slice(equals + 1)));
    layers.push({ kind: 'cfg', label: `--cfg ${argument}`, value });
  }
  for (const flag of inputs.flags)
    layers.push({
      kind: 'flag',
      label: flag.label,
      value: setPath({}, flag.path, flag.value),
      ...(flag.recorded === false ? { unrecorded: true as const } : {}),
    });
  return layers;
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
