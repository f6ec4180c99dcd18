/**
 * What a sandboxed command must not reach besides the credentials of credentials.ts, found on the
 * machine as it is when the command starts: the sockets and directories through which a process
 * acts for the user (an agent, a terminal multiplexer, a display, a container daemon, the session
 * bus), and the home directory's history files. A Unix socket is reachable from another network
 * namespace: only hiding its path keeps a command from speaking to it.
 */
import { lstatSync, mkdirSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { entriesStartingWith } from '../config/paths.ts';
import { isHistoryName } from './credentials.ts';
import { expandPath, gitExecutedEntries, isInside, type FileSystemFacts } from './plan.ts';
import type { SandboxSettings } from './settings.ts';

/** The file system as it is. */
export const realFileSystem: FileSystemFacts = {
  realPath(file) {
    // Most hidden paths do not exist: lstat says so without the cost of a thrown error.
    if (!lstatSync(file, { throwIfNoEntry: false })) return undefined;
    try {
      return realpathSync.native(file);
    } catch {
      return undefined;
    }
  },
  kind(file) {
    try {
      const stats = lstatSync(file);
      return stats.isDirectory() ? 'directory' : stats.isFile() ? 'file' : 'other';
    } catch {
      return undefined;
    }
  },
};

/** The sockets and runtime directories that act for the user, and the home directory's histories. */
export function userAgentPaths(environment: NodeJS.ProcessEnv): string[] {
  const home = environment.HOME || os.homedir();
  const uid = process.getuid?.();
  const temporaryDirectories = [...new Set([os.tmpdir(), '/tmp'])];
  const paths = [
    '/var/run/docker.sock',
    '/run/docker.sock',
    '/run/containerd/containerd.sock',
    '/run/podman/podman.sock',
    '/tmp/.X11-unix',
    ...(environment.SSH_AUTH_SOCK ? [environment.SSH_AUTH_SOCK] : []),
    ...(environment.XDG_RUNTIME_DIR ? [environment.XDG_RUNTIME_DIR] : []),
    // The runtime directory exists whether or not this environment names it (cron, su, CI shells).
    ...(uid === undefined ? [] : [path.join('/run/user', String(uid))]),
    ...screenDirectories(),
    ...temporaryDirectories.flatMap((directory) => [
      ...(uid === undefined ? [] : [path.join(directory, `tmux-${uid}`)]),
      ...entriesStartingWith(directory, 'ssh-').map((name) => path.join(directory, name)),
    ]),
    ...entriesStartingWith(home, '.')
      .filter(isHistoryName)
      .map((name) => path.join(home, name)),
  ];
  return [...new Set(paths)];
}

/** GNU screen's socket directory of this user (none when the user has no name: a container's arbitrary uid). */
function screenDirectories(): string[] {
  try {
    return [path.join('/run/screen', `S-${os.userInfo().username}`)];
  } catch {
    return [];
  }
}

/** The directories a command may write under these settings (the private TMPDIR aside). */
export function writableDirectoriesOf(settings: SandboxSettings, toolRoot: string, home: string): string[] {
  if (settings.mode !== 'workspace-write') return [];
  return [toolRoot, ...settings.writableRoots.map((root) => expandPath(root, home, toolRoot))];
}

/**
 * Before a command runs: makes (0700) each of jp's directories that the command could otherwise
 * make, being inside one of `writableDirectories`; and in a repository at the top of one of them,
 * `.git/hooks/` and `.git/info/` when missing (as `git init` makes them), so that the read-only
 * rule on them holds from the first command.
 */
export function createBeforeUse(writableDirectories: readonly string[], ownDirectories: readonly string[]): void {
  const roots = writableDirectories.flatMap((directory) => {
    const real = realFileSystem.realPath(directory);
    return real === undefined ? [] : [real];
  });
  for (const directory of ownDirectories) {
    const real = realPathOfExistingPrefix(directory);
    if (roots.some((root) => isInside(real, root))) mkdirSync(directory, { recursive: true, mode: 0o700 });
  }
  for (const root of roots) {
    const gitDirectory = path.join(root, '.git');
    if (realFileSystem.kind(gitDirectory) !== 'directory') continue;
    for (const entry of gitExecutedEntries.filter((name) => name === 'hooks' || name === 'info')) {
      try {
        mkdirSync(path.join(gitDirectory, entry));
      } catch {
        // there already (or the repository cannot be written: then the command cannot either)
      }
    }
  }
}

/** The real path of `file`, resolving the part of it that exists. */
function realPathOfExistingPrefix(file: string): string {
  const rest: string[] = [];
  let current = path.resolve(file);
  for (;;) {
    const real = realFileSystem.realPath(current);
    if (real !== undefined) return path.join(real, ...rest.reverse());
    const parent = path.dirname(current);
    if (parent === current) return file;
    rest.push(path.basename(current));
    current = parent;
  }
}
