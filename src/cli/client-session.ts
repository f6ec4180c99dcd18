/**
 * Shared by the commands that run a terminal client (query, attach): signal handling while it
 * runs, and turning its outcome into output and an exit code.
 */
import type { ClientOutcome, TerminalClient } from '../client/terminal-client.ts';
import { JsonRenderer } from '../client/json-renderer.ts';
import type { Renderer } from '../client/renderer.ts';
import { RunError } from '../errors.ts';
import { buildErrorResult } from '../server/result.ts';
import type { CommandContext } from './context.ts';

/** Keys and signals while a client runs: Ctrl+C interrupts, Ctrl+Z detaches, SIGTERM stops. */
export async function withClientSignals<T>(context: CommandContext, client: TerminalClient, canDetach: boolean, body: () => Promise<T>): Promise<T> {
  const onInterrupt = (): void => client.interrupt();
  const onSuspend = (): void => client.detach();
  const onTerminate = (): void => client.shutdown('terminate');
  const onHangup = (): void => client.detach();
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onTerminate);
  process.on('SIGHUP', onHangup);
  if (canDetach) process.on('SIGTSTP', onSuspend);
  context.stdout.onClosed = () => client.shutdown('output_closed');
  try {
    return await body();
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminate);
    process.off('SIGHUP', onHangup);
    if (canDetach) process.off('SIGTSTP', onSuspend);
  }
}

/** Output and exit code for a foreground query's client outcome. */
export async function finishOutcome(
  context: CommandContext,
  renderer: Renderer,
  outcome: ClientOutcome,
  conversationId: string,
  query: { text: string; model: string | null; startedAt: number },
): Promise<number> {
  switch (outcome.kind) {
    case 'result':
      renderer.finish(outcome.result);
      await renderer.flush();
      return outcome.result.exit_code;
    case 'detached':
      if (renderer instanceof JsonRenderer) renderer.detached(conversationId, null);
      renderer.status(`Detached: ${conversationId}. The run goes on; \`jp conversation attach ${conversationId}\` shows it again.`);
      await renderer.flush();
      return 0;
    case 'refused':
    case 'lost': {
      const error =
        outcome.kind === 'refused'
          ? new RunError(outcome.code, outcome.message)
          : new RunError('server_lost', `the query server${outcome.serverPid ? ` (pid ${outcome.serverPid})` : ''} for ${conversationId} stopped without a result`, {
              hint: `What it did is saved. See \`jp conversation print ${conversationId}\`, and resume with \`jp query --continue --id=${conversationId}\`.`,
            });
      renderer.finish(buildErrorResult({ conversationId, query: query.text, error, model: query.model, startedAt: query.startedAt }));
      await renderer.flush();
      return error.exitCode;
    }
  }
}
