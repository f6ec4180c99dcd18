/**
 * `jp conversation print [<cid>] [--last]`: renders a conversation from disk with the same
 * renderers a live client uses; each turn's tokens line says its cost when its models are priced
 * (the price table is loaded only then). Never takes a lock.
 */
import { readEventLog } from '../../conversation/reader.ts';
import { eventsFile } from '../../conversation/store.ts';
import { splitTurns } from '../../conversation/turn-state.ts';
import { createRenderer } from '../../client/create-renderer.ts';
import { loadPricer } from '../../llm/prices.ts';
import type { CommandContext } from '../context.ts';
import { targetConversation } from '../../conversation/targets.ts';
import { counted } from '../../plural.ts';
import { watchedLive } from '../facts.ts';

export async function conversationPrintCommand(
  context: CommandContext,
  id: string | undefined,
  options: { last?: boolean },
): Promise<number> {
  const workspace = context.workspace();
  const conversationId = targetConversation(workspace, context.facts.environment, id);
  const parsed = readEventLog(eventsFile(workspace.conversationsDirectory, conversationId));
  let events = parsed.events;
  if (options.last) {
    const turns = splitTurns(events);
    const last = turns[turns.length - 1];
    events = last ? events.slice(last.start) : [];
  }
  const renderer = await createRenderer({
    format: context.format,
    stdout: context.stdout,
    stderr: context.stderr,
    environment: context.facts.environment,
    conversationId,
    quiet: context.globals.quiet,
    interactive: false,
    configuredTheme: () => context.configuredTheme(),
    mayQueryTerminal: watchedLive(context.facts),
    ...(context.format === 'json'
      ? {}
      : { price: await loadPricer(events.flatMap((event) => (event.type === 'usage' ? [event.model] : []))) }),
  });
  for (const event of events) renderer.event(event, true);
  if (parsed.skipped > 0)
    renderer.notice(
      'warning',
      `skipped ${counted(parsed.skipped, 'damaged line')} (${parsed.skippedLines.length === 1 ? 'line' : 'lines'} ` +
        `${parsed.skippedLines.join(', ')})`,
    );
  await renderer.flush();
  return 0;
}
