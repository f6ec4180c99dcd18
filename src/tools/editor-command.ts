/**
 * A tool's command run in a terminal of the user's editor (ToolContext.editorTerminal), so the user
 * watches it live: the same command line the tool would start here, the sandbox already applied,
 * with the same environment. The editor starts its terminals in its own environment, which may
 * hold provider keys jp keeps from tools; so the terminal runs `env -i` and a shell that reads the
 * tool's environment from a private file (0600, in a 0700 directory), removes it, and executes the
 * command. The values never appear on a command line (where other users could read them).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PreparedCommand } from '../sandbox/engine.ts';
import type { EditorTerminal, EditorTerminalOutcome } from './tool.ts';

export interface EditorCommandResult {
  output: string;
  truncated: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
}

function shellQuoted(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `export NAME='value'` lines for a POSIX shell; names a shell cannot take are left out. */
export function environmentScript(environment: NodeJS.ProcessEnv): string {
  return Object.entries(environment)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(entry[0]))
    .map(([name, value]) => `export ${name}=${shellQuoted(value)}\n`)
    .join('');
}

/** Reads the environment file, removes it, then becomes the command (`"$@"`). */
const launcher = '. "$1" && rm -f -- "$1" && shift && exec "$@"';

export async function runInEditorTerminal(
  terminal: EditorTerminal,
  prepared: PreparedCommand,
  environment: NodeJS.ProcessEnv,
  options: { signal: AbortSignal; timeoutMilliseconds: number; outputByteLimit: number },
): Promise<EditorCommandResult> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'jp-terminal-'));
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMilliseconds);
  let settleStopped: (() => void) | undefined;
  // Settles once the run stops (not on the time limit, whose output goes to the model).
  const stopped = new Promise<EditorTerminalOutcome>((resolve) => {
    settleStopped = () => resolve({ output: '', truncated: false, exitCode: null, signal: null });
  });
  const stop = (): void => {
    controller.abort();
    settleStopped?.();
  };
  options.signal.addEventListener('abort', stop, { once: true });
  if (options.signal.aborted) stop();
  try {
    const file = path.join(directory, 'environment');
    writeFileSync(file, environmentScript(environment), { mode: 0o600, flag: 'wx' });
    const running = terminal.run(
      {
        command: '/usr/bin/env',
        args: ['-i', '/bin/sh', '-c', launcher, 'jp-command', file, prepared.file, ...prepared.arguments],
        cwd: prepared.cwd,
      },
      { signal: controller.signal, outputByteLimit: options.outputByteLimit },
    );
    // The run stopping does not wait for the editor: the kill is sent, and what the command did is
    // not recorded (a stopped call has no result), so the turn ends (and a cancel is answered) at once.
    running.catch(() => {});
    const outcome = await Promise.race([running, stopped]);
    return { ...outcome, timedOut, aborted: options.signal.aborted };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', stop);
    rmSync(directory, { recursive: true, force: true });
  }
}
