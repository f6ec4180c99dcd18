/**
 * Shared by the commands that run a terminal client (query, attach): signal handling while it
 * runs, and turning its outcome into output and an exit code.
 */
import { TerminalPrompter } from '../client/prompts.ts';
import { TerminalInput } from '../client/terminal-input.ts';
import { TerminalClient, type ClientOutcome, type HistoryMode } from '../client/terminal-client.ts';
import { eventsFile } from '../conversation/store.ts';
import type { ServerLink } from '../protocol/link.ts';
import type { RunPayloads } from '../report/payloads.ts';
import { canPrompt } from './facts.ts';
import { JsonRenderer } from '../client/json-renderer.ts';
import type { Renderer } from '../client/renderer.ts';
import { RunError } from '../errors.ts';
import { visible } from '../output/sanitize.ts';
import { buildErrorResult } from '../report/result.ts';
import type { Secrets } from '../redact.ts';
import type { CommandContext } from './context.ts';

/**
 * Keys and signals while a client runs: Ctrl+C interrupts, Ctrl+Z and a hang-up detach, SIGTERM
 * stops the run when this client owns it (an attached client only leaves).
 */
export async function withClientSignals<T>(
  context: CommandContext,
  client: TerminalClient,
  canDetach: boolean,
  body: () => Promise<T>,
): Promise<T> {
  const onInterrupt = (): void => client.interrupt();
  const onSuspend = (): void => client.detach();
  const onTerminate = (): void => client.shutdown('terminate');
  const onHangup = (): void => client.detach();
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onTerminate);
  process.on('SIGHUP', onHangup);
  if (canDetach) process.on('SIGTSTP', onSuspend);
  context.stdout.onClosed = () => client.shutdown('output_closed');
  // At a terminal, jp reads the keys itself while the run streams (no echo, nothing left for the
  // shell): Ctrl+C and Ctrl+Z arrive as keys, not as signals.
  client.watchKeys({ interrupt: onInterrupt, suspend: canDetach ? onSuspend : () => {} });
  try {
    return await body();
  } finally {
    client.unwatchKeys();
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminate);
    process.off('SIGHUP', onHangup);
    if (canDetach) process.off('SIGTSTP', onSuspend);
  }
}

/** A terminal client on `link`, prompting on /dev/tty when this process can. */
export function createTerminalClient(
  context: CommandContext,
  options: {
    link: ServerLink<RunPayloads>;
    renderer: Renderer;
    conversationId: string;
    readOnly: boolean;
    owner: boolean;
    capability: string;
    history: HistoryMode;
  },
): TerminalClient {
  return new TerminalClient({
    ...options,
    prompter:
      !options.readOnly && canPrompt(context.facts)
        ? new TerminalPrompter({
            output: options.renderer.output,
            environment: context.facts.environment,
            workspaceRoot: context.workspace().toolRoot,
            configuredTheme: () => context.configuredTheme(),
          })
        : undefined,
    // A read-only client at a terminal reads the keys itself (it has no prompter to read them).
    ...(options.readOnly && canPrompt(context.facts) ? { keyboard: new TerminalInput() } : {}),
    eventsFile: eventsFile(context.workspace().conversationsDirectory, options.conversationId),
  });
}

/** What a detach leaves behind, said truthfully: an inquiry left open follows the detached policy. */
export function detachedLine(
  conversationId: string,
  open: { tool: string; ifDetached: string | undefined } | undefined,
): string {
  const attach = `\`jp conversation attach ${conversationId}\` shows it again`;
  if (!open) return `Detached: ${conversationId}. The run goes on; ${attach}.`;
  const tool = visible(open.tool, { singleLine: true });
  switch (open.ifDetached) {
    case 'Defer':
      return (
        `Detached: ${conversationId}. The run stopped to wait for your answer (${tool}); answer it ` +
        `with \`jp query --continue --id=${conversationId}\`.`
      );
    case 'AutoApprove':
      return (
        `Detached: ${conversationId}. The run goes on: ${tool} runs without your approval (detached policy ` +
        `"auto"); ${attach}.`
      );
    case 'AutoDeliver':
      return (
        `Detached: ${conversationId}. The run goes on: the result of ${tool} is sent without your review ` +
        `(detached policy "auto"); ${attach}.`
      );
    case 'Fail':
      return `Detached: ${conversationId}. The run goes on without ${tool}: the detached policy denies it; ${attach}.`;
    case 'UseDefault':
      return (
        `Detached: ${conversationId}. ` + `The run goes on: the question of ${tool} gets its default answer; ${attach}.`
      );
    case 'LlmInquiry':
      return `Detached: ${conversationId}. The run goes on: the assistant answers the question of ${tool}; ${attach}.`;
    default:
      return (
        `Detached: ${conversationId}. What ${tool} asked follows the detached policy: the run may stop to wait ` +
        `for input; \`jp conversation ls\` shows whether it does.`
      );
  }
}

/** Output and exit code for a client's outcome (a foreground query or an attach). */
export async function finishOutcome(
  renderer: Renderer,
  outcome: ClientOutcome,
  conversationId: string,
  query: { text: string; model: string | null; startedAt: number; secrets: Secrets },
): Promise<number> {
  switch (outcome.kind) {
    case 'result':
      renderer.finish(outcome.result);
      await renderer.flush();
      return outcome.result.exit_code;
    case 'detached':
      if (renderer instanceof JsonRenderer) renderer.detached(conversationId, null);
      renderer.status(detachedLine(conversationId, outcome.open));
      await renderer.flush();
      return 0;
    case 'refused':
    case 'lost': {
      const error =
        outcome.kind === 'refused'
          ? new RunError(
              outcome.code,
              outcome.message,
              outcome.code === 'prompting_client_attached'
                ? { hint: `jp conversation attach --read-only ${conversationId}` }
                : {},
            )
          : new RunError(
              'server_lost',
              `the query server${outcome.serverPid ? ` (pid ${outcome.serverPid})` : ''} for ${conversationId} ` +
                `stopped without a result`,
              {
                hint:
                  `What it did is saved. See \`jp conversation print ${conversationId}\`, and resume ` +
                  `with \`jp query --continue --id=${conversationId}\`.`,
              },
            );
      renderer.finish(
        buildErrorResult({
          conversationId,
          query: query.text,
          error,
          model: query.model,
          startedAt: query.startedAt,
          secrets: query.secrets,
        }),
      );
      await renderer.flush();
      return error.exitCode;
    }
  }
}
