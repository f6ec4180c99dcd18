/**
 * Tool subprocesses: each runs in its own process group (a new session), so the whole tree can be
 * killed by group when the run stops or the call times out. The registry is told about the group
 * so that `jp conversation kill --force` can reach it too.
 *
 * The call ends when the process jp started ends (or at its time limit, or when the run stops),
 * never later: a child that left the group (`setsid cmd &`) may hold the output pipes open for as
 * long as it lives. Once the started process is gone, its group is killed, the output still in the
 * pipes is read for a short grace, and if a pipe is still held open then, the processes carrying
 * this call's marker (see marked-processes.ts) are killed and the pipes closed. The result has the
 * output read so far.
 */
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { killMarkedProcesses, markerVariable } from './marked-processes.ts';
import type { ProcessTracker } from './tool.ts';

export interface SubprocessOptions {
  file: string;
  arguments: string[];
  cwd: string;
  /** The tool's environment (see environment.ts); JP_TOOL_PROCESS is added here. */
  environment: NodeJS.ProcessEnv;
  stdin?: string;
  signal: AbortSignal;
  timeoutMilliseconds: number;
  processes: ProcessTracker;
  /** Stop collecting output beyond this many bytes per stream (the rest is drained and dropped). */
  maxOutputBytes?: number;
  /** Told each piece of output as it is read, decoded (a character split across reads waits for its end). */
  onOutput?(stream: 'stdout' | 'stderr', text: string): void;
}

export interface SubprocessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the program could not be started at all. */
  spawnError?: string;
}

/** From SIGTERM to SIGKILL when the time limit passes or the run stops. */
const killGraceMilliseconds = 1000;
/** How long output is still read after the started process ended. */
const outputGraceMilliseconds = 200;

function killGroup(processGroupId: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-processGroupId, signal);
  } catch {
    // the group is already gone
  }
}

export function runSubprocess(options: SubprocessOptions): Promise<SubprocessResult> {
  const maxBytes = options.maxOutputBytes ?? 4 * 1024 * 1024;
  const marker = options.processes.nextMarker();
  return new Promise((resolve) => {
    const child = spawn(options.file, options.arguments, {
      cwd: options.cwd,
      env: { ...options.environment, [markerVariable]: marker },
      detached: true,
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let escalation: NodeJS.Timeout | undefined;
    let outputGrace: NodeJS.Timeout | undefined;
    const processGroupId = child.pid;
    if (processGroupId !== undefined) options.processes.started(processGroupId, marker);

    const stop = (): void => {
      if (processGroupId === undefined) return;
      killGroup(processGroupId, 'SIGTERM');
      escalation ??= setTimeout(() => killGroup(processGroupId, 'SIGKILL'), killGraceMilliseconds);
    };
    const onAbort = (): void => {
      aborted = true;
      stop();
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    const timeout = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMilliseconds);

    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    const told = (stream: 'stdout' | 'stderr', chunk: Buffer): void => {
      if (options.onOutput) options.onOutput(stream, decoders[stream].write(chunk));
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      if (stdoutBytes < maxBytes) stdout.push(chunk);
      stdoutBytes += chunk.length;
      told('stdout', chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderrBytes < maxBytes) stderr.push(chunk);
      stderrBytes += chunk.length;
      told('stderr', chunk);
    });
    if (options.stdin !== undefined) {
      child.stdin!.on('error', () => {
        // the tool may exit without reading its input
      });
      child.stdin!.end(options.stdin);
    }

    let exit: { exitCode: number | null; signal: NodeJS.Signals | null } | undefined;
    const finish = (result: Omit<SubprocessResult, 'stdout' | 'stderr' | 'timedOut' | 'aborted'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(escalation);
      clearTimeout(outputGrace);
      options.signal.removeEventListener('abort', onAbort);
      if (processGroupId !== undefined) {
        // Anything the tool left behind in its group dies with it.
        killGroup(processGroupId, 'SIGKILL');
        options.processes.ended(processGroupId);
      }
      resolve({
        ...result,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        timedOut,
        aborted,
      });
    };
    child.on('error', (error) => finish({ exitCode: null, signal: null, spawnError: error.message }));
    child.on('exit', (exitCode, signal) => {
      exit = { exitCode, signal };
      if (processGroupId !== undefined) killGroup(processGroupId, 'SIGKILL');
      outputGrace = setTimeout(() => {
        // A pipe is still open: held by a process that left the group.
        killMarkedProcesses(marker);
        child.stdout!.destroy();
        child.stderr!.destroy();
        child.stdin?.destroy();
        finish(exit!);
      }, outputGraceMilliseconds);
    });
    child.on('close', (exitCode, signal) => finish(exit ?? { exitCode, signal }));
  });
}
