/**
 * Every conversation of a workspace with its status, derived from the registry (running: pid and
 * start time checked) and the log (waiting-for-input, interrupted, idle, damaged): what
 * `jp conversation ls` prints and `jp web` shows. Stale registry entries and sockets are removed on
 * sight, and so are dead runs' locks and per-run logs with nothing (more) to say. Never takes a
 * lock; never loads the config.
 */
import path from 'node:path';
import { addUsage, type Usage } from '../llm/types.ts';
import { readEventLog } from '../conversation/reader.ts';
import {
  assertConversationDirectory,
  conversationExists,
  eventsFile,
  lastCompleteEvent,
  listConversationIds,
  readMetadata,
} from '../conversation/store.ts';
import {
  conversationStatus,
  formatStatus,
  isFinalTurnEnd,
  type ConversationStatus,
} from '../conversation/turn-state.ts';
import { DamagedFileError } from '../errors.ts';
import { liveEntries, sweepRunLogs } from './registry.ts';
import { lockHolder, removeDeadLocks, runningByLock } from '../workspace/lock.ts';
import { activeConversation, sessionKey } from '../workspace/session.ts';
import { assertConversationsDirectory, userSubdirectory, type Workspace } from '../workspace/workspace.ts';

export type ListedStatus =
  | ConversationStatus
  | { kind: 'running'; pid: number; detached: boolean }
  /** Its log (or its directory) is not a regular file jp can read: listed, never read through. */
  | { kind: 'damaged'; problem: string };

export interface ListedConversation {
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  status: string;
  state: ListedStatus['kind'];
  pid: number | null;
  tool: string | null;
  resume_point: string | null;
  active: boolean;
  /** Tokens of every model request the conversation made (its `usage` events); null when none reported any. */
  usage: Usage | null;
  /**
   * Turns that changed files (their checkpoints say so; `jp conversation diff --turn N`), as its last run left them.
   */
  changed_turns: number[];
}

/**
 * A conversation's status from its log, and with `withUsage` its token usage (which needs the whole
 * log); damage in it is its own status, never the listing's failure.
 */
function readLog(
  conversationsDirectory: string,
  id: string,
  withUsage: boolean,
): { status: ListedStatus; usage: Usage | null } {
  try {
    assertConversationDirectory(conversationsDirectory, id);
    const file = eventsFile(conversationsDirectory, id);
    // Most conversations end with a final turn_end: for the status, reading the last line is enough.
    const tail = lastCompleteEvent(file);
    if (tail.kind === 'empty') return { status: { kind: 'idle' }, usage: null };
    if (!withUsage && tail.kind === 'event' && isFinalTurnEnd(tail.event))
      return { status: { kind: 'idle' }, usage: null };
    const { events } = readEventLog(file);
    let usage: Usage | null = null;
    for (const event of events) if (event.type === 'usage') usage = addUsage(usage, event.usage);
    return {
      status: tail.kind === 'event' && isFinalTurnEnd(tail.event) ? { kind: 'idle' } : conversationStatus(events),
      usage,
    };
  } catch (error) {
    const problem =
      error instanceof DamagedFileError ? `${path.basename(error.file)} ${error.problem}` : (error as Error).message;
    return { status: { kind: 'damaged', problem }, usage: null };
  }
}

export function listConversations(
  workspace: Workspace,
  environment: NodeJS.ProcessEnv,
  options: { withUsage?: boolean } = {},
): ListedConversation[] {
  assertConversationsDirectory(workspace.conversationsDirectory);
  const processes = userSubdirectory(workspace, 'processes');
  const locks = userSubdirectory(workspace, 'locks');
  const running = liveEntries(processes);
  // What dead runs left behind goes too: their locks, and run logs that have nothing (more) to say.
  removeDeadLocks(locks);
  sweepRunLogs(processes, {
    isLocked: (id) => lockHolder(locks, id) !== undefined,
    exists: (id) => conversationExists(workspace.conversationsDirectory, id),
  });
  const active = activeConversation(userSubdirectory(workspace, 'sessions'), sessionKey(environment));
  return listConversationIds(workspace.conversationsDirectory).map((id) => {
    const metadata = readMetadata(workspace.conversationsDirectory, id);
    // The registry entry, or (its processes directory removed under it) the run's own lock.
    const entry = running.get(id) ?? runningByLock(locks, id);
    const read =
      entry && !options.withUsage
        ? undefined
        : readLog(workspace.conversationsDirectory, id, options.withUsage === true);
    const status: ListedStatus = entry ? { kind: 'running', pid: entry.pid, detached: entry.detached } : read!.status;
    return {
      id,
      title: metadata.title,
      created_at: metadata.created_at,
      updated_at: metadata.updated_at,
      status:
        status.kind === 'running'
          ? `running (pid ${status.pid})`
          : status.kind === 'damaged'
            ? `damaged (${status.problem})`
            : formatStatus(status),
      state: status.kind,
      pid: status.kind === 'running' ? status.pid : null,
      tool: status.kind === 'waiting-for-input' ? status.tool : null,
      resume_point: status.kind === 'interrupted' ? status.resumePoint : null,
      active: id === active,
      usage: read?.usage ?? null,
      changed_turns: metadata.changed_turns ?? [],
    };
  });
}
