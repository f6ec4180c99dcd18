/**
 * What a sandboxed command may see and write, as plain data (pure: the file system facts it needs
 * are passed in). The engines (bubblewrap.ts, seatbelt.ts) render one plan each.
 *
 * - The whole file system is readable and read-only;
 * - `writable` directories are writable (the tool root under workspace-write, the configured
 *   writable roots, the private temporary directory under every mode);
 * - `readOnly` paths stay read-only although they lie inside a writable directory (`.jp/` and jp's
 *   user-local state);
 * - `hidden` paths are replaced by an empty directory or an empty file (the user's secrets).
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
  /** Paths that stay read-only inside writable directories: `<workspace>/.jp`, jp's user-local state. */
  protectedPaths: string[];
  home: string;
  /** Hidden besides the built-in list: the user's jp config directory, agent sockets. */
  extraHiddenPaths: string[];
  /** The private temporary directory of this command (TMPDIR inside). */
  temporaryDirectory: string;
  cwd: string;
}

export interface SandboxPlan {
  writable: string[];
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
  const readOnly = unique(
    input.protectedPaths
      .map(real)
      .filter((file): file is string => file !== undefined && writable.some((root) => isInside(file, root))),
    (file) => file,
  );
  const hiddenCandidates = [
    ...builtinHiddenPaths.map((relative) => path.join(home, relative)),
    ...input.extraHiddenPaths,
    ...settings.hiddenPaths.map((hidden) => expandPath(hidden, home, input.toolRoot)),
  ];
  const hidden = unique(
    hiddenCandidates.flatMap((candidate) => {
      const file = real(candidate);
      const kind = file === undefined ? undefined : facts.kind(file);
      return file === undefined || kind === undefined ? [] : [{ path: file, kind }];
    }),
    (entry) => entry.path,
  );
  return {
    writable,
    readOnly,
    hidden,
    network: settings.network,
    temporaryDirectory: real(input.temporaryDirectory) ?? input.temporaryDirectory,
    cwd: real(input.cwd) ?? input.cwd,
  };
}

export function isInside(file: string, directory: string): boolean {
  const relative = path.relative(directory, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
