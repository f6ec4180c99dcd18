/**
 * A prepared run hosted in this process (`--no-server`): set up as a query server sets it up, with
 * the client talking to it over an in-memory link carrying exactly the messages a socket would.
 * Loaded only for such a run: it brings the run's own modules (the engine, the tools, the providers).
 */
import { RunError } from '../errors.ts';
import { abandonSetup, setUpRun, type RunSetup } from '../run/setup.ts';
import { createInMemoryPair } from '../server/connection.ts';
import { HostedRun } from '../server/hosted-run.ts';
import { jpVersion } from '../version.ts';
import type { PreparedRun, StartedRun } from './prepare-run.ts';
import { addressSpaceLimited, wasmTrapHandlerDisabled } from './spawn.ts';
import type { Logger } from '../output/logger.ts';
import type { Secrets } from '../redact.ts';

/**
 * Under an address-space limit (`ulimit -v`), fetch's HTTP parser (WebAssembly) cannot get its
 * memory in a process started without --disable-wasm-trap-handler, and undici then dies of an
 * uncaught error: said before the run starts instead.
 */
function assertFetchCanRun(provider: string, environment: NodeJS.ProcessEnv): void {
  if (provider === 'test' || !addressSpaceLimited() || wasmTrapHandlerDisabled(environment)) return;
  throw new RunError(
    'address_space_limit',
    'a run in this process (--no-server) cannot reach a provider under this address-space limit (ulimit -v): ' +
      "fetch's HTTP parser (WebAssembly) reserves ~10 GB of address space",
    {
      hint:
        'Drop --no-server (jp starts its query server with --disable-wasm-trap-handler), ' +
        'or run with NODE_OPTIONS=--disable-wasm-trap-handler (Node 20.15 or later), ' +
        'or raise the limit (ulimit -v unlimited).',
    },
  );
}

/** What a run hosted here needs of this process: its environment, its secrets and its logger. */
export interface HostHere {
  environment: NodeJS.ProcessEnv;
  secrets: Secrets;
  logger: Logger;
}

export function hostHere(prepared: PreparedRun, where: HostHere): StartedRun {
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
    capability: hosted.capability,
    connect: () => Promise.resolve(pair.client),
    ended: () => hosted.runToEnd().then(() => undefined),
  };
}
