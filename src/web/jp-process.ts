/**
 * jp commands a source runs for the page, each in its conversation's workspace, as the user would
 * type them: `jp conversation kill`, `jp conversation diff`, and `jp query --continue --stdio`
 * (a deferred run continued, with the page's answer given through the client protocol).
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface JpProgram {
  /** The entry file of this jp (what `node` runs). */
  programFile: string;
  environment: NodeJS.ProcessEnv;
}

export function startJp(program: JpProgram, cwd: string, args: string[], stdin: 'pipe' | 'ignore'): ChildProcess {
  // Never a terminal, never interactive: the page is the only one who answers, through the protocol.
  const environment: NodeJS.ProcessEnv = { ...program.environment, NO_COLOR: '1' };
  delete environment.JP_SESSION;
  return spawn(process.execPath, [program.programFile, ...args], {
    cwd,
    env: environment,
    stdio: [stdin, 'pipe', 'pipe'],
    detached: true,
  });
}

/** Runs a jp command to its end: its exit code and what it printed. */
export function runJpCommand(
  program: JpProgram,
  cwd: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = startJp(program, cwd, args, 'ignore');
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => resolve({ code: 1, stdout: '', stderr: error.message }));
    child.on('close', (code) =>
      resolve({
        code: code ?? 1,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      }),
    );
  });
}
