/**
 * How many tokens of input a model takes (DESIGN §6): `assistant.context_window` (or
 * `providers.openai-compatible.<name>.context_window`) when set, else this table of the providers'
 * current models, else a conservative default that the run says once.
 */
import type { Config } from '../config/schema.ts';
import type { ModelSpec } from './resolve.ts';

/**
 * Input tokens by model-name prefix, per provider; the longest matching prefix wins, so dated
 * snapshots (`claude-sonnet-4-5-20250929`, `gpt-4.1-mini-2025-04-14`) match their family. For models
 * whose total window includes the output (gpt-5: 400k), the figure is the input limit.
 */
const knownWindows: Record<'openai' | 'anthropic', [prefix: string, tokens: number][]> = {
  openai: [
    ['gpt-5', 272_000],
    ['gpt-4.1', 1_047_576],
    ['gpt-4o', 128_000],
    ['gpt-4-turbo', 128_000],
    ['gpt-4', 8_192],
    ['gpt-3.5-turbo', 16_385],
    ['o1', 200_000],
    ['o3', 200_000],
    ['o4-mini', 200_000],
    ['codex-mini', 200_000],
    ['gpt-oss', 131_072],
  ],
  anthropic: [['claude-', 200_000]],
};

/** The window assumed for a model jp knows nothing about: small enough for most local servers. */
export const defaultContextWindow = 32_768;

export interface ContextWindow {
  tokens: number;
  /** Where the figure comes from: the config key, `table`, or `default` (said once per run). */
  source: string;
}

export function contextWindow(spec: ModelSpec, config: Config): ContextWindow | undefined {
  const configured = config.assistant?.context_window;
  if (configured !== undefined) return { tokens: configured, source: 'assistant.context_window' };
  if (spec.provider === 'openai-compatible') {
    const own = config.providers?.['openai-compatible']?.[spec.compatibleName ?? '']?.context_window;
    if (own !== undefined)
      return { tokens: own, source: `providers.openai-compatible.${spec.compatibleName}.context_window` };
  }
  // The test provider replays a script: it has no window unless one is configured.
  if (spec.provider === 'test') return undefined;
  if (spec.provider === 'openai' || spec.provider === 'anthropic') {
    const match = knownWindows[spec.provider]
      .filter(([prefix]) => spec.model.startsWith(prefix))
      .sort((a, b) => b[0].length - a[0].length)[0];
    if (match) return { tokens: match[1], source: 'table' };
  }
  return { tokens: defaultContextWindow, source: 'default' };
}
