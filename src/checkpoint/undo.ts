/**
 * `jp conversation undo` as a function any front end can call (the CLI, an editor's command): puts
 * back every file the selected change sets changed, as it was before the first of them changed it.
 * A file that is not now as jp left it (changed outside jp since) is named and nothing is written,
 * unless `force`. The undo is recorded in the log as an `undo` event between two checkpoints (before
 * and after it), so it is itself a change set that can be undone. Takes the conversation's lock:
 * a conversation whose run is going on is refused (exit 5), one whose run ended is fine.
 */
import { now } from '../conversation/events.ts';
import { ConversationLog } from '../conversation/log.ts';
import { eventsFile } from '../conversation/store.ts';
import { RunError, UsageError } from '../errors.ts';
import { acquireLock } from '../workspace/lock.ts';
import { userSubdirectory, type Workspace } from '../workspace/workspace.ts';
import { changeSets, selectChangeSets, type ChangeSet } from './change-sets.ts';
import type { CheckpointSettings } from './recorder.ts';
import { restoreFiles } from './restore.ts';
import { review, type ChangeKind, type RootReview } from './review.ts';
import type { NotCovered } from './store.ts';

export interface UndoRequest {
  workspace: Workspace;
  conversationId: string;
  environment: NodeJS.ProcessEnv;
  settings: CheckpointSettings;
  /** Undo this turn and every change set after it; undefined: the last change set that changed files. */
  turn?: number;
  /** Overwrite files changed outside jp since. */
  force?: boolean;
}

export interface UndoReport {
  undone: string[];
  roots: {
    root: string;
    /** What the undo did to each file: `added` back, `modified` back, or `deleted` (created by the change sets). */
    files: { path: string; change: ChangeKind }[];
    notCovered: NotCovered[];
    forced: string[];
  }[];
}

export async function undoChanges(request: UndoRequest): Promise<UndoReport> {
  const { workspace, conversationId } = request;
  const lock = acquireLock(userSubdirectory(workspace, 'locks'), conversationId, { waitSeconds: 0, role: 'client' });
  try {
    const opened = ConversationLog.open(eventsFile(workspace.conversationsDirectory, conversationId));
    try {
      const sets = selectChangeSets(changeSets(opened.events), {
        ...(request.turn !== undefined ? { turn: request.turn } : {}),
      });
      if (sets.length === 0) throw nothingToUndo(conversationId, request.turn);
      const reviews = await review(
        {
          userDirectory: workspace.userDirectory,
          conversationId,
          environment: request.environment,
          settings: request.settings,
          indexName: conversationId,
        },
        sets,
        true,
      );
      if (reviews.every((rootReview) => rootReview.changes.length === 0))
        throw nothingToUndo(conversationId, request.turn, sets);
      const forced = await changedSince(reviews, request.force === true);
      const report: UndoReport = { undone: sets.map((set) => set.label), roots: [] };
      for (const rootReview of reviews) {
        const { store, root, changes } = rootReview;
        const modes = new Map<string, Record<string, number>>();
        for (const change of changes)
          if (!modes.has(change.from)) modes.set(change.from, (await store.notes(change.from)).modes);
        await restoreFiles(
          store,
          root,
          changes.map((change) => ({
            path: change.path,
            entry: change.fromEntry,
            mode: modes.get(change.from)![change.path],
          })),
        );
        const after = await store.snapshot(request.settings);
        const rootForced = forced.get(root) ?? [];
        opened.log.append({
          type: 'undo',
          timestamp: now(),
          root,
          undone: sets.map((set) => set.label),
          before: rootReview.now!,
          after: 'tooLarge' in after ? rootReview.now! : after.commit,
          files: changes.map((change) => change.path),
          ...(rootForced.length > 0 ? { forced: rootForced } : {}),
        });
        report.roots.push({
          root,
          files: changes.map((change) => ({ path: change.path, change: reverse(change.kind) })),
          notCovered: rootReview.notCovered,
          forced: rootForced,
        });
      }
      opened.log.sync();
      return report;
    } finally {
      opened.log.close();
    }
  } finally {
    lock.release();
  }
}

/** What undoing a change does: a file the change added is deleted, one it deleted is added back. */
function reverse(kind: ChangeKind): ChangeKind {
  return kind === 'added' ? 'deleted' : kind === 'deleted' ? 'added' : 'modified';
}

/**
 * The files that are not now as the change sets left them, by root. Without `force` any such file
 * stops the undo before anything is written.
 */
async function changedSince(reviews: readonly RootReview[], force: boolean): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const { store, root, changes, now: current } of reviews) {
    const paths = changes.map((change) => change.path);
    const nowEntries = await store.entries(current!, paths);
    const expected = new Map<string, Awaited<ReturnType<typeof store.entries>>>();
    const differing: string[] = [];
    for (const change of changes) {
      if (!expected.has(change.to)) expected.set(change.to, await store.entries(change.to, paths));
      const want = expected.get(change.to)!.get(change.path);
      const have = nowEntries.get(change.path);
      if (want?.object !== have?.object || want?.gitMode !== have?.gitMode) differing.push(change.path);
    }
    if (differing.length > 0) found.set(root, differing);
  }
  if (found.size > 0 && !force) {
    const named = [...found.entries()].flatMap(([root, files]) => files.map((file) => `${root}/${file}`));
    throw new RunError(
      'changed_since',
      `nothing was undone: ${named.length === 1 ? 'this file has' : 'these files have'} changed since jp ` +
        `changed ${named.length === 1 ? 'it' : 'them'}: ${named.join(', ')}`,
      {
        hint:
          'Undo would overwrite those changes. Look at them (`jp conversation diff` shows what jp did), then run ' +
          'the undo with --force to take the files back anyway.',
      },
    );
  }
  return found;
}

function nothingToUndo(conversationId: string, turn: number | undefined, sets?: ChangeSet[]): UsageError {
  const what = turn === undefined ? (sets ? sets.map((set) => set.label).join(', ') : 'no turn') : `turn ${turn}`;
  const outcome = sets
    ? 'changed no file that a checkpoint holds'
    : turn === undefined
      ? 'changed files'
      : 'has no checkpoint';
  return new UsageError('nothing_to_undo', `nothing to undo in ${conversationId}: ${what} ${outcome}`, {
    hint:
      'Checkpoints are taken before tool calls that can change files; `jp conversation print` marks the turns ' +
      'that changed files.',
  });
}
