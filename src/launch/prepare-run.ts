/**
 * Starting a run, the one way every front end does it (`jp query`, `--no-server`, `jp acp`, and
 * any later client of the protocol): the front end has chosen the conversation and decided the
 * workspace config's trust on its config snapshot; `prepareRun` takes the conversation's lock,
 * reads its log, lets the front end say what the turn does (it may ask its user about an
 * incomplete turn), and builds the run request; `start` then spawns the query server (or hosts the
 * run in this process) and gives back the link a client speaks the protocol on. A run that does
 * not start leaves nothing behind, by one cleanup path (`abandon`): the session's active
 * conversation as it was, the lock released, a conversation made for it removed.
 *
 * This folder is the client process's only way into server/ and run/ (test/unit/layout.test.ts).
 */
import path from 'node:path';
import type { ConversationEvent } from '../conversation/events.ts';
import { readEventLog } from '../conversation/reader.ts';
import { eventsFile, removeConversation } from '../conversation/store.ts';
import type { ConfigInputs } from '../config/layers.ts';
import type { ConfigSnapshot } from '../config/snapshot.ts';
import type { WorkspaceTrust } from '../config/trust.ts';
import type { RunRequest } from '../protocol/run-request.ts';
import type { LogSettings } from '../output/logger.ts';
import type { ServerLink } from '../protocol/link.ts';
import type { RunPayloads } from '../report/payloads.ts';
import { acquireLock, type ConversationLock } from '../workspace/lock.ts';
import { userSubdirectory, type Workspace } from '../workspace/workspace.ts';

/** The configuration a run goes by: the front end's snapshot, its trust decision, its command line. */
export interface RunConfiguration {
  snapshot: ConfigSnapshot;
  trust: WorkspaceTrust;
  cfgArguments: string[];
  flags: ConfigInputs['flags'];
}

/** What the turn does, decided by the front end once the lock is held and the log is read. */
export type TurnStart = Pick<RunRequest, 'message' | 'resume' | 'discard_turn'> &
  Partial<Pick<RunRequest, 'reply' | 'close_turn' | 'images'>>;

export interface RunPlan {
  workspace: Workspace;
  /** `created`: the front end made it for this run, and it goes again if the run does not start. */
  conversation: { id: string; created: boolean };
  configuration: RunConfiguration;
  /** The user's working directory (tools and instruction files start there). */
  cwd: string;
  /** Started with --detach: no client is waited for, and the built-in detached policy is `defer`. */
  detached: boolean;
  tools: { noTools: boolean; enabled: string[] };
  /** How long to wait for a held lock, and who this process is to it. */
  lock: { waitSeconds: number; role: 'client' | 'in-process' };
  log: LogSettings;
  /** The query as a result reports it (resultQuery). */
  query: string;
  /** When the user's command started (milliseconds since the epoch). */
  startedAt: number;
  /** What the turn does, given the conversation's log as read under the lock. */
  turn(events: readonly ConversationEvent[]): TurnStart | Promise<TurnStart>;
  /**
   * Makes the conversation the session's active one, once the run is starting; returns how to take
   * that back if it then fails to start. None: the front end has no sessions (an editor).
   */
  activate?: () => () => void;
}

/** Takes the lock, reads the log, asks the front end what the turn does, and builds the request. */
export async function prepareRun(plan: RunPlan): Promise<PreparedRun> {
  const { workspace, conversation } = plan;
  let lock: ConversationLock;
  try {
    lock = acquireLock(userSubdirectory(workspace, 'locks'), conversation.id, {
      waitSeconds: plan.lock.waitSeconds,
      role: plan.lock.role,
      detached: plan.detached,
    });
  } catch (error) {
    // Not even locked (a held lock, a full or read-only data directory): what was made for it goes.
    if (conversation.created) removeConversation(workspace.conversationsDirectory, conversation.id);
    throw error;
  }
  const cleanup = new RunCleanup(plan, lock);
  try {
    const events = readEventLog(eventsFile(workspace.conversationsDirectory, conversation.id)).events;
    const turn = await plan.turn(events);
    const { configuration } = plan;
    const request: RunRequest = {
      conversation_id: conversation.id,
      workspace: { root: workspace.root, is_default: workspace.isDefault, tool_root: workspace.toolRoot },
      cwd: plan.cwd,
      ...turn,
      detached: plan.detached,
      config: {
        files: configuration.snapshot.toWire(),
        cfg_arguments: configuration.cfgArguments,
        trusted_workspace_sha256: configuration.trust.trustedSha256,
        workspace_trust_state: configuration.trust.state,
        flags: configuration.flags,
      },
      tools: { no_tools: plan.tools.noTools, enabled: plan.tools.enabled },
      lock_token: lock.token,
      log: plan.log,
      run_log: path.join(userSubdirectory(workspace, 'processes'), `${conversation.id}.log`),
      query: plan.query,
      started_at: plan.startedAt,
    };
    return new PreparedRun(request, events, cleanup);
  } catch (error) {
    cleanup.abandon();
    throw error;
  }
}

/** What a run that does not start must undo, in one place. */
export class RunCleanup {
  private undoActivation: (() => void) | undefined;
  private lockHandedOver = false;

  constructor(
    private readonly plan: RunPlan,
    /** The conversation's lock, this process's until a server takes it over or the run ends. */
    readonly lock: ConversationLock,
  ) {}

  /** Makes the conversation the session's active one (RunPlan.activate); abandon takes it back. */
  activate(): void {
    this.undoActivation = this.plan.activate?.();
  }

  /** The query server took the lock over: it is no longer this process's to release. */
  lockTaken(): void {
    this.lock.forget();
    this.lockHandedOver = true;
  }

  /** The run does not start: everything made for it is taken back. */
  abandon(): void {
    try {
      this.undoActivation?.();
    } finally {
      if (!this.lockHandedOver) this.lock.release();
      const { workspace, conversation } = this.plan;
      if (conversation.created) removeConversation(workspace.conversationsDirectory, conversation.id);
    }
  }
}

/** A run ready to start: its request, the log it was prepared from, and what to undo if it does not start. */
export class PreparedRun {
  constructor(
    readonly request: RunRequest,
    /** The conversation's log as read under the lock, before the run: a resumed turn is shown from it. */
    readonly events: readonly ConversationEvent[],
    readonly cleanup: RunCleanup,
  ) {}

  get conversationId(): string {
    return this.request.conversation_id;
  }

  /** Gives back what was taken for a run that will not be started. */
  abandon(): void {
    this.cleanup.abandon();
  }
}

/** A run started (start-run.ts): where it runs, and the link its client speaks the protocol on. */
export interface StartedRun {
  conversationId: string;
  /** The process that runs the turn: the server's pid, or this process's. */
  pid: number;
  /** The model, when this process set the run up; a server's is in its result. */
  model: string | null;
  /** Whether a client of it can detach (Ctrl+Z): only from a run in its own server. */
  detachable: boolean;
  /** The run's capability (DESIGN §8): what this client shows in its hello to steer the run. */
  capability: string;
  /** The link a client speaks the protocol on (once). */
  connect(): Promise<ServerLink<RunPayloads>>;
  /** Resolves when the run has ended, for a run hosted here; at once for a server, which runs on its own. */
  ended(): Promise<void>;
}
