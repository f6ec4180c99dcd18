/**
 * The checkpoints of one run (DESIGN §10): before a tool batch that can write the workspace, and
 * again when it has ended, the state of the tool root is recorded in its store (store.ts) and named
 * by a `checkpoint` event the engine appends to the log. Whatever stops checkpoints (no git, a
 * workspace too large, a store that fails) is said once per run, with the setting to change, and
 * the run goes on without them: a checkpoint never stops a turn.
 */
import path from 'node:path';
import type { Config } from '../config/schema.ts';
import type { EventOf } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import { counted } from '../plural.ts';
import { findGit } from './git.ts';
import { CheckpointStore, type Limits, type NotCovered } from './store.ts';

export interface CheckpointSettings extends Limits {
  enabled: boolean;
}

export const defaultCheckpointSettings: CheckpointSettings = {
  enabled: true,
  maxFileBytes: 10 * 1024 * 1024,
  maxFiles: 100_000,
};

/** `[checkpoints]` of the configuration, with the defaults. */
export function checkpointSettings(config: Config): CheckpointSettings {
  const own = config.checkpoints;
  return {
    enabled: own?.enabled ?? defaultCheckpointSettings.enabled,
    maxFileBytes: own?.max_file_size ?? defaultCheckpointSettings.maxFileBytes,
    maxFiles: own?.max_files ?? defaultCheckpointSettings.maxFiles,
  };
}

/** What the engine asks of the run's checkpoints (src/turn/tool-batch.ts). */
export interface CheckpointRecorder {
  /**
   * Records the workspace's state `before` a batch that can write it or `after` it; `files` are the
   * paths jp's file tools of the batch write (recorded even when ignored); `turn` the turn's number.
   * Returns the event naming the checkpoint, or undefined when none was made. Never throws.
   */
  record(when: 'before' | 'after', files: readonly string[], turn: number): Promise<EventOf<'checkpoint'> | undefined>;
}

/** How many changed files an `after` event names (`changed` counts them all). */
const namedFiles = 50;
/** A checkpoint slower than this is said once: the workspace may be too large to checkpoint quickly. */
const slowMilliseconds = 3000;

export class RunCheckpoints implements CheckpointRecorder {
  private readonly options: {
    userDirectory: string;
    root: string;
    environment: NodeJS.ProcessEnv;
    conversationId: string;
    settings: CheckpointSettings;
    warn(message: string): void;
  };
  private store: CheckpointStore | undefined;
  private off = false;
  private saidSlow = false;
  private saidNotCovered = new Set<string>();
  private lastBefore: string | undefined;

  constructor(options: RunCheckpoints['options']) {
    this.options = options;
    if (!options.settings.enabled) this.off = true;
  }

  async record(
    when: 'before' | 'after',
    files: readonly string[],
    turn: number,
  ): Promise<EventOf<'checkpoint'> | undefined> {
    if (this.off) return undefined;
    const store = this.openStore();
    if (!store) return undefined;
    const { root, settings } = this.options;
    const started = Date.now();
    try {
      const forced = files
        .map((file) => path.relative(root, path.resolve(root, file)))
        .filter((file) => file !== '' && !file.startsWith('..') && !path.isAbsolute(file));
      const snapshot = await store.snapshot(settings, forced);
      if ('tooLarge' in snapshot) {
        this.stop(
          `no checkpoints in this run: ${root} is too large to checkpoint quickly (more ` +
            `than ${counted(settings.maxFiles, 'file')} that are not ignored, checkpoints.max_files, or more than ` +
            `git can list in 20 s), so \`jp conversation undo\` cannot take this run's changes back. Add ` +
            `.gitignore rules, raise checkpoints.max_files, or set checkpoints.enabled = false to silence this.`,
        );
        return undefined;
      }
      this.sayNotCovered(snapshot.notCovered);
      const elapsed = Date.now() - started;
      if (elapsed > slowMilliseconds && !this.saidSlow) {
        this.saidSlow = true;
        this.options.warn(
          `a checkpoint of ${root} took ${(elapsed / 1000).toFixed(1)} s before each change; add .gitignore rules ` +
            `for what jp need not keep, or set checkpoints.enabled = false to go without \`jp conversation undo\`.`,
        );
      }
      const event: EventOf<'checkpoint'> = {
        type: 'checkpoint',
        timestamp: now(),
        when,
        turn,
        root,
        commit: snapshot.commit,
      };
      if (when === 'before') this.lastBefore = snapshot.commit;
      else if (this.lastBefore) {
        const changed = await store.changedPaths(this.lastBefore, snapshot.commit);
        event.changed = changed.length;
        if (changed.length > 0) event.files = changed.slice(0, namedFiles).map((entry) => entry.path);
      }
      if (snapshot.notCovered.length > 0) event.not_covered = snapshot.notCovered;
      return event;
    } catch (error) {
      this.stop(
        `no checkpoints in this run: the checkpoint store at ${store.directory} failed ` +
          `(${(error as Error).message}); set checkpoints.enabled = false to go without them.`,
      );
      return undefined;
    }
  }

  private openStore(): CheckpointStore | undefined {
    if (this.store) return this.store;
    const { environment, root } = this.options;
    const program = findGit(environment.PATH, root);
    if (!program) {
      this.stop(
        'no checkpoints in this run: git is not on PATH, and jp keeps checkpoints (for `jp conversation diff` ' +
          'and `undo`) in a git repository of its own. Install git, or set checkpoints.enabled = false to silence ' +
          'this.',
      );
      return undefined;
    }
    this.store = new CheckpointStore({ ...this.options, program });
    return this.store;
  }

  private stop(message: string): void {
    this.off = true;
    this.options.warn(message);
  }

  private sayNotCovered(notCovered: readonly NotCovered[]): void {
    const fresh = notCovered.filter((entry) => !this.saidNotCovered.has(entry.path));
    if (fresh.length === 0) return;
    for (const entry of fresh) this.saidNotCovered.add(entry.path);
    const described = fresh
      .slice(0, 5)
      .map((entry) =>
        entry.reason === 'size'
          ? `${entry.path} (over checkpoints.max_file_size)`
          : `${entry.path} (a git repository of its own)`,
      );
    const more = fresh.length > 5 ? ` and ${fresh.length - 5} more` : '';
    this.options.warn(`not in the checkpoint, so undo cannot restore them: ${described.join(', ')}${more}`);
  }
}
