/**
 * A prepared run started (prepare-run.ts): in a query server (spawn.ts; the default), or hosted in
 * this process for `--no-server`, where the client talks to it over an in-memory link with exactly
 * the messages a socket would carry. Either way the front end gets one StartedRun and runs its
 * client on its link; a run that fails to start is abandoned (PreparedRun.abandon) before the error
 * is thrown.
 */
import { connectToServer } from '../client/socket-link.ts';
import { RunError } from '../errors.ts';
import type { Logger } from '../output/logger.ts';
import type { ServerLink } from '../protocol/link.ts';
import type { Secrets } from '../redact.ts';
import type { RunPayloads } from '../report/payloads.ts';
import { abandonSetup, setUpRun, type RunSetup } from '../run/setup.ts';
import { createInMemoryPair } from '../server/connection.ts';
import { HostedRun } from '../server/hosted-run.ts';
import { jpVersion } from '../version.ts';
import type { PreparedRun } from './prepare-run.ts';
import { addressSpaceLimited, spawnServer, wasmTrapHandlerDisabled, type EarlyServer } from './spawn.ts';

export type StartWhere =
  | {
      where: 'server';
      /** The jp entry point the server is started from. */
      entry: string;
      /** The client's environment, keys included (they reach the server in the request, never its environ). */
      environment: NodeJS.ProcessEnv;
      /** --log-file=-: the server's tracing goes to our stderr. */
      shareStderr: boolean;
      /** A server started early for this query (EarlyServer), if there is one. */
      early?: EarlyServer;
    }
  | { where: 'this process'; environment: NodeJS.ProcessEnv; secrets: Secrets; logger: Logger };

export interface StartedRun {
  conversationId: string;
  /** The process that runs the turn: the server's pid, or this process's. */
  pid: number;
  /** The model, when this process set the run up; a server's is in its result. */
  model: string | null;
  /** Whether a client of it can detach (Ctrl+Z): only from a run in its own server. */
  detachable: boolean;
  /** The link a client speaks the protocol on (once). */
  connect(): Promise<ServerLink<RunPayloads>>;
  /** Resolves when the run has ended, for a run hosted here; at once for a server, which runs on its own. */
  ended(): Promise<void>;
}

export function startRun(prepared: PreparedRun, where: StartWhere): Promise<StartedRun> {
  return where.where === 'server' ? startServer(prepared, where) : Promise.resolve(hostHere(prepared, where));
}

async function startServer(prepared: PreparedRun, where: StartWhere & { where: 'server' }): Promise<StartedRun> {
  const { request, cleanup } = prepared;
  let activationError: unknown;
  let spawned: Awaited<ReturnType<typeof spawnServer>>;
  try {
    const starting = spawnServer(request, {
      entry: where.entry,
      environment: where.environment,
      shareStderr: where.shareStderr,
      ...(where.early ? { early: where.early } : {}),
    });
    // While the server gets ready (the request is on its way to it), not after: this is a file
    // write with an fsync, and a detached query returns as soon as the server is ready.
    try {
      cleanup.activate();
    } catch (error) {
      activationError = error;
    }
    spawned = await starting;
  } catch (error) {
    prepared.abandon();
    throw error;
  }
  cleanup.lockTaken();
  // The server runs the turn whatever happens here; a session file that could not be written is
  // reported once the lock is the server's.
  if (activationError !== undefined) throw activationError;
  return {
    conversationId: prepared.conversationId,
    pid: spawned.pid,
    model: null,
    detachable: true,
    connect: () => connectToServer(spawned.socketPath),
    ended: () => Promise.resolve(),
  };
}

/**
 * Under an address-space limit (`ulimit -v`), fetch's HTTP parser (WebAssembly) cannot get its
 * memory in a process started without --disable-wasm-trap-handler, and undici then dies of an
 * uncaught error: said before the run starts instead.
 */
function assertFetchCanRun(provider: string, environment: NodeJS.ProcessEnv): void {
  if (provider === 'test' || !addressSpaceLimited() || wasmTrapHandlerDisabled(environment)) return;
  throw new RunError(
    'address_space_limit',
    "a run in this process (--no-server) cannot reach a provider under this address-space limit (ulimit -v): fetch's HTTP parser (WebAssembly) reserves ~10 GB of address space",
    {
      hint: 'Drop --no-server (jp starts its query server with --disable-wasm-trap-handler), or run with NODE_OPTIONS=--disable-wasm-trap-handler (Node 20.15 or later), or raise the limit (ulimit -v unlimited).',
    },
  );
}

function hostHere(prepared: PreparedRun, where: StartWhere & { where: 'this process' }): StartedRun {
  const { request, cleanup } = prepared;
  let setup: RunSetup;
  try {
    // This process holds the lock already; the run keeps it to its end.
    setup = setUpRun(request, where.environment, where.secrets, () => cleanup.lock);
    try {
      assertFetchCanRun(setup.model.provider, where.environment);
    } catch (error) {
      abandonSetup(setup);
      throw error;
    }
  } catch (error) {
    prepared.abandon();
    throw error;
  }
  cleanup.activate();
  const hosted = new HostedRun({
    request,
    setup,
    logger: where.logger,
    version: jpVersion,
    socketPath: null,
    logFile: null,
    leadsProcessGroup: false,
  });
  hosted.register();
  const pair = createInMemoryPair();
  hosted.accept(pair.server);
  return {
    conversationId: prepared.conversationId,
    pid: process.pid,
    model: setup.model.id,
    detachable: false,
    connect: () => Promise.resolve(pair.client),
    ended: () => hosted.runToEnd().then(() => undefined),
  };
}
