/**
 * Turn structure derived from the log alone (DESIGN §6). A turn runs from `turn_start` to a final
 * `turn_end` (completed, discarded, or interrupted and `closed`). A `turn_end` with status
 * interrupted or error marks where a process stopped; the turn stays incomplete and resumable. A
 * turn with no final end is incomplete whatever the reason (crash, kill -9, defer).
 */
import { now, type ConversationEvent, type EventOf } from './events.ts';
import { UsageError } from '../errors.ts';

export interface TurnSlice {
  /** Index in the log of the turn's first event (its turn_start). */
  start: number;
  events: ConversationEvent[];
  /** The final status, or undefined while the turn is incomplete (`interrupted`: closed unfinished). */
  final: 'completed' | 'discarded' | 'interrupted' | undefined;
}

/** How `event` ends its turn for good (completed, discarded, closed unfinished); undefined when it does not. */
export function finalStatusOf(event: ConversationEvent): TurnSlice['final'] {
  if (event.type !== 'turn_end') return undefined;
  if (event.status === 'completed' || event.status === 'discarded') return event.status;
  return event.status === 'interrupted' && event.closed === true ? 'interrupted' : undefined;
}

export function isFinalTurnEnd(event: ConversationEvent): boolean {
  return finalStatusOf(event) !== undefined;
}

export function splitTurns(events: readonly ConversationEvent[]): TurnSlice[] {
  const turns: TurnSlice[] = [];
  let current: TurnSlice | undefined;
  events.forEach((event, index) => {
    if (event.type === 'turn_start') {
      current = { start: index, events: [event], final: undefined };
      turns.push(current);
      return;
    }
    if (!current) return;
    current.events.push(event);
    const final = finalStatusOf(event);
    if (final) {
      current.final = final;
      current = undefined;
    }
  });
  return turns;
}

export type ResumePoint = 'pending inquiry' | 'pending tool execution' | 'awaiting LLM response';

export interface IncompleteTurn {
  turn: TurnSlice;
  resumePoint: ResumePoint;
  /** Inquiry requests that have no response yet, in log order. */
  pendingInquiries: EventOf<'inquiry_request'>[];
  /** jp's tool calls that have no response yet, in log order (the provider's own never are). */
  pendingToolCalls: EventOf<'tool_call_request'>[];
  /** The last stop marker (interrupted or error), when the process stopped cleanly. */
  lastStop: EventOf<'turn_end'> | undefined;
}

export function describeTurn(turn: TurnSlice): IncompleteTurn {
  const answeredInquiries = new Set<string>();
  const answeredCalls = new Set<string>();
  let lastStop: EventOf<'turn_end'> | undefined;
  for (const event of turn.events) {
    if (event.type === 'inquiry_response') answeredInquiries.add(event.id);
    else if (event.type === 'tool_call_response') answeredCalls.add(event.id);
    else if (event.type === 'turn_end') lastStop = event;
  }
  const pendingInquiries = turn.events.filter(
    (event): event is EventOf<'inquiry_request'> =>
      event.type === 'inquiry_request' && !answeredInquiries.has(event.id),
  );
  const pendingToolCalls = turn.events.filter(
    (event): event is EventOf<'tool_call_request'> =>
      event.type === 'tool_call_request' && !event.provider_executed && !answeredCalls.has(event.id),
  );
  const resumePoint: ResumePoint =
    pendingInquiries.length > 0
      ? 'pending inquiry'
      : pendingToolCalls.length > 0
        ? 'pending tool execution'
        : 'awaiting LLM response';
  return { turn, resumePoint, pendingInquiries, pendingToolCalls, lastStop };
}

/**
 * What a person must decide before a new message may go ahead of an incomplete turn (DESIGN §7):
 * a pending inquiry, or a call that started and may have taken effect (its tool is not known to be
 * free of side effects: `sideEffectFree` names the tools that are). Undefined: nothing to decide,
 * the turn can be closed.
 */
export type TurnDecision = { kind: 'pending inquiry' | 'unknown outcome'; tool: string };

export function decisionOf(incomplete: IncompleteTurn, sideEffectFree: ReadonlySet<string>): TurnDecision | undefined {
  const inquiry = incomplete.pendingInquiries[0];
  if (inquiry) return { kind: 'pending inquiry', tool: inquiry.inquiry.tool };
  const started = startedPendingCalls(incomplete).find((call) => !sideEffectFree.has(call.name));
  return started ? { kind: 'unknown outcome', tool: started.name } : undefined;
}

/** The pending calls that had started (a `tool_call_start` and no response): they may have run. */
export function startedPendingCalls(incomplete: IncompleteTurn): EventOf<'tool_call_request'>[] {
  const started = new Set(
    incomplete.turn.events.flatMap((event) => (event.type === 'tool_call_start' ? [event.id] : [])),
  );
  return incomplete.pendingToolCalls.filter((call) => started.has(call.id));
}

/** The last turn when it is incomplete; earlier incomplete turns were superseded by later ones. */
export function findIncompleteTurn(events: readonly ConversationEvent[]): IncompleteTurn | undefined {
  const turns = splitTurns(events);
  const last = turns[turns.length - 1];
  if (!last || last.final !== undefined) return undefined;
  return describeTurn(last);
}

export type ConversationStatus =
  | { kind: 'idle' }
  | { kind: 'waiting-for-input'; tool: string }
  | { kind: 'interrupted'; resumePoint: ResumePoint };

export function conversationStatus(events: readonly ConversationEvent[]): ConversationStatus {
  const incomplete = findIncompleteTurn(events);
  if (!incomplete) return { kind: 'idle' };
  const inquiry = incomplete.pendingInquiries[0];
  if (inquiry) return { kind: 'waiting-for-input', tool: inquiry.inquiry.tool };
  return { kind: 'interrupted', resumePoint: incomplete.resumePoint };
}

export function formatStatus(status: ConversationStatus): string {
  switch (status.kind) {
    case 'idle':
      return 'idle';
    case 'waiting-for-input':
      return `waiting-for-input (${status.tool})`;
    case 'interrupted':
      return `interrupted (${status.resumePoint})`;
  }
}

/**
 * The incomplete turn `--continue` resumes; when there is none, the error that says so (exit 2).
 * `withMessage`: the user gave a message too, which can go as a new turn instead.
 */
export function turnToResume(
  conversationId: string,
  events: readonly ConversationEvent[],
  withMessage: boolean,
): IncompleteTurn {
  const incomplete = findIncompleteTurn(events);
  if (incomplete) return incomplete;
  throw new UsageError('nothing_to_continue', `conversation ${conversationId} has no incomplete turn to continue`, {
    hint: withMessage
      ? 'Drop --continue to send the message as a new turn.'
      : 'Send a new message instead: jp query "..."',
  });
}

/**
 * The events that close an unfinished turn that holds no decision (decisionOf): a result for each
 * call that has none (it did not run, or ran without effects and its result was lost), then the
 * final `turn_end` (interrupted, closed). The turn stays in the log and in what the model is sent.
 */
export function closingEvents(incomplete: IncompleteTurn): ConversationEvent[] {
  const results: ConversationEvent[] = incomplete.pendingToolCalls.map((call) => ({
    type: 'tool_call_response',
    timestamp: now(),
    id: call.id,
    content:
      'No result: jp stopped before this call ran or finished, and the turn was closed when the user sent a new ' +
      'message.',
    is_error: true,
    outcome: 'skipped',
  }));
  return [...results, { type: 'turn_end', timestamp: now(), status: 'interrupted', closed: true }];
}
