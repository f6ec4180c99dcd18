/**
 * Starting the query server as early as possible: `jp query` spawns it before parsing anything, so
 * the server's start-up (a second Node.js process) overlaps the client's own work. The server then
 * waits for its run request on fd 3; if the client never sends one (a usage error, --help), the
 * server sees the channel close and exits quietly.
 */
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type net from 'node:net';

/**
 * node:child_process, loaded synchronously on first use: importing it up front would cost every
 * command (`jp conversation ls`...) ~8 ms. (Any absolute path serves as the base for a built-in.)
 */
function childProcesses(): typeof import('node:child_process') {
  return createRequire(process.execPath)('node:child_process') as typeof import('node:child_process');
}

/**
 * The prespawned server lives in a process-wide slot, not in a module variable: the launcher
 * (dist/jp.cjs) spawns it and the program bundle takes it, and each of them carries its own copy of
 * this module.
 */
const slotKey = Symbol.for('jp.prespawned-server');
const slot = globalThis as { [slotKey]?: ChildProcess | undefined };

/**
 * The server runs with the client's own Node options and no others: an extra V8 flag would cost it
 * the embedded code cache of Node's built-in modules (see collectAfterChurn in serve.ts).
 */
export function serverArguments(entry: string): string[] {
  return [...process.execArgv, entry, '__serve'];
}

/** Starts a server process; stdio goes nowhere until the server opens its own run log. */
export function startServerProcess(entry: string, options: { cwd: string; environment: NodeJS.ProcessEnv; shareStderr: boolean }): ChildProcess {
  const child = childProcesses().spawn(process.execPath, serverArguments(entry), {
    cwd: options.cwd,
    env: options.environment,
    detached: true,
    stdio: ['ignore', 'ignore', options.shareStderr ? 2 : 'ignore', 'pipe'],
  });
  child.unref();
  (child.stdio[3] as net.Socket).unref();
  return child;
}

/** Whether this command line will want a query server (a cheap guess; a wrong guess only costs a start-up). */
export function wantsServer(argv: readonly string[]): boolean {
  if (!argv.includes('query') && !argv.includes('q')) return false;
  const logToStderr = argv.includes('--log-file=-') || argv.some((argument, index) => argument === '--log-file' && argv[index + 1] === '-');
  return !argv.includes('--no-server') && !argv.includes('--help') && !argv.includes('-h') && !logToStderr;
}

export function prespawnServer(entry: string): void {
  const child = startServerProcess(entry, { cwd: process.cwd(), environment: process.env, shareStderr: false });
  slot[slotKey] = child;
  child.on('error', () => {
    if (slot[slotKey] === child) slot[slotKey] = undefined;
  });
}

/**
 * Ends a prespawned server nobody took (a usage error, a lock refusal, --help) and resolves once it
 * is gone. It has been given no request, so it holds no lock and has written nothing: killing it
 * spares the machine its whole start-up, which matters when many refused queries start together.
 */
export function discardPrespawnedServer(): Promise<void> {
  const child = slot[slotKey];
  slot[slotKey] = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const giveUp = setTimeout(resolve, 1000);
    child.once('exit', () => {
      clearTimeout(giveUp);
      resolve();
    });
    child.kill('SIGKILL');
  });
}

/** The prespawned server, if it is still alive; it can be taken once. */
export function takePrespawnedServer(): ChildProcess | undefined {
  const child = slot[slotKey];
  slot[slotKey] = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return undefined;
  return child;
}
