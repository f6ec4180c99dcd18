/**
 * One LLM request and its streamed response, made into the step's events: text and reasoning go
 * through the step's StepText (step-text.ts); the provider's own tool calls and results are recorded
 * as they come; the calls jp is to run are recorded (redacted) and returned with the arguments the
 * model gave. Returns at the provider's finish; a stream without one throws (the caller cuts the step).
 */
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import { RunError } from '../errors.ts';
import type { ChatModel, PromptMessage, ToolSpec } from '../llm/types.ts';
import type { Tool } from '../tools/tool.ts';
import { refusalMarked } from './context-guard.ts';
import type { FinishPart } from './limits.ts';
import type { StepText } from './step-text.ts';

export interface StepStreamContext {
  model: ChatModel;
  messages: PromptMessage[];
  tools: ToolSpec[];
  signal: AbortSignal;
  cacheKey: string;
  /** The request is estimated past the threshold of the window (ChatRequest.likelyOverflow). */
  likelyOverflow?: { estimate: number; window: number };
  text: StepText;
  /** Records an event (redacted); returns it as kept. */
  append<E extends ConversationEvent>(event: E): E;
  /** The whole log so far: a call jp runs is recorded under an id no call of it has (uniqueCallId). */
  log: readonly ConversationEvent[];
  /** The tools jp runs, and the description of the sandbox their commands run in. */
  runnable: Map<string, Tool>;
  sandboxDescription: string;
  toolRoot: string;
}

export interface StepResult {
  /** The calls jp is to run, as recorded but with the model's own arguments. */
  calls: EventOf<'tool_call_request'>[];
  finish: FinishPart;
}

/** A context-length refusal before any part is thrown as a ContextLengthRefusal (context-guard.ts). */
export async function streamStep(context: StepStreamContext): Promise<StepResult> {
  const { text } = context;
  const calls: EventOf<'tool_call_request'>[] = [];
  const usedIds = new Set(context.log.flatMap((event) => (event.type === 'tool_call_request' ? [event.id] : [])));
  let finish: FinishPart | undefined;
  const stream = context.model.stream({
    messages: context.messages,
    tools: context.tools,
    signal: context.signal,
    cacheKey: context.cacheKey,
    ...(context.likelyOverflow ? { likelyOverflow: context.likelyOverflow } : {}),
  });
  for await (const part of refusalMarked(stream)) {
    switch (part.type) {
      case 'text':
        text.message(part.text);
        break;
      case 'reasoning':
        text.reasoning(part.text);
        break;
      case 'reasoning_end':
        text.reasoningEnd(part.metadata);
        break;
      case 'source':
        text.source(part.source);
        break;
      case 'provider_tool_call':
        text.beforeToolCall('provider');
        context.append({
          type: 'tool_call_request',
          timestamp: now(),
          id: part.id,
          name: part.name,
          arguments: part.input,
          provider_executed: true,
        });
        break;
      case 'provider_tool_result':
        context.append({
          type: 'tool_call_response',
          timestamp: now(),
          id: part.id,
          content: typeof part.result === 'string' ? part.result : JSON.stringify(part.result),
          is_error: part.isError,
          outcome: part.isError ? 'error' : 'ok',
          provider_executed: true,
        });
        break;
      case 'tool_call': {
        text.beforeToolCall('jp');
        // Recorded (and shown) redacted; run with the arguments the model gave: redaction hides
        // secrets from what jp records and shows, it never rewrites what a tool is asked to do.
        const requested = parseArguments(part.input);
        const sandbox = sandboxOfCall(context, part.name, requested);
        const id = uniqueCallId(part.id, usedIds);
        usedIds.add(id);
        calls.push({
          ...context.append({
            type: 'tool_call_request',
            timestamp: now(),
            id,
            name: part.name,
            arguments: requested,
            ...(sandbox ? { sandbox } : {}),
          }),
          arguments: requested,
        });
        break;
      }
      case 'finish':
        finish = part;
        break;
    }
  }
  if (!finish) throw new RunError('internal_error', 'internal error: the model stream ended without a finish');
  text.finish();
  return { calls, finish };
}

/**
 * The id a call of the model is recorded under: its own, or, when the log already has a call of that
 * id (providers that number calls per response, `call_0`, reuse them), the first free `<id>_<n>`.
 * Ids are then unique in a log, so "a call whose id has a response is never run again" (resumed-turn.ts)
 * holds without exception; the model is sent the recorded id with its call and its result alike.
 */
export function uniqueCallId(id: string, used: ReadonlySet<string>): string {
  if (!used.has(id)) return id;
  for (let suffix = 2; ; suffix++) if (!used.has(`${id}_${suffix}`)) return `${id}_${suffix}`;
}

/** How a call's commands will be confined, for its header: undefined for a tool that starts none. */
function sandboxOfCall(context: StepStreamContext, name: string, argumentsValue: unknown): string | undefined {
  const tool = context.runnable.get(name);
  if (!tool?.confined) return undefined;
  const description = context.sandboxDescription;
  if (description !== 'off' && tool.escalation?.(argumentsValue, context.toolRoot))
    return `${description}; asks to run outside it`;
  return description;
}

function parseArguments(input: string): unknown {
  try {
    return JSON.parse(input === '' ? '{}' : input);
  } catch {
    return input;
  }
}
