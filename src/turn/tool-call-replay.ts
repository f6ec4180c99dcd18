/**
 * The replay of a resumed tool call: a cursor over the call's own recorded events in the
 * interrupted turn (its inquiries and its starts, in log order), consumed as the call goes through
 * its stages again. Each stage takes what it recorded: a recorded answer is reused, a recorded
 * request without an answer is asked again under its id. Where the process stopped after the tool
 * had started, `replayStart` says what becomes of the call; one with side effects that may have
 * taken effect is never silently run again: its outcome is unknown (`unknownOutcome`).
 */
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import type { Inquiry } from '../inquiry/types.ts';
import type { Tool, ToolResult } from '../tools/tool.ts';
import type { RecordedInquiry } from './inquiries.ts';

/** The call's own recorded events, consumed in order as the call is replayed. */
export class RecordedCall {
  private readonly entries: (EventOf<'inquiry_request'> | EventOf<'tool_call_start'>)[];
  private readonly responses: Map<string, EventOf<'inquiry_response'>>;
  private position = 0;

  constructor(callId: string, turnEvents: readonly ConversationEvent[]) {
    const requestIds = new Set<string>();
    this.entries = [];
    for (const event of turnEvents) {
      if (event.type === 'inquiry_request' && event.tool_call_id === callId) {
        this.entries.push(event);
        requestIds.add(event.id);
      } else if (event.type === 'tool_call_start' && event.id === callId) {
        this.entries.push(event);
      }
    }
    this.responses = new Map();
    for (const event of turnEvents)
      if (event.type === 'inquiry_response' && requestIds.has(event.id)) this.responses.set(event.id, event);
  }

  /** Whether the tool was started before (its PreToolUse hooks ran then). */
  started(): boolean {
    return this.entries.some((entry) => entry.type === 'tool_call_start');
  }

  /** The next recorded inquiry when it is of this kind (and asks this question); undefined otherwise. */
  takeInquiry(kind: Inquiry['kind'], questionId?: string): RecordedInquiry | undefined {
    const next = this.entries[this.position];
    if (next?.type !== 'inquiry_request' || next.inquiry.kind !== kind) return undefined;
    if (questionId !== undefined && (next.inquiry.kind !== 'tool_question' || next.inquiry.question.id !== questionId))
      return undefined;
    this.position++;
    return { request: next, response: this.responses.get(next.id) };
  }

  /** The questions the tool asked while it ran, recorded after its start (in order). */
  private takeDuringCall(): RecordedInquiry[] {
    const taken: RecordedInquiry[] = [];
    for (;;) {
      const next = this.entries[this.position];
      if (next?.type !== 'inquiry_request' || next.during_call !== true) return taken;
      this.position++;
      taken.push({ request: next, response: this.responses.get(next.id) });
    }
  }

  /**
   * What becomes of the next run of the tool, given what the log recorded after its start (when
   * it recorded one here). Consumes the start, and the questions asked while it ran.
   */
  replayStart(tool: Tool): ReplayedStart {
    if (this.entries[this.position]?.type !== 'tool_call_start') return { kind: 'run' };
    this.position++;
    const next = this.entries[this.position];
    if (next?.type === 'inquiry_request' && next.during_call === true) {
      // It stopped while the tool was asking (defer, a crash): settle what it asked, then run it
      // again with those answers. If the last question was answered, the tool went on after it.
      const asked = this.takeDuringCall();
      if (asked[asked.length - 1]!.response && tool.sideEffects) return { kind: 'unknown' };
      return { kind: 'run', settleFirst: asked };
    }
    // It returned a question, or its result was waiting to be delivered: that is its result again.
    if (next?.type === 'inquiry_request' && next.inquiry.kind === 'tool_question')
      return { kind: 'result', result: { kind: 'needs_input', question: next.inquiry.question } };
    if (next?.type === 'inquiry_request' && next.inquiry.kind === 'deliver_tool_result') {
      return {
        kind: 'result',
        result: next.inquiry.is_error
          ? { kind: 'error', message: next.inquiry.result }
          : { kind: 'success', content: next.inquiry.result },
      };
    }
    // Nothing after its start: it was running when the process stopped.
    if (next === undefined && tool.sideEffects) return { kind: 'unknown' };
    return { kind: 'run' };
  }
}

/**
 * `run`: run the tool (again), after settling the questions it asked last time (`settleFirst`);
 * `result`: the recorded result stands, the tool is not run; `unknown`: it may have taken effect.
 */
export type ReplayedStart =
  | { kind: 'run'; settleFirst?: RecordedInquiry[] }
  | { kind: 'result'; result: ToolResult }
  | { kind: 'unknown' };

/**
 * The response to a call that may or may not have taken effect: jp stopped while the tool ran (and
 * it was not run again), or the user interrupted the turn to reply while it ran.
 */
export function unknownOutcome(
  callId: string,
  cause: { stopped: string } | 'interrupted',
): EventOf<'tool_call_response'> {
  const content =
    cause === 'interrupted'
      ? 'Outcome unknown: the user interrupted while this tool was running; it may or may not have taken effect.'
      : `Outcome unknown: jp stopped while ${cause.stopped} was running, so it may or may not have taken effect. It ` +
        `was not run again; check its effect before retrying.`;
  return { type: 'tool_call_response', timestamp: now(), id: callId, content, is_error: true, outcome: 'unknown' };
}
