/**
 * A real pseudo-terminal (@lydell/node-pty, prebuilt: no compiler needed) for tests that play a human at a terminal. The command runs in
 * a shell inside the terminal, so pipelines (`echo x | jp query | cat > out`) behave as they would
 * for a user: stdin and stdout are pipes, yet /dev/tty is the terminal. The shell runs under
 * terminal-holder.mjs, which keeps the terminal open until everything the shell wrote has been
 * read (the pty library stops reading soon after its child exits, and under load it lost the
 * shell's last line).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sandbox } from './jp.ts';

const require = createRequire(import.meta.url);
const pty = require('@lydell/node-pty') as typeof import('@lydell/node-pty');
const holder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'terminal-holder.mjs');
/** What the holder writes once the shell has exited: `ESC ] 7770 ; exit ; <code> ; <signal> BEL`. */
const exitMark = /\u001b\]7770;exit;(\d+);(\d+)\u0007/;

export interface TerminalSession {
  /** Everything the terminal showed so far (ANSI sequences included). */
  output(): string;
  /** Output with ANSI sequences removed. */
  text(): string;
  write(data: string): void;
  /** Resolves when `pattern` has appeared (after `from` characters of text); fails after the safety limit. */
  waitFor(pattern: string | RegExp, options?: { from?: number; limitMs?: number }): Promise<void>;
  /** Resolves once the shell has exited and all it wrote was read. */
  exited: Promise<{ exitCode: number; signal?: number }>;
  /** The shell's pid. */
  pid: number;
  /** The pid of the holder process above the shell (its command line repeats the shell's). */
  holderPid: number;
  /** Sends the shell a signal (a hang-up unless named), as closing the terminal would. */
  kill(signal?: NodeJS.Signals): void;
}

export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '').replace(/\u001b[()][A-Z0-9]/g, '').replace(/\r/g, '');
}

/** Runs a shell command line in a fresh pseudo-terminal with the sandbox environment. */
export function runInTerminal(sandbox: Sandbox, commandLine: string, options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): TerminalSession {
  const environment = { ...sandbox.env, ...options.env } as Record<string, string>;
  delete environment.CI;
  delete environment.JP_NON_INTERACTIVE;
  delete environment.JP_NONINTERACTIVE;
  const pidDirectory = mkdtempSync(path.join(os.tmpdir(), 'jp-pty-'));
  const pidFile = path.join(pidDirectory, 'pid');
  const terminal = pty.spawn(process.execPath, [holder, pidFile, '/bin/sh', '-c', commandLine], {
    cwd: options.cwd ?? sandbox.workspace,
    env: environment,
    cols: 200,
    rows: 50,
    name: 'xterm-256color',
  });
  let buffer = '';
  let shellExited = false;
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const listener of [...listeners]) listener();
  };
  let resolveExit!: (event: { exitCode: number; signal?: number }) => void;
  const exited = new Promise<{ exitCode: number; signal?: number }>((resolve) => (resolveExit = resolve));
  const releaseHolder = (): void => {
    try {
      terminal.kill('SIGKILL');
    } catch {
      // already gone
    }
    rmSync(pidDirectory, { recursive: true, force: true });
  };
  terminal.onData((data) => {
    if (shellExited) return;
    // A mark split across two reads begins in the tail of what was read before.
    const tail = buffer.slice(-32);
    const mark = exitMark.exec(tail + data);
    if (!mark) {
      buffer += data;
      notify();
      return;
    }
    shellExited = true;
    buffer = buffer.slice(0, buffer.length - tail.length) + (tail + data).slice(0, mark.index);
    const signal = Number(mark[2]);
    resolveExit(signal === 0 ? { exitCode: Number(mark[1]) } : { exitCode: Number(mark[1]), signal });
    releaseHolder();
    notify();
  });
  // The holder is killed only once the shell's exit is seen; an earlier end is the holder's failure.
  terminal.onExit((event) => {
    if (shellExited) return;
    shellExited = true;
    resolveExit({ exitCode: event.exitCode, ...(event.signal ? { signal: event.signal } : {}) });
    rmSync(pidDirectory, { recursive: true, force: true });
    notify();
  });
  let shellPid: number | undefined;
  const pid = (): number => {
    if (shellPid !== undefined) return shellPid;
    const deadline = Date.now() + 30_000;
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8') === '') {
      if (Date.now() > deadline) throw new Error(`the terminal's shell never started (no pid in ${pidFile})`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
    shellPid = Number(readFileSync(pidFile, 'utf8'));
    return shellPid;
  };
  return {
    output: () => buffer,
    text: () => stripAnsi(buffer),
    write: (data) => terminal.write(data),
    get pid() {
      return pid();
    },
    holderPid: terminal.pid,
    kill: (signal = 'SIGHUP') => {
      try {
        process.kill(pid(), signal);
      } catch {
        // the shell is gone
      }
    },
    exited,
    waitFor(pattern, waitOptions = {}) {
      const from = waitOptions.from ?? 0;
      const matches = (): boolean => {
        const text = stripAnsi(buffer).slice(from);
        return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
      };
      if (matches()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`the terminal never showed ${String(pattern)}; it showed:\n${stripAnsi(buffer).slice(-2000)}`));
        }, waitOptions.limitMs ?? 20_000);
        const check = (): void => {
          if (!matches()) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        void exited.then(check);
      });
    },
  };
}

/** Single-quotes a string for /bin/sh. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
