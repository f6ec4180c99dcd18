/**
 * Per-conversation settings: each query records the values it was given with --cfg and flags
 * (e.g. `-m`) as a `config_delta` event, sealed (seal.ts), and later queries on the conversation
 * start from them, so `jp query --continue` or a follow-up keeps the model it was started with.
 * Only deltas this user's jp recorded, there, count: one without a valid seal for its place (a
 * conversation committed to a repository, copied, edited, or sealed with a key since rotated)
 * configures nothing and is named in a warning.
 *
 * Where and how to reach a provider is not the conversation's (`connectionKey`): a provider's
 * `base_url`, `api` and `api_key_env`, and an OpenAI-compatible server's whole table, describe
 * this machine's way to the model, like the key itself, and are never recorded; one recorded by an
 * older jp is ignored. A one-off `-c …base_url=` therefore never sticks to later queries. Nor are
 * secrets (recordableSettings).
 */
import { mergeOver } from '../config/cascade.ts';
import { type JpError, withMoreHint } from '../errors.ts';
import type { Secrets } from '../redact.ts';
import type { ConversationEvent } from './events.ts';
import { canonicalJson, type PlacedSeal } from './seal.ts';

export interface RecordedSettings {
  /** What this user's jp recorded: the conversation's settings. */
  delta: Record<string, unknown>;
  /** Dotted keys of deltas in the log that this user's jp did not record (ignored). */
  foreignKeys: string[];
  /** Dotted connection keys an older jp recorded (ignored: see connectionKey). */
  connectionKeys: string[];
}

/** One setting the conversation recorded, with the query that recorded it last and when. */
export interface RecordedKey {
  key: string;
  value: unknown;
  recordedAt: string;
  /** The query's text as its result reported it; null when the event does not say. */
  query: string | null;
}

/** Whether the key at `path` says where or how to reach a provider (never recorded). */
export function connectionKey(path: readonly string[]): boolean {
  if (path[0] !== 'providers' || path.length < 2) return false;
  if (path[1] === 'openai-compatible') return true;
  return path.length === 2 || ['base_url', 'api', 'api_key_env'].includes(path[2]!);
}

/** `delta` without its connection keys; `dropped`: their dotted names. */
export function withoutConnectionKeys(delta: Record<string, unknown>): {
  kept: Record<string, unknown>;
  dropped: string[];
} {
  const kept: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [path, value] of leaves(delta)) {
    if (connectionKey(path)) dropped.push(path.join('.'));
    else setLeaf(kept, path, value);
  }
  return { kept, dropped };
}

export function recordedSettings(events: readonly ConversationEvent[], seal: PlacedSeal): RecordedSettings {
  let delta: Record<string, unknown> = {};
  const foreign = new Set<string>();
  const connection = new Set<string>();
  events.forEach((event) => {
    if (event.type !== 'config_delta') return;
    if (seal.verifies(event, events)) {
      const { kept, dropped } = withoutConnectionKeys(event.delta);
      delta = mergeOver(delta, kept);
      for (const key of dropped) connection.add(key);
    } else for (const key of leafKeys(event.delta)) foreign.add(key);
  });
  return { delta, foreignKeys: [...foreign].sort(), connectionKeys: [...connection].sort() };
}

/**
 * Each setting the conversation's settings hold (recordedSettings' delta), with the event that set
 * it last: its time, and its query (the event's own, else the first message sent after it).
 */
export function recordedKeys(events: readonly ConversationEvent[], seal: PlacedSeal): RecordedKey[] {
  const byKey = new Map<string, RecordedKey>();
  events.forEach((event, index) => {
    if (event.type !== 'config_delta' || !seal.verifies(event, events)) return;
    const query = event.query ?? nextMessage(events, index);
    for (const [path, value] of leaves(withoutConnectionKeys(event.delta).kept)) {
      const key = path.join('.');
      // A later value replaces what was under it or over it, as mergeOver does.
      for (const known of [...byKey.keys()])
        if (known.startsWith(`${key}.`) || key.startsWith(`${known}.`)) byKey.delete(known);
      byKey.set(key, { key, value, recordedAt: event.timestamp, query });
    }
  });
  return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function nextMessage(events: readonly ConversationEvent[], index: number): string | null {
  for (const event of events.slice(index + 1)) if (event.type === 'chat_request') return event.content;
  return null;
}

/**
 * Where a recorded setting comes from and how to change it, for messages: an error that names the
 * key, `jp config show --id`.
 */
export function recordedKeyNote(conversationId: string, recorded: RecordedKey): string {
  const query = recorded.query === null ? '' : ` by the query ${JSON.stringify(shortened(recorded.query))}`;
  const flag = recorded.key === 'assistant.model' ? '-m <provider>/<model> or ' : '';
  return (
    `${recorded.key} = ${JSON.stringify(recorded.value)} comes from conversation ${conversationId} ` +
    `(recorded ${recorded.recordedAt}${query}); ` +
    `change it with ${flag}-c ${recorded.key}=<value> on the next query (recorded in its place); ` +
    `\`jp config show --id ${conversationId}\` lists what it recorded.`
  );
}

/** The first line of a query, cut to 60 characters, for messages. */
export function shortened(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/**
 * The recorded settings an error names (by key, or by the value itself, as a model id is named),
 * each with recordedKeyNote: what the user must know to fix it where it is set.
 */
export function recordedKeysNamedIn(text: string, keys: readonly RecordedKey[]): RecordedKey[] {
  return keys.filter(
    (recorded) =>
      text.includes(recorded.key) ||
      (typeof recorded.value === 'string' && recorded.value.length >= 3 && text.includes(recorded.value)),
  );
}

/** `error`, its hint telling where each recorded setting it names comes from (recordedKeysNamedIn). */
export function explainRecordedKeys(error: JpError, conversationId: string, keys: readonly RecordedKey[]): JpError {
  const named = recordedKeysNamedIn(`${error.message}\n${error.hint ?? ''}`, keys);
  if (named.length === 0) return error;
  return withMoreHint(error, named.map((recorded) => recordedKeyNote(conversationId, recorded)).join('\n'));
}

/** The warning a run gives for deltas it ignored. */
export function foreignSettingsWarning(conversationId: string, keys: readonly string[]): string {
  return (
    `ignoring settings recorded in conversation ${conversationId} ` +
    `that your jp did not record (${keys.join(', ')}): ` +
    'a conversation copied, committed, edited, or recorded before `jp seal rotate` configures nothing. ' +
    'Pass them with --cfg if you want them.'
  );
}

/** The warning a run gives for connection keys an older jp recorded. */
export function connectionSettingsWarning(conversationId: string, keys: readonly string[]): string {
  return (
    `ignoring ${keys.join(', ')} recorded in conversation ${conversationId} by an older jp: ` +
    'where and how to reach a provider comes from your config and the command line, never from a conversation. ' +
    'Pass -c again if you meant it for this query.'
  );
}

function leaves(value: Record<string, unknown>, prefix: string[] = []): [string[], unknown][] {
  return Object.entries(value).flatMap(([key, inner]): [string[], unknown][] =>
    typeof inner === 'object' && inner !== null && !Array.isArray(inner) && Object.keys(inner).length > 0
      ? leaves(inner as Record<string, unknown>, [...prefix, key])
      : [[[...prefix, key], inner]],
  );
}

function setLeaf(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let cursor = target;
  for (const segment of path.slice(0, -1)) cursor = (cursor[segment] ??= {}) as Record<string, unknown>;
  cursor[path[path.length - 1]!] = value;
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
  return canonicalJson(mergeOver(current, overrides)) !== canonicalJson(current);
}
