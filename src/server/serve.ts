/**
 * The query server process (`jp __serve`, hidden): spawned by a client in a new session with no
 * controlling terminal, stdio to its per-run log. It reads the run request from fd 3, takes over
 * the client's lock, opens its socket (0600, in a checked 0700 directory), writes its registry
 * entry, reports ready on fd 3, runs the turn, and exits after persisting, removing its entry and
 * socket. SIGTERM / SIGINT stop the run as interrupted (persisted, resumable).
 */
import { chmodSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import { jpVersion } from '../version.ts';
import { JpError, RunError, toJpError } from '../errors.ts';
import { createLogger, silentLogger, type Logger } from '../output/logger.ts';
import { defaultProviderKeyVariables } from '../llm/resolve.ts';
import { Secrets } from '../redact.ts';
import { StopRequest } from '../turn/host.ts';
import { takeOverLock } from '../workspace/lock.ts';
import { userSubdirectory } from '../workspace/workspace.ts';
import { ConnectionGate, SocketConnection } from './connection.ts';
import { abandonSetup, setUpRun, type RunSetup } from '../run/setup.ts';
import { HostedRun } from './hosted-run.ts';
import { parseRunRequest, type RunRequest } from '../protocol/run-request.ts';
import type { ReadyMessage } from './spawn.ts';
import { prepareSocketDirectory, socketPathFor } from './socket-path.ts';

/**
 * Connections a flood cannot use to lock out a real client (see ConnectionGate): clients that
 * spoke, connections still silent (the oldest is pushed out by a new one), and how long a silent
 * one may stay.
 */
const connectionLimits = { maxClients: 64, maxPending: 32, pendingMilliseconds: 5_000 };

/** A run request this server cannot run: the client that sent it is not this version of jp, or it is broken. */
function refusedRequest(message: string): RunError {
  return new RunError('invalid_run_request', `${message}; the query server did not start`, {
    hint: 'The client and the server are the same jp: reinstall jp if this persists.',
  });
}

/**
 * Resolves with the request (checked against its schema), or with undefined when the client went
 * away without sending one; rejects with a clear error when it is not a valid request. The
 * request may be tens of MB (piped input): chunks are kept as bytes (a character may straddle two)
 * and only each new chunk is searched for the newline.
 */
function readRequest(channel: net.Socket): Promise<RunRequest | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer): void => {
      const newline = chunk.indexOf(10);
      if (newline === -1) {
        chunks.push(chunk);
        return;
      }
      chunks.push(chunk.subarray(0, newline));
      channel.off('data', onData);
      let value: unknown;
      try {
        value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        // Not the parser's message: it quotes the request, whose environment holds the user's keys.
        reject(refusedRequest('the run request is not valid JSON'));
        return;
      }
      const parsed = parseRunRequest(value);
      if (parsed.ok) resolve(parsed.request);
      else reject(refusedRequest(parsed.message));
    };
    channel.on('data', onData);
    channel.once('end', () => resolve(undefined));
    channel.once('close', () => resolve(undefined));
    channel.once('error', () => resolve(undefined));
  });
}

function report(channel: net.Socket, message: ReadyMessage): Promise<void> {
  return new Promise((resolve) => {
    channel.end(JSON.stringify(message) + '\n', () => resolve());
    setTimeout(resolve, 1000).unref();
  });
}

function listen(socketPath: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    const previousMask = process.umask(0o177);
    server.once('error', (error) => {
      process.umask(previousMask);
      reject(error);
    });
    server.listen(socketPath, () => {
      process.umask(previousMask);
      chmodSync(socketPath, 0o600);
      resolve(server);
    });
  });
}

/** Removes a socket file left by a dead server (its registry entry was stale or absent). */
function removeStaleSocket(socketPath: string): void {
  try {
    unlinkSync(socketPath);
  } catch {
    // nothing there
  }
}

/** Runs the server to its end; resolves with the process's exit code. */
export async function serveMain(): Promise<number> {
  const channel = new net.Socket({ fd: 3, readable: true, writable: true });
  let logger: Logger = silentLogger;
  const secrets = new Secrets();
  let setup: RunSetup | undefined;
  let hosted: HostedRun | undefined;
  let listener: net.Server | undefined;
  try {
    const reading = readRequest(channel);
    // Node loads fetch (its bundled undici, tens of ms) on first use, which would be the run's first
    // request: loaded now, while the client prepares the run it will hand over.
    new Headers();
    const request = await reading;
    // The client went away before sending its request.
    if (!request) return 0;
    // The client's environment, keys included, came with the request; this process was started
    // without them (serverStartEnvironment) and never puts them in process.env.
    const environment: NodeJS.ProcessEnv = request.environment ?? process.env;
    secrets.add(environment, defaultProviderKeyVariables);
    logger = await createLogger(request.log, secrets, { role: 'server', conversation_id: request.conversation_id });
    // The lock is the client's until this process takes it over, proving the hand-over with its content.
    setup = setUpRun(request, environment, secrets, (workspace) =>
      takeOverLock(userSubdirectory(workspace, 'locks'), request.conversation_id, request.lock_token ?? '', {
        role: 'server',
        waitSeconds: 0,
        detached: request.detached,
      }),
    );
    const processesDirectory = userSubdirectory(setup.workspace, 'processes');
    const socketPath = prepareSocketDirectory(
      socketPathFor(processesDirectory, request.conversation_id, setup.workspace.id, environment),
      processesDirectory,
    );
    // We hold the conversation lock, so a socket at our path belongs to a dead predecessor.
    removeStaleSocket(socketPath);
    listener = await listen(socketPath);
    hosted = new HostedRun({
      request,
      setup,
      logger,
      version: jpVersion,
      socketPath,
      logFile: request.run_log,
      leadsProcessGroup: true,
    });
    const activeRun = hosted;
    const gate = new ConnectionGate(connectionLimits);
    listener.on('connection', (socket) => {
      const connection = new SocketConnection(socket);
      if (gate.admit(connection)) activeRun.accept(connection);
    });
    activeRun.register();
    const stopWith = (signal: 'SIGINT' | 'SIGTERM') => () => activeRun.stop(new StopRequest(signal));
    process.on('SIGTERM', stopWith('SIGTERM'));
    process.on('SIGINT', stopWith('SIGINT'));
    process.on('SIGHUP', () => {});
    logger.info('server ready', { socket: socketPath });
    await report(channel, { ready: true, pid: process.pid, socket_path: socketPath, capability: activeRun.capability });
    const result = await activeRun.runToEnd();
    logger.info('run ended', { status: result.status, exit_code: result.exit_code });
    await closeListener(listener);
    return result.exit_code;
  } catch (error) {
    const jpError = toJpError(error);
    logger.error('server failed', { code: jpError.code, error: jpError.message });
    process.stderr.write(`jp server: ${secrets.redact(jpError.message)}\n`);
    if (hosted) hosted.finish(undefined);
    else if (setup) abandonSetup(setup);
    if (listener) await closeListener(listener);
    if (!channel.destroyed && channel.writable) {
      await report(channel, {
        ready: false,
        error: secrets.redactValue({
          code: jpError.code,
          message: jpError.message,
          ...(jpError.hint ? { hint: jpError.hint } : {}),
          exit_code: jpError.exitCode,
        }),
      });
    }
    return JpError.isInstance(error) ? error.exitCode : 1;
  }
}

/** Waits for every connection to end (they were asked to), at most two seconds. */
function closeListener(listener: net.Server): Promise<void> {
  return new Promise((resolve) => {
    listener.close(() => resolve());
    setTimeout(resolve, 2000).unref();
  });
}
