/**
 * `jp query --no-server`: the turn runs inside this process; the terminal client talks to it over
 * an in-memory link with exactly the messages a socket would carry.
 */
import type { Renderer } from '../../client/renderer.ts';
import { createInMemoryPair } from '../../server/connection.ts';
import { RunError } from '../../errors.ts';
import { abandonSetup, setUpRun } from '../../run/setup.ts';
import { HostedRun } from '../../server/hosted-run.ts';
import { addressSpaceLimited, wasmTrapHandlerDisabled } from '../../server/spawn.ts';
import { createTerminalClient, finishOutcome, withClientSignals } from '../client-session.ts';
import type { CommandContext } from '../context.ts';
import { jpVersion } from '../../version.ts';
import type { Prepared } from './prepared-query.ts';
import { removeConversation } from '../../conversation/store.ts';

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

export async function runInProcess(context: CommandContext, prepared: Prepared, renderer: Renderer): Promise<number> {
  const { request, conversationId } = prepared;
  const workspace = context.workspace();
  let setup: ReturnType<typeof setUpRun>;
  try {
    // This process holds the lock already; the run keeps it to its end.
    setup = setUpRun(request, context.facts.environment, context.secrets, () => prepared.lock);
  } catch (error) {
    if (prepared.created) removeConversation(workspace.conversationsDirectory, conversationId);
    throw error;
  }
  try {
    assertFetchCanRun(setup.model.provider, context.facts.environment);
  } catch (error) {
    abandonSetup(setup);
    if (prepared.created) removeConversation(workspace.conversationsDirectory, conversationId);
    throw error;
  }
  prepared.activate();
  const hosted = new HostedRun({
    request,
    setup,
    logger: await context.logger(),
    version: jpVersion,
    socketPath: null,
    logFile: null,
    leadsProcessGroup: false,
  });
  hosted.register();
  const pair = createInMemoryPair();
  hosted.accept(pair.server);
  const client = createTerminalClient(context, {
    link: pair.client,
    renderer,
    conversationId,
    readOnly: false,
    owner: true,
    capability: hosted.capability,
    history: request.resume ? { resume: prepared.events } : 'none',
  });
  const outcome = await withClientSignals(context, client, false, async () => {
    const clientOutcome = client.run();
    await hosted.runToEnd();
    return clientOutcome;
  });
  return finishOutcome(renderer, outcome, conversationId, {
    text: request.query,
    model: setup.model.id,
    startedAt: request.started_at,
    secrets: context.secrets,
  });
}
