/**
 * A real pseudo-terminal (@lydell/node-pty, prebuilt: no compiler needed) for tests that play a human at a terminal. The command runs in
 * a shell inside the terminal, so pipelines (`echo x | jp query | cat > out`) behave as they would
 * for a user: stdin and stdout are pipes, yet /dev/tty is the terminal.
 */
import { createRequire } from 'node:module';
import type { Sandbox } from './jp.ts';

const require = createRequire(import.meta.url);
const pty = require('@lydell/node-pty') as typeof import('@lydell/node-pty');

export interface TerminalSession {
  /** Everything the terminal showed so far (ANSI sequences included). */
  output(): string;
  /** Output with ANSI sequences removed. */
  text(): string;
  write(data: string): void;
  /** Resolves when `pattern` has appeared (after `from` characters of text); fails after the safety limit. */
  waitFor(pattern: string | RegExp, options?: { from?: number; limitMs?: number }): Promise<void>;
  exited: Promise<{ exitCode: number; signal?: number }>;
  pid: number;
  kill(signal?: string): void;
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
  const terminal = pty.spawn('/bin/sh', ['-c', commandLine], {
    cwd: options.cwd ?? sandbox.workspace,
    env: environment,
    cols: 200,
    rows: 50,
    name: 'xterm-256color',
  });
  let buffer = '';
  const listeners = new Set<() => void>();
  terminal.onData((data) => {
    buffer += data;
    for (const listener of [...listeners]) listener();
  });
  const exited = new Promise<{ exitCode: number; signal?: number }>((resolve) => terminal.onExit((event) => resolve(event)));
  return {
    output: () => buffer,
    text: () => stripAnsi(buffer),
    write: (data) => terminal.write(data),
    pid: terminal.pid,
    kill: (signal) => terminal.kill(signal),
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
        void exited.then(() => setTimeout(check, 10));
      });
    },
  };
}

/** Single-quotes a string for /bin/sh. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
