/**
 * What a resumed turn settles from its log before its first step: which pending tool calls this
 * user's jp recorded (only those run), which run decisions still hold, and, when the user
 * interrupted to reply, what was waiting, closed as not done in words the model can use.
 */
import { unknownOutcome } from './tool-call-replay.ts';
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import type { PlacedSeal } from '../conversation/seal.ts';
import { encodeAnswer, holdsForTheTurn, noAnswer, parseRunToolAnswer } from '../inquiry/answer.ts';
import type { Tool } from '../tools/tool.ts';
import type { TurnHost } from './host.ts';

export interface ResumedTurnContext {
  conversationId: string;
  seal: PlacedSeal;
  /** The whole log: a seal verifies only at its event's own position in it. */
  log: readonly ConversationEvent[];
  host: TurnHost;
  tools: Map<string, Tool>;
  append(event: ConversationEvent): void;
}

/**
 * The pending calls this user's jp recorded, here (conversation/seal.ts: this conversation, this
 * workspace, this position), and that were never answered: a call whose id already has a response
 * anywhere in the log is never run again. Any other (a copied, committed, reordered or edited log)
 * is answered "not run" and never runs: such a conversation goes on only as new turns.
 */
export function ownCalls(
  context: ResumedTurnContext,
  calls: EventOf<'tool_call_request'>[],
): EventOf<'tool_call_request'>[] {
  const answered = new Set(context.log.flatMap((event) => (event.type === 'tool_call_response' ? [event.id] : [])));
  const own: EventOf<'tool_call_request'>[] = [];
  for (const call of calls) {
    if (!answered.has(call.id) && context.seal.verifies(call, context.log)) {
      own.push(call);
      continue;
    }
    context.append({
      type: 'tool_call_response',
      timestamp: now(),
      id: call.id,
      content: answered.has(call.id)
        ? 'Not run: a call with this id already has a response in the conversation log, and a call is never run ' +
          'twice. Ask for it again if it is needed.'
        : 'Not run: this call is in the conversation log, but your jp did not record it there (the log was copied, ' +
          'committed, reordered or edited, or recorded before `jp seal rotate`). Ask for it again if it is needed.',
      is_error: true,
      outcome: 'skipped',
    });
  }
  if (own.length < calls.length) {
    context.host.notice(
      'warning',
      `did not run ${calls.length - own.length === 1 ? 'a tool call' : `${calls.length - own.length} tool calls`} of ` +
        `conversation ${context.conversationId} that your jp did not record there or that already have a response ` +
        `(a copied, committed, reordered or edited log)`,
    );
  }
  return own;
}

/**
 * Y and N answers given earlier in the turn (possibly by an earlier process) that this user's jp recorded, by tool
 * name.
 */
export function rememberedDecisions(
  context: ResumedTurnContext,
  turnEvents: readonly ConversationEvent[],
): Map<string, 'run' | 'skip'> {
  const decisions = new Map<string, 'run' | 'skip'>();
  const runInquiries = new Map<string, string>();
  for (const event of turnEvents) {
    if (event.type === 'inquiry_request' && event.inquiry.kind === 'run_tool')
      runInquiries.set(event.id, event.inquiry.tool);
    if (event.type === 'inquiry_response' && runInquiries.has(event.id) && context.seal.verifies(event, context.log)) {
      const tool = runInquiries.get(event.id)!;
      const parsed = parseRunToolAnswer(event.answer, 'log');
      if (!parsed.ok) continue;
      const answer = parsed.answer;
      // A lasting approval covers what its rule covers (the store), not every call of the tool.
      if ((answer.decision === 'approve' || answer.decision === 'deny') && holdsForTheTurn(answer.scope))
        decisions.set(tool, answer.decision === 'approve' ? 'run' : 'skip');
    }
  }
  return decisions;
}

/** The user interrupted to reply: what was waiting is settled as not done, in words the model can use. */
export function closeForReply(
  context: ResumedTurnContext,
  turnEvents: readonly ConversationEvent[],
  inquiries: EventOf<'inquiry_request'>[],
  calls: EventOf<'tool_call_request'>[],
): void {
  for (const inquiry of inquiries) {
    context.append({
      type: 'inquiry_response',
      timestamp: now(),
      id: inquiry.id,
      answer: encodeAnswer(noAnswer),
      by: 'user',
      reason: 'the user interrupted the turn to reply',
    });
  }
  const started = new Set(turnEvents.flatMap((event) => (event.type === 'tool_call_start' ? [event.id] : [])));
  for (const call of calls) {
    const unknown = started.has(call.id) && (context.tools.get(call.name)?.sideEffects ?? true);
    if (unknown) context.append(unknownOutcome(call.id, 'interrupted'));
    else
      context.append({
        type: 'tool_call_response',
        timestamp: now(),
        id: call.id,
        content: 'Not run: the user interrupted the turn to reply.',
        is_error: true,
        outcome: 'skipped',
      });
  }
}
