/**
 * What a sandboxed command may see and write, as plain data (pure: the file system facts it needs
 * are passed in). The engines (bubblewrap.ts, seatbelt.ts) render one plan each.
 *
 * - The whole file system is readable and read-only;
 * - `writable` directories are writable (the tool root under workspace-write, the configured
 *   writable roots, the private temporary directory under every mode);
 * - `readOnly` paths stay read-only although they lie inside a writable directory (`.jp/`, and of
 *   a repository at the top of a writable directory what git runs: `.git/config`, `hooks/`,
 *   `info/`, `modules/`, `worktrees/`, or a `.git` file naming the git directory);
 * - `pinned` directories stay writable but cannot be renamed or removed (that repository's `.git`:
 *   else a command could move it aside and put a `.git` of its own, with its own config, in its
 *   place); commits still work;
 * - `hidden` paths are replaced by an empty directory or an empty file (the user's credentials,
 *   jp's own directories, the sockets that act for the user).
 * Every path is real (symlinks resolved), so a link cannot point a rule at the wrong place.
 */
import path from 'node:path';
import { builtinHiddenPaths, type SandboxSettings } from './settings.ts';

export type PathKind = 'directory' | 'file' | 'other';

export interface FileSystemFacts {
  /** The real path of `file` (symlinks resolved), or undefined when it does not exist. */
  realPath(file: string): string | undefined;
  kind(file: string): PathKind | undefined;
}

export interface PlanInput {
  settings: SandboxSettings;
  /** The directory commands run in by default and may write under workspace-write. */
  toolRoot: string;
  /** Paths that stay read-only inside writable directories: `<workspace>/.jp`. */
  protectedPaths: string[];
  home: string;
  /** Hidden besides the built-in credentials: jp's own directories, the sockets that act for the user, histories. */
  extraHiddenPaths: string[];
  /** The private temporary directory of this command (TMPDIR inside). */
  temporaryDirectory: string;
  cwd: string;
}

export interface SandboxPlan {
  /**
   * `sandbox.hide_home`: the home directory, emptied before anything else is bound, with
   * `readable` shown again read-only (the writable directories under it are bound as usual).
   */
  emptied: string | undefined;
  readable: string[];
  /** The writable directories, the private temporary directory last. */
  writable: string[];
  pinned: string[];
  readOnly: string[];
  hidden: { path: string; kind: PathKind }[];
  network: boolean;
  temporaryDirectory: string;
  cwd: string;
}

/** `~/x` is under the home directory; a relative path is under the tool root. */
export function expandPath(value: string, home: string, base: string): string {
  if (value === '~') return home;
  if (value.startsWith('~/')) return path.join(home, value.slice(2));
  return path.resolve(base, value);
}

function unique<T>(values: T[], key: (value: T) => string): T[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const id = key(value);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

export function planSandbox(input: PlanInput, facts: FileSystemFacts): SandboxPlan {
  const { settings, home } = input;
  const real = (file: string): string | undefined => facts.realPath(file);
  const writableCandidates =
    settings.mode === 'workspace-write'
      ? [input.toolRoot, ...settings.writableRoots.map((root) => expandPath(root, home, input.toolRoot))]
      : [];
  const writable = unique(
    [
      ...writableCandidates
        .map(real)
        .filter((file): file is string => file !== undefined && facts.kind(file) === 'directory'),
      real(input.temporaryDirectory) ?? input.temporaryDirectory,
    ],
    (file) => file,
  );
  const repositories = writable.slice(0, -1).flatMap((root) => gitProtection(root, facts));
  const readOnly = unique(
    [
      ...input.protectedPaths
        .map(real)
        .filter((file): file is string => file !== undefined && writable.some((root) => isInside(file, root))),
      ...repositories.flatMap((repository) => repository.readOnly),
    ],
    (file) => file,
  );
  const hiddenCandidates = [
    ...builtinHiddenPaths.map((relative) => path.join(home, relative)),
    ...input.extraHiddenPaths,
    ...settings.hiddenPaths.map((hidden) => expandPath(hidden, home, input.toolRoot)),
  ];
  const emptied = settings.hideHome ? real(home) : undefined;
  const readable = settings.hideHome
    ? unique(
        settings.readableRoots
          .map((root) => real(expandPath(root, home, input.toolRoot)))
          .filter((file): file is string => file !== undefined),
        (file) => file,
      )
    : [];
  const hidden = unique(
    hiddenCandidates.flatMap((candidate) => {
      const file = real(candidate);
      const kind = file === undefined ? undefined : facts.kind(file);
      if (file === undefined || kind === undefined) return [];
      // Under an emptied home directory only what is shown again needs hiding.
      if (emptied && isInside(file, emptied) && ![...readable, ...writable].some((root) => isInside(file, root)))
        return [];
      return [{ path: file, kind }];
    }),
    (entry) => entry.path,
  );
  return {
    emptied,
    readable,
    writable,
    pinned: unique(
      repositories.flatMap((repository) => (repository.pinned ? [repository.pinned] : [])),
      (file) => file,
    ),
    readOnly,
    hidden,
    network: settings.network,
    temporaryDirectory: real(input.temporaryDirectory) ?? input.temporaryDirectory,
    cwd: real(input.cwd) ?? input.cwd,
  };
}

/**
 * What git runs from a repository's directory: its configuration, hooks, attributes and excludes, submodules' and
 * worktrees' own.
 */
export const gitExecutedEntries: readonly string[] = [
  'config',
  'config.worktree',
  'hooks',
  'info',
  'modules',
  'worktrees',
];

/** The protection of the repository at the top of a writable directory `root`, if there is one. */
function gitProtection(root: string, facts: FileSystemFacts): { pinned?: string; readOnly: string[] }[] {
  const gitPath = facts.realPath(path.join(root, '.git'));
  if (gitPath === undefined || !isInside(gitPath, root)) return [];
  const kind = facts.kind(gitPath);
  // A `.git` file names the git directory (a worktree, a submodule): rewritten, it would name one the command made.
  if (kind === 'file') return [{ readOnly: [gitPath] }];
  if (kind !== 'directory') return [];
  const readOnly = gitExecutedEntries.flatMap((entry) => {
    const file = facts.realPath(path.join(gitPath, entry));
    return file === undefined || !isInside(file, gitPath) ? [] : [file];
  });
  return [{ pinned: gitPath, readOnly }];
}

export function isInside(file: string, directory: string): boolean {
  const relative = path.relative(directory, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
