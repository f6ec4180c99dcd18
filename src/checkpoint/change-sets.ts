/**
 * What a conversation changed in its workspace, read from its log alone: its change sets, in log
 * order. A turn's change set is its tool batches, each framed by a `before` and an `after`
 * checkpoint (an `after` that was never written, a run killed mid-batch, is the next checkpoint of
 * the log, or the workspace as it is now); an undo is a change set of its own. Turns are numbered
 * from 1 in the order of their `turn_start`, undos from 1 in theirs.
 */
import type { ConversationEvent } from '../conversation/events.ts';

export interface Batch {
  root: string;
  before: string;
  /** Undefined: nothing recorded the state after it; the workspace as it is now stands in. */
  after: string | undefined;
}

export interface ChangeSet {
  /** `turn 3`, `undo 1`. */
  label: string;
  turn: number | undefined;
  batches: Batch[];
  /** False when every batch recorded that it changed nothing; true when one changed a file; undefined when unknown. */
  changed: boolean | undefined;
}

export function changeSets(events: readonly ConversationEvent[]): ChangeSet[] {
  const sets: ChangeSet[] = [];
  /** Per batch: whether its own `after` said it changed files (undefined: no `after` of its own). */
  const recorded = new Map<Batch, boolean>();
  let turn = 0;
  let undos = 0;
  let current: ChangeSet | undefined;
  let open: Batch | undefined;
  for (const event of events) {
    if (event.type === 'turn_start') {
      turn++;
      current = undefined;
    } else if (event.type === 'checkpoint' && event.when === 'before') {
      if (open && open.root === event.root) open.after = event.commit;
      if (!current) {
        current = { label: `turn ${turn}`, turn, batches: [], changed: undefined };
        sets.push(current);
      }
      open = { root: event.root, before: event.commit, after: undefined };
      current.batches.push(open);
    } else if (event.type === 'checkpoint' && open && open.root === event.root) {
      open.after = event.commit;
      recorded.set(open, (event.changed ?? 1) > 0);
      open = undefined;
    } else if (event.type === 'undo') {
      if (open && open.root === event.root) open.after = event.before;
      open = undefined;
      undos++;
      const batch = { root: event.root, before: event.before, after: event.after };
      recorded.set(batch, event.files.length > 0);
      sets.push({ label: `undo ${undos}`, turn: undefined, batches: [batch], changed: undefined });
      current = undefined;
    }
  }
  for (const set of sets) {
    const known = set.batches.map((batch) => recorded.get(batch));
    set.changed = known.some((changed) => changed === true)
      ? true
      : known.every((changed) => changed === false)
        ? false
        : undefined;
  }
  return sets;
}

/**
 * The change sets a command acts on: `turn` and every change set after it, or (no turn) the last
 * one that changed anything (`all`: every one).
 */
export function selectChangeSets(
  sets: readonly ChangeSet[],
  selection: { turn?: number; all?: boolean; through?: 'end' | 'only' },
): ChangeSet[] {
  if (selection.all) return [...sets];
  if (selection.turn !== undefined) {
    const first = sets.findIndex((set) => set.turn === selection.turn);
    if (first < 0) return [];
    return selection.through === 'only' ? [sets[first]!] : sets.slice(first);
  }
  for (let index = sets.length - 1; index >= 0; index--) if (sets[index]!.changed !== false) return [sets[index]!];
  return [];
}

/** The turns whose checkpoints say (or may say: a batch with no `after`) that they changed files. */
export function changedTurns(events: readonly ConversationEvent[]): number[] {
  return changeSets(events)
    .filter((set) => set.turn !== undefined && set.changed !== false)
    .map((set) => set.turn!);
}
