/**
 * The provider-visible conversation, rebuilt from the log for every request. Discarded turns are
 * left out, and so is an abandoned step: assistant text that was cut off (no tool calls) and then
 * re-requested, so the model never sees a half answer followed by its own restart. Calls the
 * provider ran itself (hosted web search) are not sent back: the answer that used them is. Signed
 * reasoning blocks go back with their provider metadata, in front of the step's text.
 */
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import { splitTurns } from '../conversation/turn-state.ts';
import type { PromptMessage } from '../llm/types.ts';

type AssistantMessage = Extract<PromptMessage, { role: 'assistant' }>;
type ToolMessage = Extract<PromptMessage, { role: 'tool' }>;

const missingResult = 'No result was recorded for this tool call.';

/**
 * The request's stable prefix comes first and in this order: the system prompt, then the latest
 * compaction summary (the same until the next compaction), then the history after it. When the
 * summary's range holds the user's current question, the question follows the summary as written.
 */
export function buildPrompt(events: readonly ConversationEvent[], systemPrompt: string | undefined): PromptMessage[] {
  const messages: PromptMessage[] = [];
  if (systemPrompt) messages.push({ role: 'system', content: systemPrompt });
  const compaction = latestCompaction(events);
  if (compaction) messages.push({ role: 'user', content: summaryMessage(compaction.event.summary), summary: true });
  const replacedUpTo = compaction ? compaction.event.replaces[1] : -1;
  // A summary never stands for the question being answered: it follows the summary word for word.
  const question = currentQuestion(events);
  if (question && question.index <= replacedUpTo) messages.push({ role: 'user', content: userContent(question.event) });
  for (const turn of splitTurns(events)) {
    if (turn.final === 'discarded') continue;
    if (turn.start + turn.events.length - 1 <= replacedUpTo) continue;
    const toolNames = new Map<string, string>();
    let assistant: AssistantMessage | undefined;
    let reasoning = '';
    const closeStep = (): void => {
      assistant = undefined;
      reasoning = '';
    };
    const openStep = (): AssistantMessage => {
      if (!assistant) {
        assistant = { role: 'assistant', text: '', toolCalls: [] };
        messages.push(assistant);
      }
      return assistant;
    };
    for (const [offset, event] of turn.events.entries()) {
      if (turn.start + offset <= replacedUpTo) continue;
      switch (event.type) {
        case 'chat_request':
          closeStep();
          messages.push({
            role: 'user',
            content: userContent(event),
            ...(event.images && event.images.length > 0
              ? { images: event.images.map((image) => ({ mediaType: image.media_type, data: image.data })) }
              : {}),
          });
          break;
        case 'chat_response':
          if ('reasoning' in event) {
            reasoning += event.reasoning;
            if (event.provider_metadata) {
              const step = openStep();
              (step.reasoning ??= []).push({ text: reasoning, metadata: event.provider_metadata });
              reasoning = '';
            }
            break;
          }
          openStep().text += event.message;
          if (event.incomplete && assistant!.toolCalls.length === 0) {
            // A cut-off answer is never sent back, whatever follows it.
            messages.splice(messages.indexOf(assistant!), 1);
            closeStep();
          }
          break;
        case 'tool_call_request': {
          if (event.provider_executed) break;
          const step = openStep();
          toolNames.set(event.id, event.name);
          step.toolCalls.push({ id: event.id, name: event.name, arguments: argumentsObject(event.arguments) });
          break;
        }
        case 'tool_call_response': {
          if (event.provider_executed) break;
          closeStep();
          const last = messages[messages.length - 1];
          const result = {
            id: event.id,
            name: toolNames.get(event.id) ?? 'unknown',
            content: event.content,
            isError: event.is_error,
          };
          if (last?.role === 'tool') last.results.push(result);
          else messages.push({ role: 'tool', results: [result] } satisfies ToolMessage);
          break;
        }
        case 'turn_end':
          closeStep();
          break;
        default:
          break;
      }
    }
  }
  return sanitize(messages);
}

/** How the model is shown a compaction summary: the first user message of the history. */
export function summaryMessage(summary: string): string {
  return `[Summary of the earlier conversation, written when it grew too long for the context window]\n\n${summary}`;
}

/** A user's message as the model gets it: what the user's UserPromptSubmit hooks added follows it. */
function userContent(event: EventOf<'chat_request'>): string {
  return event.context === undefined
    ? event.content
    : `${event.content}\n\nContext from the user's UserPromptSubmit hooks:\n${event.context}`;
}

/** The user's message the conversation is answering now: the last one outside a discarded turn. */
export function currentQuestion(
  events: readonly ConversationEvent[],
): { index: number; event: EventOf<'chat_request'> } | undefined {
  const turns = splitTurns(events);
  for (let turn = turns.length - 1; turn >= 0; turn--) {
    const { final, start, events: turnEvents } = turns[turn]!;
    if (final === 'discarded') continue;
    for (let offset = turnEvents.length - 1; offset >= 0; offset--) {
      const event = turnEvents[offset]!;
      if (event.type === 'chat_request') return { index: start + offset, event };
    }
  }
  return undefined;
}

/**
 * The compaction in force: the last `compaction` event outside a discarded turn whose range lies
 * before it. Events outside any turn (`jp conversation compact` between turns) count.
 */
export function latestCompaction(
  events: readonly ConversationEvent[],
): { index: number; event: EventOf<'compaction'> } | undefined {
  const discarded = new Set<number>();
  for (const turn of splitTurns(events)) {
    if (turn.final === 'discarded')
      for (let index = turn.start; index < turn.start + turn.events.length; index++) discarded.add(index);
  }
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.type !== 'compaction' || discarded.has(index)) continue;
    if (event.replaces[0] <= event.replaces[1] && event.replaces[1] < index) return { index, event };
  }
  return undefined;
}

/** Tool arguments as the provider expects them: an object (invalid JSON is kept as a string field). */
function argumentsObject(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value;
  return { _raw: value };
}

function sanitize(messages: PromptMessage[]): PromptMessage[] {
  const result: PromptMessage[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    const next = messages[index + 1];
    if (message.role === 'assistant') {
      const abandoned = message.toolCalls.length === 0 && (next === undefined || next.role === 'assistant');
      if (abandoned || (message.text === '' && message.toolCalls.length === 0)) continue;
      result.push(message);
      if (message.toolCalls.length > 0) {
        // Every call needs a result before the next request; fill gaps left by damaged logs.
        const answered = new Set(next?.role === 'tool' ? next.results.map((entry) => entry.id) : []);
        const missing = message.toolCalls.filter((call) => !answered.has(call.id));
        if (missing.length > 0) {
          const fill = missing.map((call) => ({ id: call.id, name: call.name, content: missingResult, isError: true }));
          if (next?.role === 'tool') {
            next.results.push(...fill);
          } else {
            result.push({ role: 'tool', results: fill });
          }
        }
      }
      continue;
    }
    result.push(message);
  }
  return result;
}
