/**
 * Per-conversation settings: each query records the values it was given with --cfg and flags
 * (e.g. `-m`) as a `config_delta` event, sealed (seal.ts), and later queries on the conversation
 * start from them, so `jp query --continue` or a follow-up keeps the model it was started with.
 * Only deltas this user's jp recorded, there, count: one without a valid seal for its place (a
 * conversation committed to a repository, copied, edited, or sealed with a key since rotated)
 * configures nothing and is named in a warning.
 */
import { mergeTables } from '../config/load.ts';
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

/** Whether recording `overrides` would change what the conversation already has. */
export function changesDelta(current: Record<string, unknown>, overrides: Record<string, unknown>): boolean {
  if (Object.keys(overrides).length === 0) return false;
  return canonicalJson(mergeTables(current, overrides)) !== canonicalJson(current);
}
