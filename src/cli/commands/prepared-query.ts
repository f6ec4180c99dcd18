/** A query made ready to run: its conversation, its lock, its request (built by query.ts). */
import type { ConversationEvent } from '../../conversation/events.ts';
import type { RunRequest } from '../../protocol/run-request.ts';
import type { ConversationLock } from '../../workspace/lock.ts';

export interface Prepared {
  conversationId: string;
  lock: ConversationLock;
  request: RunRequest;
  /** The conversation's log as read under the lock, before the run: a resumed turn is shown from it. */
  events: readonly ConversationEvent[];
  /** This query created the conversation (removed again if the run cannot start). */
  created: boolean;
  /**
   * Makes it the session's active conversation; called once the run is starting. Returns how to
   * take that back if the run then fails to start.
   */
  activate(): () => void;
}
