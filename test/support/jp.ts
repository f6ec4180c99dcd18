/**
 * Runs the built `jp` binary as a user would, in an isolated sandbox: its own HOME, XDG data and
 * config directories, a workspace, and an environment without CI, API keys or JP_* variables
 * unless a test puts them there. Every run has a safety timeout that fails the test instead of
 * hanging it (never a timed assertion).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { after } from 'node:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type FakeProvider, type FakeProviderOptions, startFakeProvider } from './fake-provider.ts';

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The binary under test; JP_TEST_BINARY points long runs (bench/crash.ts) at a copy that rebuilds cannot touch. */
export const jpBinary = process.env.JP_TEST_BINARY ?? path.join(repositoryRoot, 'dist', 'jp.mjs');

if (!existsSync(jpBinary)) throw new Error(`${jpBinary} is missing: run \`npm run build\` first (npm test does)`);

export interface Sandbox {
  root: string;
  /** The workspace directory (contains .jp/). */
  workspace: string;
  env: NodeJS.ProcessEnv;
  dataHome: string;
  cleanup(): void;
  /** Writes a file relative to the workspace. */
  write(relative: string, content: string): string;
  read(relative: string): string;
  exists(relative: string): boolean;
  /** The user-local directory of the workspace (processes, locks, sessions). */
  userDirectory(): string;
}

export function createSandbox(options: { init?: boolean; config?: string } = {}): Sandbox {
  // Short paths: Unix socket paths must stay under ~100 bytes.
  const root = mkdtempSync(path.join(os.tmpdir(), 'jpt-'));
  const workspace = path.join(root, 'w');
  const dataHome = path.join(root, 'd');
  mkdirSync(workspace, { recursive: true });
  mkdirSync(path.join(root, 'home'), { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: path.join(root, 'home'),
    XDG_DATA_HOME: dataHome,
    XDG_CONFIG_HOME: path.join(root, 'c'),
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    JP_SESSION: 'test',
  };
  if (options.init !== false) {
    mkdirSync(path.join(workspace, '.jp', 'conversations'), { recursive: true });
    if (options.config !== undefined) writeFileSync(path.join(workspace, '.jp', 'config.toml'), options.config);
  }
  return {
    root,
    workspace,
    env,
    dataHome,
    // A query server that has just answered may still be writing (its code cache, its run log) as
    // it exits: retry what that races with (ENOTEMPTY) instead of failing the cleanup.
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }),
    write(relative, content) {
      const file = path.join(workspace, relative);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    read: (relative) => readFileSync(path.join(workspace, relative), 'utf8'),
    exists: (relative) => existsSync(path.join(workspace, relative)),
    userDirectory() {
      const base = path.join(dataHome, 'jp', 'workspace');
      const entries = existsSync(base) ? readdirSync(base) : [];
      if (entries.length !== 1) throw new Error(`expected one user-local workspace directory, found ${entries.length}`);
      return path.join(base, entries[0]!);
    },
  };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Text written to stdin then closed; 'null' = /dev/null; 'open-pipe' = a pipe that never sends and stays open. */
  stdin?: string | 'null' | 'open-pipe';
  /** Safety net only: the test fails with a clear message if the process is still running. */
  timeoutMs?: number;
}

/**
 * Runs jp with no controlling terminal (a new session, like setsid), pipes for stdio.
 */
export function runJp(sandbox: Sandbox, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const child = startJp(sandbox, args, options);
  return collect(child, args, options.timeoutMs ?? 60_000);
}

