/**
 * Per-conversation settings: each query records the values it was given with --cfg and flags
 * (e.g. `-m`) as a `config_delta` event, and later queries on the conversation start from them,
 * so `jp query --continue` or a follow-up keeps the model it was started with.
 */
import { mergeTables } from '../config/load.ts';
import type { ConversationEvent } from './events.ts';

export function accumulatedDelta(events: readonly ConversationEvent[]): Record<string, unknown> {
  let delta: Record<string, unknown> = {};
  for (const event of events) if (event.type === 'config_delta') delta = mergeTables(delta, event.delta);
  return delta;
}

/** Whether recording `overrides` would change what the conversation already has. */
export function changesDelta(current: Record<string, unknown>, overrides: Record<string, unknown>): boolean {
  if (Object.keys(overrides).length === 0) return false;
  return JSON.stringify(sortKeys(mergeTables(current, overrides))) !== JSON.stringify(sortKeys(current));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, inner]) => [key, sortKeys(inner)]));
}
