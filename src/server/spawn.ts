/**
 * Client side of starting a query server: re-executes this program with the hidden `__serve`
 * command in a new session (no controlling terminal), its stdout and stderr appended to the run's
 * log (stderr stays the client's with --log-file=-), hands it the run request on fd 3 and waits for
 * its readiness line. The client keeps holding the lock until the server has taken it over and
 * reported ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync } from 'node:fs';
import type net from 'node:net';
import { JpError, RunError, statusOfExitCode } from '../errors.ts';
import type { ReadyMessage, RunRequest } from './run-request.ts';

export interface SpawnedServer {
  pid: number;
  socketPath: string;
}

/** How long a server may take to get ready (loading config and opening its socket). */
const readyTimeoutMilliseconds = 30_000;

function lastLines(file: string, count: number): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-count).join('\n');
  } catch {
    return '';
  }
}

/**
 * The run's log, emptied, never through a symlink. The log is a convenience: one that cannot be
 * opened leaves the server's output nowhere rather than stopping the run.
 */
function openRunLog(file: string): number | 'ignore' {
  try {
    return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND | constants.O_NOFOLLOW, 0o600);
  } catch {
    return 'ignore';
  }
}

export function spawnServer(
  request: RunRequest,
  options: { entry: string; environment: NodeJS.ProcessEnv; /** --log-file=-: the server's tracing goes to our stderr. */ shareStderr: boolean },
): Promise<SpawnedServer> {
  const logFile = request.run_log;
  const log = openRunLog(logFile);
  let child: ChildProcess;
  try {
    // With the client's own Node options (the tsx loader when run from source) and no others.
    child = spawn(process.execPath, [...process.execArgv, options.entry, '__serve'], {
      cwd: request.cwd,
      env: options.environment,
      detached: true,
      stdio: ['ignore', log, options.shareStderr ? 2 : log, 'pipe'],
    });
  } finally {
    if (typeof log === 'number') closeSync(log);
  }
  const channel = child.stdio[3] as net.Socket;
  return new Promise<SpawnedServer>((resolve, reject) => {
    let buffered = '';
    let settled = false;
    const timer = setTimeout(() => fail(new RunError('server_start_timeout', `the query server did not get ready within ${readyTimeoutMilliseconds / 1000} s`, { hint: `Its log is ${logFile}.` })), readyTimeoutMilliseconds);
    const done = (): void => {
      settled = true;
      clearTimeout(timer);
      channel.removeAllListeners();
      channel.destroy();
      child.removeAllListeners('exit');
      child.unref();
    };
    const fail = (error: JpError): void => {
      if (settled) return;
      done();
      reject(error);
    };
    channel.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline === -1 || settled) return;
      let message: ReadyMessage;
      try {
        message = JSON.parse(buffered.slice(0, newline)) as ReadyMessage;
      } catch {
        fail(new RunError('server_start_failed', 'the query server sent an unreadable readiness message', { hint: `Its log is ${logFile}.` }));
        return;
      }
      if (!message.ready) {
        const error = message.error;
        fail(new JpError(statusOfExitCode(error.exit_code), error.code, error.message, error.hint ? { hint: error.hint } : {}));
        return;
      }
      done();
      resolve({ pid: message.pid, socketPath: message.socket_path });
    });
    channel.on('error', () => {
      // the exit handler below reports it
    });
    child.once('exit', (code, signal) => {
      const tail = lastLines(logFile, 5);
      fail(
        new RunError('server_start_failed', `the query server exited before it was ready (${signal ?? `exit code ${code}`})${tail ? `:\n${tail}` : ''}`, {
          hint: `Its log is ${logFile}. Run with --no-server to run the turn in this process.`,
        }),
      );
    });
    channel.write(JSON.stringify(request) + '\n');
  });
}
