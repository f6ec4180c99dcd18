/**
 * Confinement of file tools to the tool root (DESIGN §10): a path must stay inside it after `..`
 * and symlinks are resolved.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';

export class PathOutsideRootError extends Error {}

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

export function displayPath(root: string, absolute: string): string {
  return path.relative(realpathOfExistingPrefix(path.resolve(root)), absolute) || '.';
}
