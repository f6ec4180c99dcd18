/**
 * The workspaces this user's jp has run in on this machine, for clients that show every run
 * (`jp web`): each workspace's user-local directory names its root (workspaceRootFile, written when
 * a query prepares the workspace). A listed root is kept only while it still describes the same
 * directory (its id matches), so a moved or replaced checkout is not taken for another.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { readRegularFile } from './files.ts';
import { dataHome, describeWorkspace, workspaceRootFile, type Workspace } from './workspace.ts';

/** Every workspace a query of this user prepared on this machine and that is still where it was. */
export function knownWorkspaces(environment: NodeJS.ProcessEnv): Workspace[] {
  const base = path.join(dataHome(environment), 'jp', 'workspace');
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  const found: Workspace[] = [];
  for (const name of names.sort()) {
    let record: { root?: unknown; is_default?: unknown };
    try {
      record = JSON.parse(readRegularFile(path.join(base, name, workspaceRootFile), 64 * 1024)?.toString('utf8') ?? '');
    } catch {
      continue;
    }
    if (typeof record?.root !== 'string' || !path.isAbsolute(record.root)) continue;
    const workspace = describeWorkspace(record.root, record.is_default === true, record.root, environment);
    if (workspace.id === name) found.push(workspace);
  }
  return found;
}
