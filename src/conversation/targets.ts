/**
 * Which conversation a command means: an explicit id, or this session's active conversation.
 */
import { assertConversationDirectory, conversationExists, conversationIdPattern } from './store.ts';
import { UsageError } from '../errors.ts';
import { activeConversation, noSessionHint, sessionKey } from '../workspace/session.ts';
import { assertConversationsDirectory, userSubdirectory, type Workspace } from '../workspace/workspace.ts';

/**
 * Accepts `jp-c…` and the whole `Detached: jp-c… (pid N). Watch it with …` line a detached query
 * (or Ctrl+Z) prints, so it can be pasted as it is.
 */
export function normalizeConversationId(value: string): string {
  const trimmed = value.trim();
  const detached = /^Detached:\s*(\S+?)[.,]?(?:\s|$)/.exec(trimmed);
  return detached ? detached[1]! : trimmed;
}

export function requireExisting(workspace: Workspace, id: string): string {
  assertConversationsDirectory(workspace.conversationsDirectory);
  const normalized = normalizeConversationId(id);
  if (!conversationIdPattern.test(normalized)) {
    throw new UsageError(
      'conversation_id_invalid',
      `${JSON.stringify(id)} is not a conversation id (they look like jp-c1764000000000123)`,
      {
        hint: '`jp conversation ls` lists the conversations of this workspace.',
      },
    );
  }
  if (!conversationExists(workspace.conversationsDirectory, normalized)) {
    throw new UsageError(
      'conversation_not_found',
      `no conversation ${normalized} in the workspace at ${workspace.root}`,
      {
        hint: '`jp conversation ls` lists the conversations of this workspace.',
      },
    );
  }
  assertConversationDirectory(workspace.conversationsDirectory, normalized);
  return normalized;
}

/** The given id, or the session's active conversation; throws when there is neither. */
export function targetConversation(
  workspace: Workspace,
  environment: NodeJS.ProcessEnv,
  id: string | undefined,
): string {
  if (id !== undefined) return requireExisting(workspace, id);
  assertConversationsDirectory(workspace.conversationsDirectory);
  const session = sessionKey(environment);
  if (!session) throw noActiveConversation(noSessionMessage('no conversation given'));
  const active = activeConversation(userSubdirectory(workspace, 'sessions'), session);
  if (active && conversationExists(workspace.conversationsDirectory, active)) return active;
  throw new UsageError('no_active_conversation', 'this session has no active conversation', {
    hint: 'Name one (`jp conversation ls` lists them), or start one with `jp query "..."`.',
  });
}

/** `what`, and why nothing is active: this run has no session. */
export function noSessionMessage(what: string): string {
  return `${what}, and none is active: with no terminal and no JP_SESSION this run has no session`;
}

/** The error of a command that needs the active conversation where there is no session (`what`: what happened). */
export function noActiveConversation(what: string): UsageError {
  return new UsageError('no_active_conversation', what, { hint: noSessionHint });
}
