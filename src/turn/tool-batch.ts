/**
 * A step's batch of tool calls (DESIGN §9): a deferred call does not stop the others; consecutive
 * calls that only read and run unattended run at the same time, their events still reach the log
 * in call order (the first unfinished call's as they happen, the others' once those before them are
 * done). Each call goes through processToolCall (tool-calls.ts). The first call of a batch that
 * starts and can change anything is preceded by a checkpoint of the workspace (DESIGN §10), and the
 * batch then ends with one; a batch whose calls were all refused or deferred records none.
 */
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import type { CheckpointRecorder } from '../checkpoint/recorder.ts';
import { resolveResultMode, resolveRunMode } from '../config/policy.ts';
import { InquiryResolver, type ResolverContext } from './inquiries.ts';
import { processToolCall, type CallOutcome, type ToolCallContext } from './tool-calls.ts';

export interface ToolBatchContext {
  calls: ToolCallContext;
  /** What a concurrent call's own InquiryResolver is made from (with that call's `append`). */
  inquiries: ResolverContext;
  /** The events of the turn so far. */
  turnEvents(): ConversationEvent[];
  /**
   * The run's checkpoints, and the number of this turn (1 for the conversation's first); none when the run keeps none.
   */
  checkpoints?: { recorder: CheckpointRecorder; turn: number };
}

export async function processToolCalls(
  context: ToolBatchContext,
  calls: EventOf<'tool_call_request'>[],
): Promise<'done' | 'deferred'> {
  const writes = calls.some((call) => context.calls.tools.get(call.name)?.sideEffects === true);
  if (!writes || !context.checkpoints) return processBatch(context, calls);
  let taken = false;
  const beforeChange = async (): Promise<void> => {
    if (taken) return;
    taken = true;
    await checkpoint(context, 'before', calls);
  };
  try {
    return await processBatch({ ...context, calls: { ...context.calls, beforeChange } }, calls);
  } finally {
    if (taken) await checkpoint(context, 'after', calls);
  }
}

/**
 * Records the workspace's state and names it in the log; the files jp's file tools write are kept even when ignored.
 */
async function checkpoint(
  context: ToolBatchContext,
  when: 'before' | 'after',
  calls: EventOf<'tool_call_request'>[],
): Promise<void> {
  if (!context.checkpoints) return;
  const files = calls.flatMap((call) => context.calls.tools.get(call.name)?.writesFile?.(call.arguments) ?? []);
  const event = await context.checkpoints.recorder.record(when, files, context.checkpoints.turn);
  if (event) context.calls.append(event);
}

async function processBatch(
  context: ToolBatchContext,
  calls: EventOf<'tool_call_request'>[],
): Promise<'done' | 'deferred'> {
  let deferred = false;
  for (let index = 0; index < calls.length; ) {
    let end = index;
    while (end < calls.length && runsAlongside(context, calls[end]!)) end++;
    const group = end - index >= 2 ? calls.slice(index, end) : [calls[index]!];
    const outcomes =
      group.length > 1
        ? await processTogether(context, group)
        : [await processToolCall(context.calls, group[0]!, context.turnEvents())];
    if (outcomes.some((outcome) => outcome.kind === 'deferred')) deferred = true;
    index += group.length;
  }
  return deferred ? 'deferred' : 'done';
}

/** A call that may run alongside others: a read-only tool that runs and delivers unattended, not begun before. */
function runsAlongside(context: ToolBatchContext, call: EventOf<'tool_call_request'>): boolean {
  const { tools, config, remembered } = context.calls;
  const tool = tools.get(call.name);
  if (!tool?.readOnly || remembered.get(tool.name) === 'skip') return false;
  if (resolveRunMode(config, tool.name, tool.defaultRunMode).value !== 'unattended') return false;
  if (resolveResultMode(config, tool.name).value !== 'unattended') return false;
  return !context
    .turnEvents()
    .some(
      (event) =>
        (event.type === 'tool_call_start' && event.id === call.id) ||
        (event.type === 'inquiry_request' && event.tool_call_id === call.id),
    );
}

async function processTogether(
  context: ToolBatchContext,
  group: EventOf<'tool_call_request'>[],
): Promise<CallOutcome[]> {
  const held: ConversationEvent[][] = group.map(() => []);
  const finished = group.map(() => false);
  let head = 0;
  const advance = (): void => {
    while (head < group.length && finished[head]) {
      head++;
      for (const event of held[head] ?? []) context.calls.append(event);
      if (head < group.length) held[head] = [];
    }
  };
  const settled = await Promise.allSettled(
    group.map(async (call, position) => {
      const append = (event: ConversationEvent): void => {
        if (position === head) context.calls.append(event);
        else held[position]!.push(event);
      };
      const resolver = new InquiryResolver({ ...context.inquiries, append });
      try {
        return await processToolCall({ ...context.calls, append, resolver }, call, context.turnEvents());
      } finally {
        finished[position] = true;
        advance();
      }
    }),
  );
  for (const result of settled) if (result.status === 'rejected') throw result.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<CallOutcome>).value);
}
