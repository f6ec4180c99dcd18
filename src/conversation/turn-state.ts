/**
 * Turn structure derived from the log alone (DESIGN §6). A turn runs from `turn_start` to a final
 * `turn_end` (completed or discarded). A `turn_end` with status interrupted or error marks where a
 * process stopped; the turn stays incomplete and resumable. A turn with no final end is incomplete
 * whatever the reason (crash, kill -9, defer).
 */
import type { ConversationEvent, EventOf } from './events.ts';
import { UsageError } from '../errors.ts';

export interface TurnSlice {
  /** Index in the log of the turn's first event (its turn_start). */
  start: number;
  events: ConversationEvent[];
  /** The final status, or undefined while the turn is incomplete. */
  final: 'completed' | 'discarded' | undefined;
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
    if (event.type === 'turn_end' && (event.status === 'completed' || event.status === 'discarded')) {
      current.final = event.status;
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
