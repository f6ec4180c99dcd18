/**
 * Confinement of tools to the tool root (DESIGN §10): a path must stay inside it after `..` and
 * symlinks are resolved. File tools are further kept out of jp's own rules and state, whatever the
 * policy: any `.jp/` directory, and the protected directories they are given (the user's jp
 * config directory, jp's user-local data).
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';

export class PathOutsideRootError extends Error {}

/** A path file tools never read or change: jp's configuration, conversations and state. */
export class ProtectedPathError extends Error {}

function realpathOfExistingPrefix(target: string): string {
  let current = target;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(realpathSync(current), ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return target;
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/** Resolves `requested` (relative to the root) and refuses anything that escapes the root. */
export function resolveInsideRoot(root: string, requested: string): string {
  if (requested.includes('\0')) throw new PathOutsideRootError(`path ${JSON.stringify(requested)} contains a NUL byte`);
  const realRoot = realpathOfExistingPrefix(path.resolve(root));
  const resolved = realpathOfExistingPrefix(path.resolve(realRoot, requested));
  const relative = path.relative(realRoot, resolved);
  if (relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new PathOutsideRootError(
      `path ${JSON.stringify(requested)} is outside the workspace (${realRoot}); file tools only work inside it`,
    );
  }
  return resolved;
}

/** The directory name jp keeps a workspace's configuration and conversations in. */
const jpDirectoryName = '.jp';

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Where file tools may go: inside `root`, outside any `.jp/` and outside `protectedDirectories`,
 * each resolved once (symlinks included), so no alias reaches them.
 */
export interface Confinement {
  /** The root, resolved. */
  realRoot: string;
  /** Why an absolute, resolved path is off limits, or undefined when a file tool may use it. */
  refusal(resolved: string): string | undefined;
}

export function confinement(root: string, protectedDirectories: readonly string[]): Confinement {
  const realRoot = realpathOfExistingPrefix(path.resolve(root));
  const realProtected = protectedDirectories.map((directory) => ({
    directory,
    real: realpathOfExistingPrefix(path.resolve(directory)),
  }));
  return {
    realRoot,
    refusal(resolved) {
      if (!isInside(resolved, realRoot)) return `it is outside the workspace (${realRoot})`;
      const relative = path.relative(realRoot, resolved);
      if (relative.split(path.sep).some((part) => part.toLowerCase() === jpDirectoryName))
        return "it is inside .jp/, which holds jp's own configuration and conversations";
      for (const { directory, real } of realProtected)
        if (isInside(resolved, real)) return `it is inside ${directory}, jp's own configuration and state`;
      return undefined;
    },
  };
}

/** resolveInsideRoot, then refuses jp's own directories with a message the model can act on. */
export function resolveForFileTool(root: string, requested: string, protectedDirectories: readonly string[]): string {
  const resolved = resolveInsideRoot(root, requested);
  const reason = confinement(root, protectedDirectories).refusal(resolved);
  if (reason) {
    throw new ProtectedPathError(
      `refused: ${JSON.stringify(requested)} is off limits to file tools because ${reason}. ` +
        "File tools never read or change jp's rules, whatever the policy; ask the user to make this change themselves.",
    );
  }
  return resolved;
}

/**
 * Why writing `requested` plants something git runs later outside any sandbox, or undefined: a path
 * inside any `.git` directory (its config, hooks, info...), or a `.git` file (which names the git
 * directory). Such a write is asked of a human (an `escalate` inquiry, needs `git`), never decided
 * by the `run` policy alone.
 */
export function gitExecutedWrite(root: string, requested: string): string | undefined {
  let resolved: string;
  try {
    resolved = resolveInsideRoot(root, requested);
  } catch {
    return undefined; // refused when the tool runs
  }
  const parts = path.relative(realpathOfExistingPrefix(path.resolve(root)), resolved).split(path.sep);
  const index = parts.findIndex((part) => part.toLowerCase() === '.git');
  if (index < 0) return undefined;
  const shown = parts.join('/');
  const inside = parts[index + 1]?.toLowerCase();
  const what =
    inside === undefined
      ? `${shown} is a .git file: it names the directory git takes this repository's configuration and hooks from`
      : inside === 'hooks'
        ? `${shown} is a git hook: git runs it`
        : inside === 'config' || inside === 'config.worktree'
          ? `${shown} is git's configuration: settings there (core.fsmonitor, core.hooksPath, core.pager, aliases, ` +
            `filters) run programs`
          : `${shown} is inside .git/, which git reads its configuration, hooks and attributes from`;
  return `${what}, with your full rights and outside any sandbox, the next time you or a tool run git here`;
}

export function displayPath(root: string, absolute: string): string {
  return path.relative(realpathOfExistingPrefix(path.resolve(root)), absolute) || '.';
}
