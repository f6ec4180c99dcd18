/**
 * Workspaces (DESIGN §6): the nearest `.jp/` upward from the working directory, or a per-user
 * default workspace. User-local state lives outside `.jp/` (which users commit), under
 * `$XDG_DATA_HOME/jp/workspace/<workspace-id>/`.
 */
import { existsSync, lstatSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { DamagedFileError } from '../errors.ts';
import {
  describeFileType,
  ensurePrivateDirectory,
  makeDirectories,
  readRegularFile,
  writeFileAtomic,
} from './files.ts';
import { refusedOwnership, type OwnershipProblem } from './ownership.ts';

export const workspaceDirectoryName = '.jp';

export interface Workspace {
  /** The directory that contains `.jp/`. */
  root: string;
  /** `<root>/.jp` */
  dataDirectory: string;
  conversationsDirectory: string;
  configFile: string;
  /** `<basename>-<12 hex of the root's real path>`: stable per checkout, distinct per clone. */
  id: string;
  /** True for the per-user workspace used outside any `.jp/`. */
  isDefault: boolean;
  /** Where file tools are confined: the root, or the working directory for the default workspace. */
  toolRoot: string;
  /** `$XDG_DATA_HOME/jp/workspace/<id>`: processes, locks, sessions, logs. */
  userDirectory: string;
  /**
   * Workspaces found on the way up that jp refused (another user could write them; ownership.ts)
   * and passed over, nearest first: the caller warns about each once.
   */
  skipped: SkippedWorkspace[];
}

export interface SkippedWorkspace {
  root: string;
  problems: OwnershipProblem[];
}

export function dataHome(environment: NodeJS.ProcessEnv): string {
  return environment.XDG_DATA_HOME || path.join(environment.HOME || os.homedir(), '.local', 'share');
}

/**
 * The nearest directory at or above `start` that contains a `.jp/` jp may use. One another user
 * could write (another owner, group- or world-writable, unless the user's safe.directories accepts
 * it) is passed over as if it were not there, and named in `skipped`: on a shared host another
 * user's `/tmp/.jp` must neither be used nor stop jp in every directory below it.
 */
export function findWorkspaceRoot(start: string): { root: string | undefined; skipped: SkippedWorkspace[] } {
  const skipped: SkippedWorkspace[] = [];
  let directory = path.resolve(start);
  for (;;) {
    const candidate = path.join(directory, workspaceDirectoryName);
    let found = false;
    try {
      found = statSync(candidate).isDirectory();
    } catch {
      // not here; keep looking upward
    }
    if (found) {
      const problems = refusedOwnership(directory);
      if (problems.length === 0) return { root: directory, skipped };
      skipped.push({ root: directory, problems });
    }
    const parent = path.dirname(directory);
    if (parent === directory) return { root: undefined, skipped };
    directory = parent;
  }
}

export function defaultWorkspaceRoot(environment: NodeJS.ProcessEnv): string {
  return path.join(dataHome(environment), 'jp', 'default-workspace');
}

export function resolveWorkspace(cwd: string, environment: NodeJS.ProcessEnv): Workspace {
  const { root: found, skipped } = findWorkspaceRoot(cwd);
  const root = found ?? defaultWorkspaceRoot(environment);
  return {
    ...describeWorkspace(root, found === undefined, found === undefined ? path.resolve(cwd) : root, environment),
    skipped,
  };
}

export function describeWorkspace(
  root: string,
  isDefault: boolean,
  toolRoot: string,
  environment: NodeJS.ProcessEnv,
): Workspace {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // the default workspace may not exist yet
  }
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 12);
  const base = path.basename(real).replace(/[^A-Za-z0-9._-]/g, '_') || 'root';
  const id = `${base}-${hash}`;
  const dataDirectory = path.join(root, workspaceDirectoryName);
  return {
    root,
    dataDirectory,
    conversationsDirectory: path.join(dataDirectory, 'conversations'),
    configFile: path.join(dataDirectory, 'config.toml'),
    id,
    isDefault,
    toolRoot,
    userDirectory: path.join(dataHome(environment), 'jp', 'workspace', id),
    skipped: [],
  };
}

/** Creates the directories a query needs; the default workspace is created on first use. */
export function prepareWorkspace(workspace: Workspace): void {
  if (workspace.isDefault) ensurePrivateDirectory(workspace.dataDirectory);
  assertConversationsDirectory(workspace.conversationsDirectory, () =>
    makeDirectories(workspace.conversationsDirectory, 0o700),
  );
  recordWorkspace(workspace);
}

/** The file of a workspace's user-local directory that names its root (workspace/known-workspaces.ts). */
export const workspaceRootFile = 'root.json';

/**
 * Names the workspace's root in its user-local directory, for clients that list every workspace
 * (`jp web`); rewritten only when it differs. A directory that cannot be written is reported by
 * the query's own use of it, not here.
 */
function recordWorkspace(workspace: Workspace): void {
  const file = path.join(workspace.userDirectory, workspaceRootFile);
  const content = JSON.stringify({ root: workspace.root, is_default: workspace.isDefault }) + '\n';
  try {
    if (readRegularFile(file, 64 * 1024)?.toString('utf8') === content) return;
    ensurePrivateDirectory(workspace.userDirectory);
    writeFileAtomic(file, content);
  } catch {
    // see above
  }
}

/**
 * `.jp/conversations` must be a real directory: a symbolic link is refused, never followed or
 * written through (it could point anywhere), and a file there is named as damage. `create` makes
 * it when it is missing; without it, a missing directory is fine (there are no conversations).
 */
export function assertConversationsDirectory(directory: string, create?: () => void): void {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(directory);
  } catch {
    if (!create) return;
    create();
    stat = lstatSync(directory);
  }
  if (stat.isSymbolicLink()) {
    throw new DamagedFileError(
      directory,
      'is a symbolic link; jp keeps conversations only in a real directory of the workspace',
      {
        hint:
          'jp left it untouched. Replace it with a directory (move the link away; `jp init` makes a new one), ' +
          'then run again.',
      },
    );
  }
  if (!stat.isDirectory()) {
    throw new DamagedFileError(directory, `is ${describeFileType(stat)}, not the directory jp keeps conversations in`, {
      hint: 'jp left it untouched. Move it away (jp then makes the directory), then run again.',
    });
  }
}

/** `acp`: what an editor set in a session (its mode, its model choice), kept for the next connection. */
export type UserSubdirectory = 'processes' | 'locks' | 'sessions' | 'logs' | 'acp';

/** A private (0700) directory of the workspace's user-local state, created on demand. */
export function userSubdirectory(workspace: Workspace, name: UserSubdirectory): string {
  const directory = path.join(workspace.userDirectory, name);
  if (!existsSync(directory)) ensurePrivateDirectory(directory);
  return directory;
}
