/**
 * `jp query --no-server`: the turn runs inside this process; the terminal client talks to it over
 * an in-memory link with exactly the messages a socket would carry.
 */
import { TerminalPrompter } from '../../client/prompts.ts';
import type { Renderer } from '../../client/renderer.ts';
import { TerminalClient } from '../../client/terminal-client.ts';
import { eventsFile } from '../../conversation/store.ts';
import { createInMemoryPair } from '../../server/connection.ts';
import type { ResultObject } from '../../server/result.ts';
import { loadRunSetup, Run } from '../../server/run.ts';
import { finishOutcome, withClientSignals } from '../client-session.ts';
import type { CommandContext } from '../context.ts';
import { canPrompt } from '../facts.ts';
import { jpVersion } from '../version.ts';
import { removeIfUnused, type Prepared } from './query.ts';

export async function runInProcess(context: CommandContext, prepared: Prepared, renderer: Renderer): Promise<number> {
  const { request, conversationId } = prepared;
  const workspace = context.workspace();
  let setup;
  try {
    setup = loadRunSetup(request, context.facts.environment);
  } catch (error) {
    prepared.lock.release();
    if (prepared.created) removeIfUnused(workspace.conversationsDirectory, conversationId);
    throw error;
  }
  prepared.activate();
  const run = new Run({ request, setup, lock: prepared.lock, logger: await context.logger(), version: jpVersion, socketPath: null, logFile: null });
  run.register();
  const pair = createInMemoryPair();
  run.server.accept(pair.server);
  const prompter = canPrompt(context.facts) ? new TerminalPrompter() : undefined;
  const client = new TerminalClient({
    link: pair.client,
    renderer,
    prompter,
    readOnly: false,
    history: 'none',
    eventsFile: eventsFile(workspace.conversationsDirectory, conversationId),
    conversationId,
  });
  let result: ResultObject | undefined;
  const outcome = await withClientSignals(context, client, false, async () => {
    const clientOutcome = client.run();
    result = await run.server.run();
    return clientOutcome;
  });
  run.finish(result);
  return finishOutcome(context, renderer, outcome, conversationId, { text: request.query, model: setup.model.id, startedAt: request.started_at });
}

