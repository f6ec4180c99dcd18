/**
 * A pseudo-terminal (@lydell/node-pty) whose first process is terminal-holder.mjs, running the
 * program under test: the terminal stays open until everything the program wrote has been read
 * (the pty library stops reading soon after its child exits, and under load it lost the last
 * output). The holder marks the program's exit in the output; what reaches `onOutput` is the
 * program's output alone. Used by the screen harness (screen.ts) and the byte-level one (pty.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const pty = require('@lydell/node-pty') as typeof import('@lydell/node-pty');

const holder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'terminal-holder.mjs');
/** What the holder writes once the program has exited: `ESC ] 7770 ; exit ; <code> ; <signal> BEL`. */
const exitMark = /\u001b\]7770;exit;(\d+);(\d+)\u0007/;
const exitMarkStart = '\u001b]7770;exit;';

export interface ProgramExit {
  exitCode: number;
  signal?: number;
}

export interface HeldTerminal {
  /** The terminal: what is written to it is typed at the program; it can be resized. */
  readonly pty: import('@lydell/node-pty').IPty;
  /** Resolves once the program has exited and all its output went to `onOutput`. */
  readonly exited: Promise<ProgramExit>;
  /** The pid of the holder (its command line repeats the program's). */
  readonly holderPid: number;
  /** The program's pid (not the holder's): what a person's `kill` would address. */
  programPid(): number;
  /** Ends the holder and frees the terminal. */
  release(): void;
}

/** Where a possible beginning of the exit mark starts at the end of `text` (text.length when none). */
function heldBackFrom(text: string): number {
  const escapeAt = text.lastIndexOf('\u001b');
  if (escapeAt === -1) return text.length;
  const rest = text.slice(escapeAt);
  const couldBeMark = !rest.includes('\u0007') && (rest.startsWith(exitMarkStart) || exitMarkStart.startsWith(rest));
  return couldBeMark ? escapeAt : text.length;
}

export function holdTerminal(
  file: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; columns: number; rows: number },
  onOutput: (data: string) => void,
): HeldTerminal {
  const pidDirectory = mkdtempSync(path.join(os.tmpdir(), 'jp-terminal-'));
  const pidFile = path.join(pidDirectory, 'pid');
  const terminal = pty.spawn(process.execPath, [holder, pidFile, file, ...args], {
    cwd: options.cwd,
    env: options.env,
    cols: options.columns,
    rows: options.rows,
    name: options.env.TERM ?? 'xterm-256color',
  });
  let resolveExit!: (event: ProgramExit) => void;
  const exited = new Promise<ProgramExit>((resolve) => (resolveExit = resolve));
  let programExited = false;
  // Output that may be the start of the exit mark, kept until the next read tells.
  let pending = '';
  terminal.onData((data) => {
    if (programExited) return;
    const text = pending + data;
    const mark = exitMark.exec(text);
    if (mark) {
      programExited = true;
      pending = '';
      if (mark.index > 0) onOutput(text.slice(0, mark.index));
      const signal = Number(mark[2]);
      resolveExit(signal === 0 ? { exitCode: Number(mark[1]) } : { exitCode: Number(mark[1]), signal });
      return;
    }
    const cut = heldBackFrom(text);
    pending = text.slice(cut);
    if (cut > 0) onOutput(text.slice(0, cut));
  });
  // The holder is ended only once the program's exit is seen; an earlier end is the holder's failure.
  terminal.onExit((event) => {
    if (programExited) return;
    programExited = true;
    if (pending) onOutput(pending);
    resolveExit({ exitCode: event.exitCode, ...(event.signal ? { signal: event.signal } : {}) });
  });
  let programPid: number | undefined;
  return {
    pty: terminal,
    exited,
    holderPid: terminal.pid,
    programPid() {
      if (programPid !== undefined) return programPid;
      const deadline = Date.now() + 30_000;
      while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8') === '') {
        if (Date.now() > deadline) throw new Error(`the terminal's program never started (no pid in ${pidFile})`);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
      programPid = Number(readFileSync(pidFile, 'utf8'));
      return programPid;
    },
    release() {
      try {
        terminal.kill('SIGKILL');
      } catch {
        // already gone
      }
      rmSync(pidDirectory, { recursive: true, force: true });
    },
  };
}
