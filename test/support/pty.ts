/**
 * A real pseudo-terminal (@lydell/node-pty, prebuilt: no compiler needed) for tests that play a human at a terminal. The command runs in
 * a shell inside the terminal, so pipelines (`echo x | jp query | cat > out`) behave as they would
 * for a user: stdin and stdout are pipes, yet /dev/tty is the terminal. The terminal is held open until
 * everything the shell wrote has been read (held-terminal.ts).
 */
import { holdTerminal } from './held-terminal.ts';
import type { Sandbox } from './jp.ts';

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
  return text
    .replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, '')
    .replace(/\u001b[()][A-Z0-9]/g, '')
    .replace(/\r/g, '');
}

/** Runs a shell command line in a fresh pseudo-terminal with the sandbox environment. */
export function runInTerminal(
  sandbox: Sandbox,
  commandLine: string,
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): TerminalSession {
  const environment = { ...sandbox.env, ...options.env } as Record<string, string>;
  delete environment.CI;
  delete environment.JP_NON_INTERACTIVE;
  delete environment.JP_NONINTERACTIVE;
  let buffer = '';
  const listeners = new Set<() => void>();
  const notify = (): void => {
    for (const listener of [...listeners]) listener();
  };
  const terminal = holdTerminal(
    '/bin/sh',
    ['-c', commandLine],
    { cwd: options.cwd ?? sandbox.workspace, env: environment, columns: 200, rows: 50 },
    (data) => {
      buffer += data;
      notify();
    },
  );
  const exited = terminal.exited.then((event) => {
    terminal.release();
    notify();
    return event;
  });
  return {
    output: () => buffer,
    text: () => stripAnsi(buffer),
    write: (data) => terminal.pty.write(data),
    get pid() {
      return terminal.programPid();
    },
    holderPid: terminal.holderPid,
    kill: (signal = 'SIGHUP') => {
      try {
        process.kill(terminal.programPid(), signal);
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
          reject(
            new Error(`the terminal never showed ${String(pattern)}; it showed:\n${stripAnsi(buffer).slice(-2000)}`),
          );
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
