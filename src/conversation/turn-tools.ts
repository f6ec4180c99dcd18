/**
 * A turn keeps the tools it was started with: `--no-tools` and `--tool` are recorded on its
 * `turn_start` (sealed, conversation/seal.ts), and `jp query --continue` resumes it with exactly
 * those, whatever the command that resumes it says (that command's own choice applies to its new
 * message). A record this user's jp did not seal decides nothing.
 */
import type { ConversationEvent, TurnTools } from './events.ts';
import type { PlacedSeal } from './seal.ts';
import { findIncompleteTurn } from './turn-state.ts';

/** No flags: the configured tools. */
export const configuredTools: TurnTools = { no_tools: false, enabled: [] };

export interface ResumedTurnTools {
  /** The tools the incomplete turn was started with, when this user's jp recorded them. */
  tools: TurnTools | undefined;
  /** A record was there but without a valid seal: ignored. */
  foreign: boolean;
}

export function resumedTurnTools(events: readonly ConversationEvent[], seal: PlacedSeal): ResumedTurnTools {
  const incomplete = findIncompleteTurn(events);
  const start = incomplete ? events[incomplete.turn.start] : undefined;
  if (start?.type !== 'turn_start' || start.tools === undefined) return { tools: undefined, foreign: false };
  if (!seal.verifies(start, events)) return { tools: undefined, foreign: true };
  const enabled = Array.isArray(start.tools.enabled)
    ? start.tools.enabled.filter((name) => typeof name === 'string')
    : [];
  return { tools: { no_tools: start.tools.no_tools === true, enabled }, foreign: false };
}

export function sameTools(a: TurnTools, b: TurnTools): boolean {
  return a.no_tools === b.no_tools && [...a.enabled].sort().join('\n') === [...b.enabled].sort().join('\n');
}

/** Both choices at once: what a run that resumes one turn and starts another must have at hand. */
export function unionOfTools(a: TurnTools, b: TurnTools | undefined): TurnTools {
  if (!b) return a;
  if (a.no_tools) return b;
  if (b.no_tools) return a;
  return { no_tools: false, enabled: [...new Set([...a.enabled, ...b.enabled])] };
}

/** A choice as the flags that make it. */
export function describeTools(tools: TurnTools): string {
  if (tools.no_tools) return '--no-tools';
  if (tools.enabled.length === 0) return 'the configured tools (no --no-tools or --tool)';
  return `the configured tools and ${tools.enabled.map((name) => `--tool ${name}`).join(' ')}`;
}
