/**
 * The pure part of compaction (DESIGN §6): how big the next request is estimated to be, where the
 * log may be cut, and the transcript a compaction request summarises. The engine makes the request
 * and records the `compaction` event.
 *
 * Old tool results are never cut on their own, before a summary is needed: every such cut changes
 * the request from that result onwards, so the provider's prompt cache (Anthropic breakpoints,
 * OpenAI's prefix cache) would miss on everything after it, and a cut point that moves with every
 * request would make every request pay full price. Compaction rewrites the prefix once; between two
 * compactions the prefix only grows.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { splitTurns } from '../conversation/turn-state.ts';
import type { PromptMessage, ToolSpec } from '../llm/types.ts';
import { latestCompaction } from './history.ts';

/** A deliberately low guess of characters per token, so estimates err towards compacting early. */
export const charactersPerToken = 3;

/** A new request is compacted first when its estimate passes this share of the window (assistant.compaction.threshold). */
export const defaultThreshold = 0.8;

/** After compaction the history kept word for word is at most this share of the window. */
export const keptShare = 0.25;

/** A compaction request's transcript is at most this share of the window. */
export const transcriptShare = 0.5;

export function estimateTokens(characters: number): number {
  return Math.ceil(characters / charactersPerToken);
}

/** The characters an event adds to a request (0 for events the model never sees). */
export function eventCharacters(event: ConversationEvent): number {
  switch (event.type) {
    case 'chat_request':
      return event.content.length + 16;
    case 'chat_response':
      return ('message' in event ? event.message.length : event.reasoning.length) + 16;
    case 'tool_call_request':
      return event.name.length + JSON.stringify(event.arguments ?? null).length + 48;
    case 'tool_call_response':
      return event.content.length + 48;
    default:
      return 0;
  }
}

/**
 * The estimated input tokens of the request about to be made from `events`: the input and output
 * tokens the last request since the compaction in force reported, plus what was added after it;
 * with no such report, the whole request measured in characters.
 */
export function estimateRequest(
  events: readonly ConversationEvent[],
  messages: readonly PromptMessage[],
  tools: readonly ToolSpec[],
): number {
  const compaction = latestCompaction(events);
  for (let index = events.length - 1; index > (compaction?.index ?? -1); index--) {
    const event = events[index]!;
    if (event.type !== 'usage' || event.purpose !== 'step' || event.usage.input_tokens === null) continue;
    let added = 0;
    for (const later of events.slice(index + 1)) added += eventCharacters(later);
    return event.usage.input_tokens + (event.usage.output_tokens ?? 0) + estimateTokens(added);
  }
  return estimateTokens(JSON.stringify(messages).length + JSON.stringify(tools).length);
}

/**
 * Positions after which the log can be cut so that what follows is a valid history on its own: no
 * tool call is left without its result, and the next message starts a step or a turn. Only
 * positions from `from` on, with something the model sees between `from` and them.
 */
export function cutPoints(events: readonly ConversationEvent[], from: number): number[] {
  const points: number[] = [];
  const open = new Set<string>();
  // A cut that would summarise nothing the model sees is no cut.
  let content = false;
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    if (event.type === 'tool_call_request' && !event.provider_executed) open.add(event.id);
    if (event.type === 'tool_call_response') open.delete(event.id);
    if (event.type === 'turn_start') open.clear();
    if (index >= from && eventCharacters(event) > 0) content = true;
    if (index < from || open.size > 0 || !content) continue;
    const next = events[index + 1];
    const endsStep = (event.type === 'tool_call_response' && !event.provider_executed) || event.type === 'turn_end';
    const nextStartsTurn = next !== undefined && (next.type === 'turn_start' || next.type === 'chat_request');
    if (endsStep || nextStartsTurn) points.push(index);
  }
  return points;
}

/**
 * Where to cut: the earliest point after which the history kept word for word is at most
 * `keepTokens`, else the last point. Undefined when there is nothing to cut.
 */
export function chooseCut(
  events: readonly ConversationEvent[],
  points: readonly number[],
  keepTokens: number,
): number | undefined {
  if (points.length === 0) return undefined;
  const after = new Array<number>(events.length + 1).fill(0);
  for (let index = events.length - 1; index >= 0; index--)
    after[index] = after[index + 1]! + eventCharacters(events[index]!);
  return points.find((point) => estimateTokens(after[point + 1]!) <= keepTokens) ?? points[points.length - 1];
}

/** Long text in a transcript: its head and tail, with what was left out said. */
function shorten(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const half = Math.floor(limit / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters left out …]\n${text.slice(-half)}`;
}

/**
 * The part of the log from `from` to `to` (both included) as plain text for a compaction request,
 * after the summary in force. Tool results and arguments are cut to `perItem` characters; discarded
 * turns and reasoning are left out.
 */
export function transcript(
  events: readonly ConversationEvent[],
  from: number,
  to: number,
  previousSummary: string | undefined,
  perItem: number,
): string {
  const discarded = new Set<number>();
  for (const turn of splitTurns(events)) {
    if (turn.final === 'discarded')
      for (let index = turn.start; index < turn.start + turn.events.length; index++) discarded.add(index);
  }
  const lines: string[] = [];
  if (previousSummary !== undefined) lines.push(`[Earlier summary]\n${previousSummary}`);
  const names = new Map<string, string>();
  let answer = '';
  const endAnswer = (): void => {
    if (answer.trim()) lines.push(`Assistant: ${answer.trim()}`);
    answer = '';
  };
  for (let index = 0; index <= to && index < events.length; index++) {
    const event = events[index]!;
    if (event.type === 'tool_call_request') names.set(event.id, event.name);
    if (index < from || discarded.has(index)) continue;
    switch (event.type) {
      case 'chat_request':
        endAnswer();
        lines.push(`User: ${event.content}`);
        break;
      case 'chat_response':
        if ('message' in event) answer += event.message;
        break;
      case 'tool_call_request':
        endAnswer();
        lines.push(`Assistant called ${event.name} ${shorten(JSON.stringify(event.arguments ?? null), perItem)}`);
        break;
      case 'tool_call_response':
        endAnswer();
        lines.push(
          `Result of ${names.get(event.id) ?? 'a tool'}${event.is_error ? ' (error)' : ''}: ${shorten(event.content, perItem)}`,
        );
        break;
      case 'turn_end':
        endAnswer();
        break;
      default:
        break;
    }
  }
  endAnswer();
  return lines.join('\n\n');
}
