/**
 * Ownership, as Git's `safe.directory` (DESIGN §10): another local user who can write a workspace's
 * `.jp/`, or its conversation files, could make jp act for its user. So a workspace whose root or
 * `.jp/` is owned by another user, or whose `.jp/` (or `.jp/conversations/`) is writable by group
 * or others, is refused; and so is any conversation file (opened by files.ts) owned by another user
 * or writable by group or others. jp never makes them so (0700 directories, 0600 files).
 *
 * The way out is the user's own: `safe.directories` in the user config (never a workspace's) lists
 * workspace roots whose ownership is accepted as it is, or `"*"` for all. Read only when a problem
 * is found (config/safe-directories.ts); accepted roots are remembered for the process here.
 */
import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import path from 'node:path';
import { DamagedFileError, RunError } from '../errors.ts';

export interface OwnershipProblem {
  path: string;
  problem: string;
}

const ownUid = (): number | undefined => process.geteuid?.();

/** What is wrong with `stat` for a file or directory jp keeps in a workspace; undefined: nothing. */
export function ownershipProblemOf(
  stat: Stats,
  options: { modeMatters: boolean } = { modeMatters: true },
): string | undefined {
  const uid = ownUid();
  if (uid === undefined) return undefined;
  if (stat.uid !== uid) return `is owned by another user (uid ${stat.uid}; you are uid ${uid})`;
  if (options.modeMatters && (stat.mode & 0o022) !== 0) {
    const group = stat.mode & 0o020 ? 'its group' : '';
    const both = (stat.mode & 0o022) === 0o022 ? ' and ' : '';
    const others = stat.mode & 0o002 ? 'others' : '';
    return `is writable by ${group}${both}${others} (mode ${(stat.mode & 0o777).toString(8)})`;
  }
  return undefined;
}

/**
 * The ownership problems of a workspace: its root (another owner), `.jp/` and `.jp/conversations/`
 * (another owner, or writable by group or others). Empty when all is well.
 */
export function workspaceOwnershipProblems(root: string): OwnershipProblem[] {
  const problems: OwnershipProblem[] = [];
  const check = (target: string, modeMatters: boolean): void => {
    let stat: Stats;
    try {
      // A symbolic link's own mode is always 777: judge what it points to (whether a link may stand
      // there at all is the workspace's own check, e.g. a linked .jp/conversations is refused).
      stat = lstatSync(target);
      if (stat.isSymbolicLink()) stat = statSync(target);
    } catch {
      return; // absent: nothing of anyone's to use
    }
    const problem = ownershipProblemOf(stat, { modeMatters });
    if (problem) problems.push({ path: target, problem });
  };
  check(root, false);
  check(path.join(root, '.jp'), true);
  check(path.join(root, '.jp', 'conversations'), true);
  return problems;
}

const acceptedRoots: string[] = [];
let acceptsAll = false;

/** Remembers, for this process, that the user declared these workspace roots (or all: `*`) safe. */
export function acceptOwnership(directories: readonly string[]): void {
  for (const directory of directories) {
    if (directory === '*') acceptsAll = true;
    else acceptedRoots.push(realOrSame(directory));
  }
}

function realOrSame(target: string): string {
  try {
    return realpathSync(target);
  } catch {
    return path.resolve(target);
  }
}

function isAccepted(target: string): boolean {
  if (acceptsAll) return true;
  const real = realOrSame(target);
  return acceptedRoots.some(
    (root) => real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep),
  );
}

/** The way out, for messages. */
export function safeDirectoryHint(root: string): string {
  return [
    'Another user could make jp act for you through it (as Git refuses such a repository).',
    `If it is yours, fix its owner or mode (chmod go-w). If you trust it as it is, add it to your user config ` +
      `(~/.config/jp/config.toml):`,
    `  [safe]`,
    `  directories = [${JSON.stringify(root)}]`,
  ].join('\n');
}

/** The ownership problems of the workspace at `root` that the user has not accepted; empty: jp may use it. */
export function refusedOwnership(root: string): OwnershipProblem[] {
  const problems = workspaceOwnershipProblems(root);
  return problems.length === 0 || isAccepted(root) ? [] : problems;
}

/** The warning for a workspace passed over on the way up (workspace.ts findWorkspaceRoot). */
export function skippedWorkspaceWarning(skipped: { root: string; problems: readonly OwnershipProblem[] }): string {
  const problems = skipped.problems.map((entry) => `${entry.path} ${entry.problem}`).join('; ');
  return (
    `ignoring the workspace ${skipped.root} (${problems}): jp goes on as if it were not there. \`jp init\` ` +
    `makes a workspace in your directory; to use that one as it is, list ${JSON.stringify(skipped.root)} in [safe] ` +
    `directories of your user config.`
  );
}

/** Refuses a workspace with ownership problems, unless the user declared it safe (see acceptOwnership). */
export function assertWorkspaceOwnership(root: string, problems: readonly OwnershipProblem[]): void {
  if (problems.length === 0 || isAccepted(root)) return;
  throw new RunError(
    'unsafe_workspace',
    `refusing the workspace ${root}: ${problems.map((entry) => `${entry.path} ${entry.problem}`).join('; ')}`,
    {
      hint: safeDirectoryHint(root),
    },
  );
}

/**
 * Refuses a conversation file (already opened: `stat` is of what was opened) that another user owns
 * or could write, unless it lies in a workspace the user declared safe. Files jp keeps outside
 * workspaces (user-local state) are the user's own by construction and checked the same way.
 */
export function assertOwnFile(file: string, stat: Stats): void {
  const problem = ownershipProblemOf(stat);
  if (!problem || isAccepted(file)) return;
  throw new DamagedFileError(file, problem, {
    hint: `jp left it untouched. ${safeDirectoryHint(workspaceRootOf(file))}`,
  });
}

/** The workspace root of a file under `<root>/.jp/`, else its directory. */
function workspaceRootOf(file: string): string {
  const parts = file.split(path.sep);
  const index = parts.lastIndexOf('.jp');
  return index > 0 ? parts.slice(0, index).join(path.sep) || path.sep : path.dirname(file);
}
