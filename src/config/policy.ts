/**
 * Per-tool policy resolution: the detached policy's five steps (DESIGN §3), and the attached
 * `run` / `result` modes. Each answer carries the key and layer that decided it.
 */
import type { DetachedPolicy, PolicyKind } from '../inquiry/types.ts';
import { isTable } from './cascade.ts';
import type { LoadedConfig } from './load.ts';
import type { Config, QuestionConfig, ResultMode, RunMode, ToolConfig, ToolDefaultsConfig } from './schema.ts';

export interface Resolved<T> {
  value: T;
  /** The dotted key that decided, or `built-in` when nothing in the config did. */
  key: string;
  /** The layer that set that key (a file path, an env var, `--cfg ...`), or a built-in explanation. */
  layer: string;
}

export type BuiltinDetachedDefault = 'deny' | 'defer';

function toolsOf(config: Config): Record<string, ToolConfig | ToolDefaultsConfig | undefined> {
  return (config.conversation?.tools ?? {}) as Record<string, ToolConfig | ToolDefaultsConfig | undefined>;
}

function layerOf(loaded: LoadedConfig, key: string): string {
  return loaded.sources.get(key)?.label ?? 'built-in default';
}

/**
 * `conversation.tools.<tool>.detached.<kind>` as its layer wrote it: `…detached` when the layer set
 * the scalar shorthand (which stands for the kinds it covers: config/cascade.ts), else the key.
 */
function detachedKeyAsWritten(loaded: LoadedConfig, key: string): string {
  const shorthand = key.split('.').slice(0, -1);
  let written: unknown = loaded.sources.get(key)?.value;
  for (const segment of shorthand) written = isTable(written) ? written[segment] : undefined;
  return typeof written === 'string' ? shorthand.join('.') : key;
}

export function resolveDetachedPolicy(
  loaded: LoadedConfig,
  tool: string,
  kind: PolicyKind,
  builtin: BuiltinDetachedDefault,
): Resolved<DetachedPolicy> {
  const tools = toolsOf(loaded.value);
  const candidates: [string, unknown][] = [];
  for (const owner of [tool, 'defaults']) {
    const detached = tools[owner]?.detached;
    if (typeof detached === 'object') candidates.push([`conversation.tools.${owner}.detached.${kind}`, detached[kind]]);
    // The scalar shorthand sets run, deliver and tool only: leaving the sandbox is set explicitly.
    else if (kind !== 'escalate') candidates.push([`conversation.tools.${owner}.detached`, detached]);
  }
  for (const [key, value] of candidates) {
    if (typeof value === 'string')
      return { value: value as DetachedPolicy, key: detachedKeyAsWritten(loaded, key), layer: layerOf(loaded, key) };
  }
  return {
    value: builtin,
    key: 'built-in',
    layer:
      builtin === 'defer'
        ? 'built-in default for a run started with --detach'
        : 'built-in default for a run with no client',
  };
}

/**
 * `toolDefault` is the tool's own default (an MCP tool's readOnlyHint under trust_annotations): the
 * user's setting for the tool wins over it, and it wins over `tools.defaults.run`.
 */
export function resolveRunMode(
  loaded: LoadedConfig,
  tool: string,
  toolDefault?: { value: RunMode; reason: string },
): Resolved<RunMode> {
  if (toolDefault && toolsOf(loaded.value)[tool]?.run === undefined)
    return { value: toolDefault.value, key: 'built-in', layer: toolDefault.reason };
  return resolveMode(loaded, tool, 'run', 'ask');
}

export function resolveResultMode(loaded: LoadedConfig, tool: string): Resolved<ResultMode> {
  return resolveMode(loaded, tool, 'result', 'unattended');
}

function resolveMode<T extends string>(
  loaded: LoadedConfig,
  tool: string,
  field: 'run' | 'result',
  fallback: T,
): Resolved<T> {
  const tools = toolsOf(loaded.value);
  for (const owner of [tool, 'defaults']) {
    const value = tools[owner]?.[field];
    if (value !== undefined) {
      const key = `conversation.tools.${owner}.${field}`;
      return { value: value as T, key, layer: layerOf(loaded, key) };
    }
  }
  return { value: fallback, key: 'built-in', layer: 'built-in default' };
}

export function questionConfigOf(loaded: LoadedConfig, tool: string, questionId: string): QuestionConfig | undefined {
  const entry = toolsOf(loaded.value)[tool];
  if (!entry || !('questions' in entry)) return undefined;
  return entry.questions?.[questionId];
}

/** The lines `jp config show --effective <tool>` prints. */
export function describeEffective(
  loaded: LoadedConfig,
  tool: string,
  builtin: BuiltinDetachedDefault,
  toolDefault?: { value: RunMode; reason: string },
): string[] {
  const lines: string[] = [`tool ${tool}`];
  const run = resolveRunMode(loaded, tool, toolDefault);
  const result = resolveResultMode(loaded, tool);
  lines.push(`  run (attached)        = ${run.value.padEnd(10)} set by ${run.key} (${run.layer})`);
  lines.push(`  result (attached)     = ${result.value.padEnd(10)} set by ${result.key} (${result.layer})`);
  for (const kind of ['run', 'deliver', 'tool', 'escalate'] as const) {
    const detached = resolveDetachedPolicy(loaded, tool, kind, builtin);
    lines.push(
      `  detached.${kind.padEnd(12)} = ${detached.value.padEnd(10)} set by ${detached.key} (${detached.layer})`,
    );
  }
  const entry = toolsOf(loaded.value)[tool];
  const questions = entry && 'questions' in entry ? (entry.questions ?? {}) : {};
  for (const [id, question] of Object.entries(questions)) {
    const parts = Object.entries(question ?? {}).map(([key, value]) => `${key}=${JSON.stringify(value)}`);
    lines.push(`  question ${id}: ${parts.join(', ')}`);
  }
  return lines;
}
