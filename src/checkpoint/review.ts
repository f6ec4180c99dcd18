/**
 * What change sets did to the files, from their checkpoints (change-sets.ts): for each file a
 * selection touched, the checkpoint it came `from` (before the first batch that changed it) and the
 * one it went `to` (after the last). `jp conversation diff` shows that; `undo` (undo.ts) puts
 * `from` back. Paths a checkpoint at either end does not hold (over the size limit, a repository of
 * its own) are named, never touched.
 */
import { RunError } from '../errors.ts';
import type { Batch, ChangeSet } from './change-sets.ts';
import { findGit } from './git.ts';
import type { CheckpointSettings } from './recorder.ts';
import { CheckpointStore, type NotCovered, type TreeEntry } from './store.ts';

export type ChangeKind = 'added' | 'modified' | 'deleted';

export interface PathChange {
  path: string;
  from: string;
  to: string;
  kind: ChangeKind;
  fromEntry: TreeEntry | undefined;
  toEntry: TreeEntry | undefined;
}

export interface RootReview {
  root: string;
  store: CheckpointStore;
  changes: PathChange[];
  notCovered: NotCovered[];
  /** The workspace as it is now, when a batch had no `after` (or the caller asked for it). */
  now: string | undefined;
}

export interface ReviewOptions {
  userDirectory: string;
  conversationId: string;
  environment: NodeJS.ProcessEnv;
  settings: CheckpointSettings;
  /** The store index to work with: `diff` never shares the running conversation's. */
  indexName: string;
}

/** The stores of the roots these change sets touched, with each file's from and to. */
export async function review(
  options: ReviewOptions,
  sets: readonly ChangeSet[],
  withNow: boolean,
): Promise<RootReview[]> {
  const batches = sets.flatMap((set) => set.batches);
  const roots = [...new Set(batches.map((batch) => batch.root))];
  const reviews: RootReview[] = [];
  for (const root of roots)
    reviews.push(
      await reviewRoot(
        options,
        root,
        batches.filter((batch) => batch.root === root),
        withNow,
      ),
    );
  return reviews;
}

async function reviewRoot(
  options: ReviewOptions,
  root: string,
  batches: Batch[],
  withNow: boolean,
): Promise<RootReview> {
  const program = findGit(options.environment.PATH, root);
  if (!program)
    throw new RunError('git_missing', 'git is not on PATH: jp reads its checkpoints with git', {
      hint: 'Install git, then run the command again.',
    });
  const store = new CheckpointStore({
    userDirectory: options.userDirectory,
    root,
    program,
    environment: options.environment,
    conversationId: options.indexName,
  });
  for (const batch of batches)
    for (const commit of [batch.before, batch.after])
      if (commit !== undefined && !(await store.has(commit)))
        throw new RunError(
          'checkpoint_missing',
          `checkpoint ${commit.slice(0, 12)} of ${root} is not in this user's checkpoint store (${store.directory})`,
          {
            hint:
              'Checkpoints stay on the machine and account that made them: a conversation copied from elsewhere ' +
              'cannot be diffed or undone here.',
          },
        );
  let now: string | undefined;
  let nowNotCovered: NotCovered[] = [];
  if (withNow || batches.some((batch) => batch.after === undefined)) {
    const snapshot = await store.snapshot(options.settings);
    if ('tooLarge' in snapshot)
      throw new RunError(
        'workspace_too_large',
        `${root} has more than ${options.settings.maxFiles} files that are not ignored (checkpoints.max_files)`,
        {
          hint: 'Raise checkpoints.max_files (with -c checkpoints.max_files=N), then run the command again.',
        },
      );
    now = snapshot.commit;
    nowNotCovered = snapshot.notCovered;
  }
  const touched = new Map<string, { from: string; to: string }>();
  for (const batch of batches) {
    const to = batch.after ?? now!;
    if (to === batch.before) continue;
    for (const changed of await store.changedPaths(batch.before, to)) {
      const known = touched.get(changed.path);
      touched.set(changed.path, { from: known?.from ?? batch.before, to });
    }
  }
  const notCovered = new Map<string, NotCovered>();
  const commits = new Set([...touched.values()].flatMap((pair) => [pair.from, pair.to]));
  for (const commit of commits)
    for (const entry of (await store.notes(commit)).not_covered) notCovered.set(entry.path, entry);
  for (const entry of nowNotCovered) notCovered.set(entry.path, entry);
  const uncovered = (file: string): boolean =>
    [...notCovered.keys()].some((other) => file === other || file.startsWith(`${other}/`));
  const paths = [...touched.keys()].filter((file) => !uncovered(file)).sort();
  const entries = new Map<string, Map<string, TreeEntry>>();
  const entriesOf = async (commit: string): Promise<Map<string, TreeEntry>> => {
    let found = entries.get(commit);
    if (!found) {
      found = await store.entries(commit, paths);
      entries.set(commit, found);
    }
    return found;
  };
  const modes = new Map<string, Record<string, number>>();
  const modeOf = async (commit: string, file: string): Promise<number | undefined> => {
    if (!modes.has(commit)) modes.set(commit, (await store.notes(commit)).modes);
    return modes.get(commit)![file];
  };
  const changes: PathChange[] = [];
  for (const file of paths) {
    const { from, to } = touched.get(file)!;
    const fromEntry = (await entriesOf(from)).get(file);
    const toEntry = (await entriesOf(to)).get(file);
    const same = fromEntry?.object === toEntry?.object && fromEntry?.gitMode === toEntry?.gitMode;
    if (same && (await modeOf(from, file)) === (await modeOf(to, file))) continue;
    const kind: ChangeKind = !fromEntry ? 'added' : !toEntry ? 'deleted' : 'modified';
    changes.push({ path: file, from, to, kind, fromEntry, toEntry });
  }
  return { root, store, changes, notCovered: [...notCovered.values()], now };
}

/** The unified diff of a review, in path order, and per path whether it is binary and its line counts. */
export async function unifiedDiff(
  rootReview: RootReview,
): Promise<{ text: Buffer; stats: Map<string, { added: number; removed: number } | 'binary'> }> {
  const groups = new Map<string, PathChange[]>();
  for (const change of rootReview.changes) {
    const key = `${change.from} ${change.to}`;
    groups.set(key, [...(groups.get(key) ?? []), change]);
  }
  const parts: Buffer[] = [];
  const stats = new Map<string, { added: number; removed: number } | 'binary'>();
  for (const group of groups.values()) {
    const { from, to } = group[0]!;
    const paths = group.map((change) => change.path);
    parts.push(await rootReview.store.unifiedDiff(from, to, paths));
    for (const [file, stat] of await rootReview.store.numstat(from, to, paths)) stats.set(file, stat);
  }
  return { text: Buffer.concat(parts), stats };
}