export function startJp(sandbox: Sandbox, args: string[], options: RunOptions = {}): ChildProcess {
  const stdin = options.stdin ?? 'null';
  const child = spawn(process.execPath, [jpBinary, ...args], {
    cwd: options.cwd ?? sandbox.workspace,
    env: { ...sandbox.env, ...options.env },
    detached: true,
    stdio: [stdin === 'null' ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (typeof stdin === 'string' && stdin !== 'null' && stdin !== 'open-pipe') child.stdin!.end(stdin);
  return child;
}

export function collect(child: ChildProcess, args: string[], timeoutMs: number): Promise<RunResult> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      reject(
        new Error(
          `jp ${args.join(' ')} still running after ${timeoutMs} ms (hung); stderr so far:\n${Buffer.concat(stderr).toString()}`,
        ),
      );
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      child.stdin?.destroy();
      resolve({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
  });
}

/** Writes a test-provider script and returns the --cfg arguments that select it. */
export function testProvider(sandbox: Sandbox, script: unknown, name = 'script.json'): string[] {
  sandbox.write(name, JSON.stringify(script));
  return ['-m', 'test', '-c', `providers.test.script=${name}`];
}

/** A test-script part: the model calls fs_create_file to create `path` with `content`. */
export function createFileCall(path: string, content = path): { tool_call: { name: string; arguments: unknown } } {
  return { tool_call: { name: 'fs_create_file', arguments: { path, content } } };
}

/** Config selecting an OpenAI-compatible fake provider at baseUrl; a dummy key is set in env. */
export function fakeModelArguments(
  wire: 'openai-chat' | 'openai-responses' | 'anthropic',
  baseUrl: string,
): { args: string[]; env: NodeJS.ProcessEnv } {
  switch (wire) {
    case 'openai-chat':
      return {
        args: [
          '-m',
          'openai/gpt-test',
          '-c',
          `providers.openai.base_url="${baseUrl}"`,
          '-c',
          'providers.openai.api="chat"',
        ],
        env: { OPENAI_API_KEY: 'sk-test-key-000000000000000000' },
      };
    case 'openai-responses':
      return {
        args: [
          '-m',
          'openai/gpt-test',
          '-c',
          `providers.openai.base_url="${baseUrl}"`,
          '-c',
          'providers.openai.api="responses"',
        ],
        env: { OPENAI_API_KEY: 'sk-test-key-000000000000000000' },
      };
    case 'anthropic':
      return {
        args: ['-m', 'anthropic/claude-test', '-c', `providers.anthropic.base_url="${baseUrl}"`],
        env: { ANTHROPIC_API_KEY: 'sk-ant-test-key-000000000000000000' },
      };
  }
}

/**
 * A local fake provider (closed after the test file) answering with `steps`, and the arguments and
 * environment that point jp at it. A step's `gate` parts hold its stream until the test opens them.
 */
export async function fakeModel(
  cleanup: { add(cleanup: () => unknown): void },
  steps: FakeProviderOptions['steps'],
  wire: FakeProviderOptions['wire'] = 'openai-chat',
): Promise<{ args: string[]; env: NodeJS.ProcessEnv; provider: FakeProvider }> {
  const provider = await startFakeProvider({ wire, steps });
  cleanup.add(() => provider.close());
  return { ...fakeModelArguments(wire, provider.baseUrl), provider };
}

/**
 * The capability of a running conversation (DESIGN §8), read as `jp conversation attach` reads it:
 * what a test's own client shows in its hello to speak for the user.
 */
export function runCapability(sandbox: Sandbox, conversationId: string): string {
  return readFileSync(path.join(sandbox.userDirectory(), 'processes', `${conversationId}.capability`), 'utf8').trim();
}

/** Parsed events of a conversation (skipping nothing: a bad line fails the parse loudly). */
export function readEvents(sandbox: Sandbox, conversationId: string): Record<string, any>[] {
  const file = path.join(sandbox.workspace, '.jp', 'conversations', conversationId, 'events.ndjson');
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
}

export function conversationIds(sandbox: Sandbox): string[] {
  const directory = path.join(sandbox.workspace, '.jp', 'conversations');
  return existsSync(directory)
    ? readdirSync(directory)
        .filter((name) => name.startsWith('jp-c'))
        .sort()
    : [];
}

export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Polls until `check` returns a value (not undefined/false); fails with `what` after the safety limit. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  limitMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`gave up waiting for: ${what}`);
    await sleep(20);
  }
}

/** Whether a process exists (and is not a zombie). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Pids of the processes whose command line contains every one of `parts` (read from /proc). */
export function processesMatching(...parts: string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (parts.every((part) => commandLine.includes(part))) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/**
 * Cleanup for the enclosing test file or suite: sandboxes it makes and anything added (fake
 * providers) are removed once it is done.
 */
export function useCleanup(): {
  sandbox(options?: { init?: boolean; config?: string }): Sandbox;
  add(cleanup: () => unknown): void;
} {
  const cleanups: (() => unknown)[] = [];
  // Every cleanup runs even when one fails: a fake provider left listening would keep the test
  // file's process alive forever.
  after(async () => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups) {
      try {
        await cleanup();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw failures[0];
  });
  return {
    sandbox(options = {}) {
      const sandbox = createSandbox(options);
      cleanups.push(() => sandbox.cleanup());
      return sandbox;
    },
    add(cleanup) {
      cleanups.push(cleanup);
    },
  };
}
