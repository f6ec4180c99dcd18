/**
 * Which conversation a command means: an explicit id, or this session's active conversation; and a
 * query's, opened in one place (queryConversation, openConversation): continued, forked or new.
 */
import { forkConversation } from './fork.ts';
import { LogSeal } from './seal.ts';
import { assertConversationDirectory, conversationExists, conversationIdPattern, createConversation } from './store.ts';
import { UsageError } from '../errors.ts';
import { activeConversation, noSessionHint, sessionKey, type SessionKey } from '../workspace/session.ts';
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

/** How a query names its conversation (its flags; at most one of id, fork and new: the command checks). */
export interface QueryTarget {
  id?: string | undefined;
  /** --fork: '' (a bare --fork) or true forks the session's active conversation. */
  fork?: string | boolean | undefined;
  new?: boolean | undefined;
  continue?: boolean | undefined;
}

/** The conversation a query goes on in: an existing one, a fork of one, or a new one. */
export type QueryConversation = { kind: 'existing'; id: string } | { kind: 'fork'; source: string } | { kind: 'new' };

/**
 * The conversation `target` means in `workspace` for the session `session` (none: no terminal, no
 * JP_SESSION). Nothing is made yet: openConversation does that once all checks have passed.
 */
export function queryConversation(
  workspace: Workspace,
  session: SessionKey | undefined,
  target: QueryTarget,
): QueryConversation {
  const sessions = userSubdirectory(workspace, 'sessions');
  if (target.id !== undefined) return { kind: 'existing', id: requireExisting(workspace, target.id) };
  if (target.fork !== undefined) {
    const named = typeof target.fork === 'string' && target.fork !== '' ? target.fork : undefined;
    if (named === undefined && !session) throw noActiveConversation(noSessionMessage('--fork names no conversation'));
    const source = named !== undefined ? requireExisting(workspace, named) : activeConversation(sessions, session);
    if (!source || !conversationExists(workspace.conversationsDirectory, source)) {
      throw new UsageError('no_active_conversation', '--fork needs a conversation: this session has no active one', {
        hint: 'Give one: --fork=<cid>.',
      });
    }
    return { kind: 'fork', source };
  }
  if (target.new) return { kind: 'new' };
  // With no session (no terminal, no JP_SESSION) nothing is active: a new conversation, unless --continue.
  if (!session && target.continue) throw noActiveConversation(noSessionMessage('--continue names no conversation'));
  const active = activeConversation(sessions, session);
  if (active && conversationExists(workspace.conversationsDirectory, active)) return { kind: 'existing', id: active };
  if (target.continue) {
    throw new UsageError('no_active_conversation', '--continue needs a conversation: this session has no active one', {
      hint: 'Name it: jp query --continue --id=<cid>.',
    });
  }
  return { kind: 'new' };
}

/** A query's conversation, opened: `created` for this run (it goes again if the run does not start). */
export interface OpenedConversation {
  id: string;
  created: boolean;
  /** A fork's source's settings that were not carried (Fork.foreignSettings): the command warns about them. */
  foreignSettings: string[];
}

/**
 * Opens the chosen conversation: an existing one as it is, a fork of its source (sealed with the
 * user's key under `dataHome`), or a new one titled `title`.
 */
export function openConversation(
  workspace: Workspace,
  chosen: QueryConversation,
  options: { title: string | null; dataHome: string },
): OpenedConversation {
  switch (chosen.kind) {
    case 'existing':
      return { id: chosen.id, created: false, foreignSettings: [] };
    case 'fork': {
      const seal = LogSeal.forUser(options.dataHome);
      const fork = forkConversation(workspace.conversationsDirectory, chosen.source, seal, workspace.id);
      return { id: fork.metadata.id, created: true, foreignSettings: fork.foreignSettings };
    }
    case 'new':
      return {
        id: createConversation(workspace.conversationsDirectory, { title: options.title }).id,
        created: true,
        foreignSettings: [],
      };
  }
}
