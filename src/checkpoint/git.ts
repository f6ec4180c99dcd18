/**
 * Running git against a shadow repository (DESIGN §10, "Checkpoints"): a git directory in jp's
 * user-local state whose work tree is the workspace. Nothing of the workspace's own git is used: no
 * `.git` is looked for (GIT_DIR is given), no system or global config is read (GIT_CONFIG_NOSYSTEM,
 * GIT_CONFIG_GLOBAL=/dev/null, HOME and XDG_CONFIG_HOME pointed at the store), no hook, fsmonitor or
 * filter driver can run (the only config is the store's own, written by jp), and the workspace's
 * `.gitattributes` cannot rewrite bytes (the store's `info/attributes` unsets every conversion).
 * The environment is built from nothing but PATH, so the user's GIT_* variables change nothing.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

export class GitError extends Error {
  readonly exitCode: number | null;
  readonly stderr: string;

  constructor(args: readonly string[], exitCode: number | null, stderr: string) {
    super(`git ${args[0] ?? ''} failed (exit ${exitCode}): ${stderr.trim().split('\n').slice(-3).join(' / ')}`);
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/**
 * The git program on PATH, skipping relative entries and entries inside `workspace` (a repository
 * could ship a `git` of its own); undefined when there is none.
 */
export function findGit(searchPath: string | undefined, workspace: string): string | undefined {
  for (const directory of (searchPath ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(directory)) continue;
    const relative = path.relative(workspace, directory);
    if (relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))) continue;
    const candidate = path.join(directory, 'git');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface GitTarget {
  program: string;
  /** The shadow repository (a bare git directory). */
  gitDirectory: string;
  /** The workspace directory whose state it records. */
  workTree: string;
  /** The index this caller works with (one per conversation, so runs never wait on each other). */
  indexFile: string;
  /** Where HOME and XDG_CONFIG_HOME point: no user config is found there. */
  home: string;
}

export interface GitCall {
  input?: string | Buffer;
  /** Ends git when it has written more than this many NUL-separated records (a workspace too large). */
  maxRecords?: number;
  /** Ends git when it has not finished after this long (a workspace too large to list quickly). */
  timeoutMilliseconds?: number;
}

export interface GitOutput {
  stdout: Buffer;
  /** True when git was ended because its output passed maxRecords or it ran out of time. */
  cut: boolean;
}

/** `init` makes the repository: it is given its directory, not GIT_DIR and the work tree. */
function environment(target: GitTarget, inherited: NodeJS.ProcessEnv, init: boolean): NodeJS.ProcessEnv {
  const repository = init
    ? {}
    : { GIT_DIR: target.gitDirectory, GIT_WORK_TREE: target.workTree, GIT_INDEX_FILE: target.indexFile };
  return {
    ...repository,
    PATH: inherited.PATH ?? '/usr/bin:/bin',
    HOME: target.home,
    XDG_CONFIG_HOME: target.home,
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'jp',
    GIT_AUTHOR_EMAIL: 'jp@localhost',
    GIT_COMMITTER_NAME: 'jp',
    GIT_COMMITTER_EMAIL: 'jp@localhost',
  };
}

/** Runs `git <args>` on the target; resolves with its stdout, rejects with a GitError. */
export function git(
  target: GitTarget,
  args: readonly string[],
  inherited: NodeJS.ProcessEnv,
  call: GitCall = {},
): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(target.program, [...args], {
      cwd: target.workTree,
      env: environment(target, inherited, args[0] === 'init'),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let records = 0;
    let cut = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (cut) return;
      stdout.push(chunk);
      if (call.maxRecords === undefined) return;
      for (const byte of chunk) if (byte === 0) records++;
      if (records > call.maxRecords) {
        cut = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer =
      call.timeoutMilliseconds === undefined
        ? undefined
        : setTimeout(() => {
            cut = true;
            child.kill('SIGKILL');
          }, call.timeoutMilliseconds);
    child.on('error', reject);
    child.stdin.on('error', () => {
      // git may exit before reading all of its input; its exit status says what happened
    });
    child.stdin.end(call.input ?? '');
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      if (cut) resolve({ stdout: Buffer.concat(stdout), cut: true });
      else if (code === 0) resolve({ stdout: Buffer.concat(stdout), cut: false });
      else reject(new GitError(args, code, Buffer.concat(stderr).toString('utf8')));
    });
  });
}

/** NUL-separated records of git's `-z` output. */
export function records(output: Buffer): string[] {
  const text = output.toString('utf8');
  const parts = text.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}
