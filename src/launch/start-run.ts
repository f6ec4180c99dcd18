/**
 * A prepared run started (prepare-run.ts): in a query server (spawn.ts; the default), or hosted in
 * this process for `--no-server`, where the client talks to it over an in-memory link with exactly
 * the messages a socket would carry. Either way the front end gets one StartedRun and runs its
 * client on its link; a run that fails to start is abandoned (PreparedRun.abandon) before the error
 * is thrown.
 */
import { connectToServer } from '../client/socket-link.ts';
import type { HostHere } from './host-here.ts';
import type { PreparedRun, StartedRun } from './prepare-run.ts';
import { spawnServer, type EarlyServer } from './spawn.ts';

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
  | ({ where: 'this process' } & HostHere);

/** Starts the run where asked; a run hosted here loads the run's own modules only then (host-here.ts). */
export async function startRun(prepared: PreparedRun, where: StartWhere): Promise<StartedRun> {
  if (where.where === 'server') return startServer(prepared, where);
  return (await import('./host-here.ts')).hostHere(prepared, where);
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
    capability: spawned.capability,
    connect: () => connectToServer(spawned.socketPath),
    ended: () => Promise.resolve(),
  };
}
