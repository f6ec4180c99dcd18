/**
 * `jp conversation compact [<cid>]`: summarises a conversation's older turns now (DESIGN §6), as
 * a run would before a request that outgrows the context window: everything before its last turn
 * becomes one summary the model is sent from then on. The log keeps every event. Takes the
 * conversation's lock (exit 5 while a run holds it).
 */
import { foreignSettingsWarning, recordedSettings } from '../../conversation/config-delta.ts';
import { LogSeal } from '../../conversation/seal.ts';
import type { ConversationEvent } from '../../conversation/events.ts';
import { now } from '../../conversation/events.ts';
import { ConversationLog } from '../../conversation/log.ts';
import { readEventLog } from '../../conversation/reader.ts';
import { eventsFile } from '../../conversation/store.ts';
import { contextWindow } from '../../llm/context-window.ts';
import { createChatModel } from '../../llm/create.ts';
import { resolveModel } from '../../llm/resolve.ts';
import { hooksOf } from '../../hooks/setup.ts';
import { compactHistory } from '../../turn/compact.ts';
import { estimateTokens } from '../../turn/compaction.ts';
import { acquireLock } from '../../workspace/lock.ts';
import { dataHome, userSubdirectory } from '../../workspace/workspace.ts';
import type { CommandContext } from '../context.ts';
import { targetConversation } from '../../conversation/targets.ts';

export async function conversationCompactCommand(context: CommandContext, id: string | undefined): Promise<number> {
  const workspace = context.workspace();
  const conversationId = targetConversation(workspace, context.facts.environment, id);
  const file = eventsFile(workspace.conversationsDirectory, conversationId);
  // Only the settings this user's jp recorded (conversation/seal.ts) choose the model that summarises.
  const recorded = recordedSettings(
    readEventLog(file).events,
    LogSeal.forUser(dataHome(context.facts.environment)).at({ conversationId, workspaceId: workspace.id }),
  );
  if (recorded.foreignKeys.length > 0) context.warn(foreignSettingsWarning(conversationId, recorded.foreignKeys));
  const config = await context.config([], { id: conversationId, delta: recorded.delta });
  await context.registerSecrets();
  const spec = resolveModel(config, context.facts.environment, context.facts.cwd);
  const lock = acquireLock(userSubdirectory(workspace, 'locks'), conversationId, { waitSeconds: 0, role: 'client' });
  try {
    const opened = ConversationLog.open(file);
    try {
      const events: ConversationEvent[] = opened.events;
      const model = await createChatModel(spec, config.value, {
        environment: context.facts.environment,
        secrets: context.secrets,
        onWarning: (message) => context.warn(message),
      });
      // With no known window (the test provider), the history's own size stands in for it.
      const characters = events.reduce((sum, event) => sum + JSON.stringify(event).length, 0);
      const windowTokens = contextWindow(spec, config.value)?.tokens ?? Math.max(1000, estimateTokens(characters));
      const before = events.length;
      let subprocesses = 0;
      const hooks = hooksOf(config, {
        conversationId,
        conversationsDirectory: workspace.conversationsDirectory,
        cwd: context.facts.cwd,
        workspaceRoot: workspace.root,
        toolRoot: workspace.root,
        environment: context.facts.environment,
        processes: {
          nextMarker: () => `${conversationId}.compact.${process.pid}.${++subprocesses}`,
          started() {},
          ended() {},
        },
        notice: (level, message) => (level === 'warning' ? context.warn(message) : context.status(message)),
        log: () => {},
      });
      const append = (made: ConversationEvent): void => {
        const event = context.secrets.redactValue(made);
        opened.log.append(event);
        events.push(event);
      };
      const compacted = await compactHistory(
        {
          events,
          model,
          conversationId,
          signal: new AbortController().signal,
          append,
          sync: () => opened.log.sync(),
          notice: (message) => context.status(message),
          usage: (usage) => append({ type: 'usage', timestamp: now(), model: spec.id, purpose: 'compaction', usage }),
          ...(hooks ? { beforeCompact: () => hooks.compacting('manual', new AbortController().signal) } : {}),
        },
        'manual',
        windowTokens,
        { keep: 'last-turn' },
      );
      if (!compacted) {
        context.status(`Nothing to compact in ${conversationId}: no older turns since the last compaction.`);
        return 0;
      }
      const last = events
        .slice(before)
        .filter((event) => event.type === 'compaction')
        .pop()!;
      if (last.type !== 'compaction') return 0;
      if (context.format === 'json')
        context.jsonLine(
          context.stdout,
          'compaction',
          { summary: last.summary, replaces: last.replaces, reason: last.reason },
          conversationId,
        );
      else context.stdout.write(`${last.summary}\n`);
      context.status(
        `Compacted ${conversationId}: events ${last.replaces[0]}–${last.replaces[1]} are sent to the model ` +
          'as this summary from now on; the log keeps them.',
      );
      return 0;
    } finally {
      opened.log.close();
    }
  } finally {
    lock.release();
  }
}
