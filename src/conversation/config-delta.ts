/**
 * Per-conversation settings: each query records the values it was given with --cfg and flags
 * (e.g. `-m`) as a `config_delta` event, sealed (seal.ts), and later queries on the conversation
 * start from them, so `jp query --continue` or a follow-up keeps the model it was started with.
 * Only deltas this user's jp recorded, there, count: one without a valid seal for its place (a
 * conversation committed to a repository, copied, edited, or sealed with a key since rotated)
 * configures nothing and is named in a warning.
 */
import { mergeTables } from '../config/load.ts';
import type { Secrets } from '../redact.ts';
import type { ConversationEvent } from './events.ts';
import { canonicalJson, type PlacedSeal } from './seal.ts';

export interface RecordedSettings {
  /** What this user's jp recorded: the conversation's settings. */
  delta: Record<string, unknown>;
  /** Dotted keys of deltas in the log that this user's jp did not record (ignored). */
  foreignKeys: string[];
}

export function recordedSettings(events: readonly ConversationEvent[], seal: PlacedSeal): RecordedSettings {
  let delta: Record<string, unknown> = {};
  const foreign = new Set<string>();
  events.forEach((event) => {
    if (event.type !== 'config_delta') return;
    if (seal.verifies(event, events)) delta = mergeTables(delta, event.delta);
    else for (const key of leafKeys(event.delta)) foreign.add(key);
  });
  return { delta, foreignKeys: [...foreign].sort() };
}

/** The warning a run gives for deltas it ignored. */
export function foreignSettingsWarning(conversationId: string, keys: readonly string[]): string {
  return `ignoring settings recorded in conversation ${conversationId} that your jp did not record (${keys.join(', ')}): a conversation copied, committed, edited, or recorded before \`jp seal rotate\` configures nothing. Pass them with --cfg if you want them.`;
}

function leafKeys(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [prefix || '(root)'];
  const entries = Object.entries(value);
  if (entries.length === 0) return prefix ? [prefix] : [];
  return entries.flatMap(([key, inner]) => leafKeys(inner, prefix ? `${prefix}.${key}` : key));
}

/**
 * Tables whose values are literal secrets passed on to a program or a server (an MCP server's `env`
 * and `headers`): given with --cfg, they configure the query they are given to and are never
 * recorded (`*` is any one key).
 */
const secretBearingTables = [
  ['mcp', 'servers', '*', 'env'],
  ['mcp', 'servers', '*', 'headers'],
];

/**
 * What of a query's --cfg and flags may be recorded in its conversation: everything but the
 * secret-bearing tables and any value that holds a secret jp knows (Secrets). `withheld` names what
 * was left out, by dotted key, for the notice that says to give it again.
 */
export function recordableSettings(
  overrides: Record<string, unknown>,
  secrets: Secrets,
): { delta: Record<string, unknown>; withheld: string[] } {
  const withheld: string[] = [];
  const keep = (value: unknown, keyPath: string[]): unknown => {
    const dotted = keyPath.join('.');
    const secretTable = secretBearingTables.some(
      (pattern) =>
        pattern.length === keyPath.length && pattern.every((part, index) => part === '*' || part === keyPath[index]),
    );
    if (secretTable || (typeof value === 'string' && secrets.redact(value) !== value)) {
      withheld.push(dotted);
      return undefined;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      if (Array.isArray(value) && value.some((item) => typeof item === 'string' && secrets.redact(item) !== item)) {
        withheld.push(dotted);
        return undefined;
      }
      return value;
    }
    const kept: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      const result = keep(inner, [...keyPath, key]);
      if (result !== undefined) kept[key] = result;
    }
    return Object.keys(kept).length > 0 || Object.keys(value).length === 0 ? kept : undefined;
  };
  const delta = (keep(overrides, []) ?? {}) as Record<string, unknown>;
  return { delta, withheld: withheld.sort() };
}

/** Whether recording `overrides` would change what the conversation already has. */
export function changesDelta(current: Record<string, unknown>, overrides: Record<string, unknown>): boolean {
  if (Object.keys(overrides).length === 0) return false;
  return canonicalJson(mergeTables(current, overrides)) !== canonicalJson(current);
}
