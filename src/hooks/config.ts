/**
 * The hooks a run has (README "Hooks"): every layer's `[[hooks.<Event>]]` entries count (a later
 * layer adds, never removes), a workspace's only once it is trusted (config/trust.ts leaves them out
 * before this sees them), and the old `conversation.hooks.on_waiting` as a Notification hook for
 * `waiting_for_input`. `escalate = true` counts only in the user's own layers: a workspace, even a
 * trusted one, never lets a hook approve leaving the sandbox.
 */
import type { LayerKind, LoadedConfig } from '../config/load.ts';
import { type HookEntryConfig, type HookEventName, hookEventNames } from '../config/schema.ts';

export interface ConfiguredHook {
  event: HookEventName;
  command: string;
  /** Undefined: every tool (or notification type). */
  matcher: RegExp | undefined;
  timeoutMilliseconds: number;
  /** PermissionRequest: may answer escalations (set in the user's own config). */
  escalate: boolean;
  /** `conversation.hooks.on_waiting`: also gets the JP_* variables that hook always had. */
  waitingVariables: boolean;
}

/** Seconds a hook may run when its `timeout` is not set. */
export const defaultTimeoutSeconds = 60;
/** A PermissionRequest hook may be waiting for a person (an approval from a phone). */
export const defaultPermissionTimeoutSeconds = 600;
/** The largest `timeout` the schema accepts. */
export const maximumTimeoutSeconds = 3600;

/** The layers that are the user's own (DESIGN §10): never a workspace's, never a conversation's record. */
const ownLayers: ReadonlySet<LayerKind> = new Set(['user', 'env', 'cfg', 'flag']);

export function configuredHooks(loaded: LoadedConfig): ConfiguredHook[] {
  const found = new Map<string, ConfiguredHook>();
  for (const layer of loaded.layers) {
    const table = layer.value.hooks;
    if (typeof table !== 'object' || table === null) continue;
    for (const event of hookEventNames) {
      const entries = (table as Record<string, unknown>)[event];
      if (!Array.isArray(entries)) continue;
      for (const entry of entries as HookEntryConfig[]) {
        const hook = hookOf(event, entry, ownLayers.has(layer.kind));
        const key = JSON.stringify([event, hook.matcher?.source ?? '', hook.command]);
        const known = found.get(key);
        // The same hook in two layers runs once; the user's own `escalate` counts wherever it is.
        if (known) known.escalate ||= hook.escalate;
        else found.set(key, hook);
      }
    }
  }
  const waiting = loaded.value.conversation?.hooks?.on_waiting;
  if (waiting !== undefined && waiting !== '') {
    found.set('on_waiting', {
      event: 'Notification',
      command: waiting,
      matcher: /^(?:waiting_for_input)$/,
      timeoutMilliseconds: defaultTimeoutSeconds * 1000,
      escalate: false,
      waitingVariables: true,
    });
  }
  return [...found.values()];
}

function hookOf(event: HookEventName, entry: HookEntryConfig, own: boolean): ConfiguredHook {
  const matcher =
    entry.matcher === undefined || entry.matcher === '' || entry.matcher === '*' ? undefined : entry.matcher;
  const seconds =
    entry.timeout ?? (event === 'PermissionRequest' ? defaultPermissionTimeoutSeconds : defaultTimeoutSeconds);
  return {
    event,
    command: entry.command,
    matcher: matcher === undefined ? undefined : new RegExp(`^(?:${matcher})$`),
    timeoutMilliseconds: Math.min(seconds, maximumTimeoutSeconds) * 1000,
    escalate: own && entry.escalate === true,
    waitingVariables: false,
  };
}
