/**
 * Client side of starting a query server: re-executes this program with the hidden `__serve`
 * command in a new session (no controlling terminal), its stdout and stderr appended to the run's
 * log (stderr stays the client's with --log-file=-), hands it the run request on fd 3 and waits for
 * its readiness line. The client keeps holding the lock until the server has taken it over and
 * reported ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import type net from 'node:net';
import { entriesStartingWith } from '../config/paths.ts';
import { asSystemError, JpError, RunError, statusOfExitCode } from '../errors.ts';
import { processExists } from '../workspace/process-identity.ts';
import type { ReadyMessage, RunRequest } from '../protocol/run-request.ts';

export interface SpawnedServer {
  pid: number;
  socketPath: string;
  /** The run's capability, for this client's hello (registry.ts). */
  capability: string;
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
    return openSync(
      file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND | constants.O_NOFOLLOW,
      0o600,
    );
  } catch {
    return 'ignore';
  }
}

/**
 * Why the server could not be started, from the 'error' event of its spawn. Out of descriptors
 * (EMFILE, ENFILE), a spawn fails creating its pipes, not opening the program it names.
 */
function startFailure(error: unknown): JpError {
  const errno = error as NodeJS.ErrnoException;
  const system = asSystemError(
    errno.code === 'EMFILE' || errno.code === 'ENFILE' ? { code: errno.code, syscall: errno.syscall } : error,
  );
  return (
    system ??
    new RunError('server_start_failed', `cannot start the query server: ${errno.message}`, {
      hint: 'Run with --no-server to run the turn in this process.',
      cause: error,
    })
  );
}

/** Node and V8 options of query servers (never of the client) for a Node major; why each: README, Design decisions. */
function serverOptions(nodeMajor: number): string[] {
  const options =
    nodeMajor < 22
      ? ['--v8-pool-size=1', '--liftoff-only', '--max-semi-space-size=1', '--heap-growing-percent=10']
      : nodeMajor < 24
        ? []
        : ['--max-semi-space-size=2'];
  return addressSpaceLimited() && process.allowedNodeEnvironmentFlags.has('--disable-wasm-trap-handler')
    ? [...options, '--disable-wasm-trap-handler']
    : options;
}

/**
 * Whether this process (and so the server it starts) runs under an address-space limit (`ulimit
 * -v`). There each WebAssembly instance's ~10 GB reservation for trap-based bounds checks fails, and
 * with it fetch's HTTP parser: a server started with `--disable-wasm-trap-handler` checks bounds
 * in code instead and needs no such reservation.
 */
export function addressSpaceLimited(): boolean {
  try {
    return !/^Max address space\s+unlimited/m.test(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return false;
  }
}

/** Whether this process runs with WebAssembly's trap handler off (see addressSpaceLimited). */
export function wasmTrapHandlerDisabled(environment: NodeJS.ProcessEnv): boolean {
  return [...process.execArgv, ...(environment.NODE_OPTIONS ?? '').split(/\s+/)].includes(
    '--disable-wasm-trap-handler',
  );
}

/**
 * What a server is started with of the client's environment: only what Node and jp read before the
 * run request arrives. The rest, provider keys included, reaches it in the request on fd 3 (a
 * socket pair), so that no key is in the server's `/proc/<pid>/environ`, which its tools could read.
 */
export function serverStartEnvironment(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(environment)) {
    const system = /^(PATH|HOME|USER|LOGNAME|SHELL|TERM|TMPDIR|TZ|LANG|LC_[A-Z_]+|XDG_[A-Z_]+)$/.test(name);
    const node = /^(NODE_OPTIONS|NODE_EXTRA_CA_CERTS|NODE_COMPILE_CACHE|SSL_CERT_FILE|SSL_CERT_DIR)$/.test(name);
    if (system || node) kept[name] = value;
  }
  return kept;
}

/**
 * The server runs with core dumps off (`ulimit -c 0`, inherited by its tools and MCP servers): it
 * holds the provider keys, and a core file would hold them too. Node cannot set a resource limit of
 * its own process, so a shell sets it and executes node in its place (the pid is node's).
 */
const noCoreDumps = 'ulimit -c 0 2>/dev/null; exec "$@"';

function launch(
  entry: string,
  options: { cwd: string; environment: NodeJS.ProcessEnv; log: string; shareStderr: boolean },
): ChildProcess {
  const log = openRunLog(options.log);
  try {
    // The client's own Node options (the tsx loader when run from source), then the server's.
    const nodeArguments = [
      ...process.execArgv,
      ...serverOptions(Number(process.versions.node.split('.')[0])),
      entry,
      '__serve',
    ];
    return spawn('/bin/sh', ['-c', noCoreDumps, 'jp-server', process.execPath, ...nodeArguments], {
      cwd: options.cwd,
      env: serverStartEnvironment(options.environment),
      detached: true,
      stdio: ['ignore', log, options.shareStderr ? 2 : log, 'pipe'],
    });
  } finally {
    if (typeof log === 'number') closeSync(log);
  }
}

/**
 * A query's server, started before the command tree even loads (startEarlyServer): its start-up (a
 * second Node process loading the server) then overlaps the client's own, and the server is ready
 * by the time the client has its request (see README, Benchmarks). Until a run takes it, its working
 * directory and its output are in jp's private `starting/` directory (beside the workspaces, on the
 * same file system); its output file becomes the run's log (`<cid>.log`, a rename: the server's
 * descriptors stay valid) when the run starts. A server nobody takes (a usage error, `--help`, a lock
 * refusal) is ended and its file removed; one whose client died reads the end of its request pipe
 * and exits.
 */
