/**
 * What `jp web` and its sources say to each other, and what the page is sent (as JSON): a source
 * is this machine (local-source.ts) or an SSH host (ssh-source.ts, speaking to `jp web --stdio`
 * there). A view is one conversation opened by the page: its history from disk, then the run's
 * live messages (the attach contract, DESIGN §8), each event exactly once, by its `seq`; the
 * history in batches (historyBatch events each), so a long conversation is a few messages.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import type { Inquiry } from '../inquiry/types.ts';
import type { Usage } from '../llm/types.ts';
import type { ClientMessage, InterruptAction } from '../protocol/messages.ts';
import type { ResultObject } from '../report/result.ts';

/** How many events of a view's history go in one `events` message. */
export const historyBatch = 2000;

/** A conversation of a workspace of a source, as the page lists it. */
export interface ListedRun {
  source: string;
  workspace: { id: string; root: string; name: string };
  id: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  /** running, waiting-for-input, interrupted, idle, damaged. */
  state: string;
  /** The status in words, as `jp conversation ls` says it. */
  status: string;
  tool: string | null;
  usage: Usage | null;
  changed_turns: number[];
}

/** Where a conversation is: its source, its workspace's id there, its id. */
export interface ConversationReference {
  workspace: string;
  conversation: string;
}

/** An inquiry the log holds with no answer: a deferred run waits on it. */
export interface PendingInquiry {
  id: string;
  tool_call_id: string;
  inquiry: Inquiry;
}

export type ViewMessage =
  /** `running`: a live run is attached; `prompting`: this view answers its inquiries. */
  | { type: 'opened'; conversation_id: string; running: boolean; prompting: boolean; event_count: number }
  /** History, in a few batches: the events of seq `from`, `from + 1`, … */
  | { type: 'events'; from: number; events: ConversationEvent[] }
  | { type: 'event'; seq: number; event: ConversationEvent }
  | { type: 'delta'; kind: 'message' | 'reasoning'; text: string }
  | { type: 'inquiry'; id: string; inquiry: Inquiry; if_detached?: string | undefined }
  | { type: 'inquiry_resolved'; id: string; by: string }
  /** The inquiries a deferred run waits on (read from its log): answering one continues the run. */
  | { type: 'pending'; inquiries: PendingInquiry[] }
  | { type: 'interrupt_menu'; options: InterruptAction[] }
  | { type: 'notice'; level: 'info' | 'warning'; message: string }
  | { type: 'turn_complete'; result: ResultObject }
  /** The view has nothing more to say: the run ended, the view was refused, or the source went away. */
  | { type: 'closed'; reason: string; error?: { code: string; message: string } | undefined };

export interface OpenRequest extends ConversationReference {
  /** The first event to send (events before it were shown already). */
  from: number;
  /** Whether the view wants to answer inquiries (it is refused politely, and watches, when another client does). */
  prompt: boolean;
  /** The name recorded with the answers given in this view. */
  client: string;
}

export interface ViewHandle {
  send(message: ClientMessage): void;
  close(): void;
}

export interface ContinueRequest extends ConversationReference {
  inquiry_id: string;
  tool_call_id: string;
  /** The inquiry as the page showed it: the answer is given only to that very inquiry. */
  inquiry: unknown;
  /** The answer as the wire carries it (inquiry/answer.ts). */
  answer: unknown;
  client: string;
}

/** A source of runs: this machine, or an SSH host through `jp web --stdio`. */
export interface Source {
  readonly name: string;
  /** Calls `onList` with every conversation now and whenever the list changes; returns the unsubscribe. */
  watch(onList: (runs: ListedRun[]) => void, onProblem: (message: string | undefined) => void): () => void;
  open(request: OpenRequest, sink: (message: ViewMessage) => void): ViewHandle;
  /** Answers a deferred run's inquiry: the run continues in the background. */
  continueRun(request: ContinueRequest): Promise<{ ok: boolean; message: string }>;
  kill(reference: ConversationReference): Promise<{ ok: boolean; message: string }>;
  diff(reference: ConversationReference, turn: number | undefined): Promise<{ ok: boolean; text: string }>;
  close(): void;
}
