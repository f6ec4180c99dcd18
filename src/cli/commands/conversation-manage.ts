/**
 * `jp conversation rm | use | fork`.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { forkConversation } from '../../conversation/fork.ts';
import { foreignSettingsWarning } from '../../conversation/config-delta.ts';
import { LogSeal } from '../../conversation/seal.ts';
import { removeConversation } from '../../conversation/store.ts';
import { acquireLock } from '../../workspace/lock.ts';
import { activateConversation, deactivateConversation, sessionKey } from '../../workspace/session.ts';
import { dataHome, userSubdirectory } from '../../workspace/workspace.ts';
import { UsageError } from '../../errors.ts';
import type { CommandContext } from '../context.ts';
import { requireExisting } from '../../conversation/targets.ts';

/** Removes a conversation and its run log; refuses (exit 5) while a process holds it. */
export function conversationRmCommand(context: CommandContext, id: string): number {
  const workspace = context.workspace();
  const conversationId = requireExisting(workspace, id);
  const lock = acquireLock(userSubdirectory(workspace, 'locks'), conversationId, { waitSeconds: 0, role: 'client' });
  try {
    removeConversation(workspace.conversationsDirectory, conversationId);
    rmSync(path.join(userSubdirectory(workspace, 'processes'), `${conversationId}.log`), { force: true });
  } finally {
    lock.release();
  }
  deactivateConversation(
    userSubdirectory(workspace, 'sessions'),
    sessionKey(context.facts.environment),
    conversationId,
  );
  context.status(`Removed ${conversationId}.`);
  return 0;
}

export function conversationUseCommand(context: CommandContext, id: string): number {
  const workspace = context.workspace();
  const conversationId = requireExisting(workspace, id);
  const session = sessionKey(context.facts.environment);
  if (!session) {
    throw new UsageError(
      'no_session',
      `cannot make ${conversationId} active: with no terminal and no JP_SESSION this run has no session to remember ` +
        `it in`,
      {
        hint:
          `Name it in each command instead (--id=${conversationId}), or set JP_SESSION=<name> for the runs that ` +
          `share it.`,
      },
    );
  }
  activateConversation(userSubdirectory(workspace, 'sessions'), session, conversationId);
  context.status(`${conversationId} is now this session's active conversation.`);
  return 0;
}

export function conversationForkCommand(context: CommandContext, id: string): number {
  const workspace = context.workspace();
  const source = requireExisting(workspace, id);
  const forked = forkConversation(
    workspace.conversationsDirectory,
    source,
    LogSeal.forUser(dataHome(context.facts.environment)),
    workspace.id,
  );
  if (forked.foreignSettings.length > 0) context.warn(foreignSettingsWarning(source, forked.foreignSettings));
  const fork = forked.metadata;
  const session = sessionKey(context.facts.environment);
  activateConversation(userSubdirectory(workspace, 'sessions'), session, fork.id);
  if (context.format === 'json') context.jsonLine(context.stdout, 'forked', { forked_from: source }, fork.id);
  else context.stdout.write(`${fork.id}\n`);
  context.status(
    session
      ? `Forked ${source} into ${fork.id}; it is now this session's active conversation.`
      : `Forked ${source} into ${fork.id}.`,
  );
  return 0;
}