export class EarlyServer {
  private taken = false;
  /** Its spawn failed (EMFILE …): a run starts a server of its own, which says why if it fails too. */
  private failed = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly logFile: string,
  ) {
    child.on('error', () => {
      this.failed = true;
    });
  }

  /**
   * A server started in `directory` (private to the user, never a workspace: a crash of it lands
   * nothing there). The output files left there by servers whose client died before handing them a
   * run (`server-<client pid>.starting`, the client gone) are removed once this one is on its way.
   */
  static start(entry: string, options: { environment: NodeJS.ProcessEnv; directory: string }): EarlyServer {
    const logFile = path.join(options.directory, `server-${process.pid}.starting`);
    const server = new EarlyServer(
      launch(entry, {
        cwd: options.directory,
        environment: options.environment,
        log: logFile,
        shareStderr: false,
      }),
      logFile,
    );
    removeAbandonedOutputs(options.directory);
    return server;
  }

  /** The server, for the run whose log is `runLog`; undefined when it is gone already. */
  take(runLog: string): ChildProcess | undefined {
    this.taken = true;
    try {
      renameSync(this.logFile, runLog);
    } catch {
      // the log is a convenience
    }
    return !this.failed && this.child.exitCode === null && this.child.signalCode === null ? this.child : undefined;
  }

  /** Ends the server unless a run took it; resolves once it is gone. */
  discard(): Promise<void> {
    if (this.taken) return Promise.resolve();
    rmSync(this.logFile, { force: true });
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const giveUp = setTimeout(resolve, 1000);
      this.child.once('exit', () => {
        clearTimeout(giveUp);
        resolve();
      });
      this.child.kill('SIGKILL');
    });
  }
}

function removeAbandonedOutputs(directory: string): void {
  for (const name of entriesStartingWith(directory, 'server-')) {
    const client = /^server-(\d+)\.starting$/.exec(name);
    if (!client || Number(client[1]) === process.pid || processExists(Number(client[1]))) continue;
    try {
      rmSync(path.join(directory, name), { force: true });
    } catch {
      // not a file jp left there: left alone
    }
  }
}

export function spawnServer(
  request: RunRequest,
  options: {
    entry: string;
    environment: NodeJS.ProcessEnv /** --log-file=-: the server's tracing goes to our stderr. */;
    shareStderr: boolean;
    early?: EarlyServer;
  },
): Promise<SpawnedServer> {
  const logFile = request.run_log;
  const child =
    options.early?.take(logFile) ??
    launch(options.entry, {
      cwd: path.dirname(logFile),
      environment: options.environment,
      log: logFile,
      shareStderr: options.shareStderr,
    });
  // A spawn that failed (EMFILE, EAGAIN …) has no stdio; its 'error' event, next tick, says why.
  const channel = (child.stdio as ChildProcess['stdio'] | undefined)?.[3] as net.Socket | undefined;
  return new Promise<SpawnedServer>((resolve, reject) => {
    let buffered = '';
    let settled = false;
    const timer = setTimeout(
      () =>
        fail(
          new RunError(
            'server_start_timeout',
            `the query server did not get ready within ${readyTimeoutMilliseconds / 1000} s`,
            { hint: `Its log is ${logFile}.` },
          ),
        ),
      readyTimeoutMilliseconds,
    );
    const done = (): void => {
      settled = true;
      clearTimeout(timer);
      channel?.removeAllListeners();
      channel?.destroy();
      child.removeAllListeners('exit');
      child.unref();
    };
    const fail = (error: JpError): void => {
      if (settled) return;
      done();
      reject(error);
    };
    child.on('error', (error) => fail(startFailure(error)));
    if (!channel) return;
    channel.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline === -1 || settled) return;
      let message: ReadyMessage;
      try {
        message = JSON.parse(buffered.slice(0, newline)) as ReadyMessage;
      } catch {
        fail(
          new RunError('server_start_failed', 'the query server sent an unreadable readiness message', {
            hint: `Its log is ${logFile}.`,
          }),
        );
        return;
      }
      if (!message.ready) {
        const error = message.error;
        fail(
          new JpError(
            statusOfExitCode(error.exit_code),
            error.code,
            error.message,
            error.hint ? { hint: error.hint } : {},
          ),
        );
        return;
      }
      done();
      resolve({ pid: message.pid, socketPath: message.socket_path, capability: message.capability });
    });
    channel.on('error', () => {
      // the exit handler below reports it
    });
    child.once('exit', (code, signal) => {
      const exited = (): void => {
        // The log's last lines are the server's own error with its fix when it had one: they end
        // what jp says, so the fix is the last thing read.
        const tail = lastLines(logFile, 5);
        const how = signal ?? `exit code ${code}`;
        fail(
          tail
            ? new RunError(
                'server_start_failed',
                `the query server exited before it was ready (${how}); its log (${logFile}) ends:\n${tail}`,
              )
            : new RunError('server_start_failed', `the query server exited before it was ready (${how})`, {
                hint: `Its log is ${logFile}. Run with --no-server to run the turn in this process.`,
              }),
        );
      };
      // What it said before exiting (a readiness message with its error) is read first: its end of
      // the channel closed with it. A child of its that holds that end open gets a second at most.
      if (channel.readableEnded || channel.destroyed) return exited();
      channel.once('close', exited);
      setTimeout(exited, 1000).unref();
    });
    channel.write(JSON.stringify({ ...request, environment: options.environment }) + '\n');
  });
}
