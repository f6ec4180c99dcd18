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

/**
 * A deliberately low guess of characters per token, so estimates err towards compacting early:
 * used until the provider has reported a request's input tokens (measuredCharactersPerToken).
 */
export const charactersPerToken = 3;

/**
 * The most characters a token plausibly stands for when jp has measured nothing (English prose with
 * a large vocabulary): a request is known to be too big only when it passes the window even so.
 */
export const mostCharactersPerToken = 4;

/**
 * A new request is compacted first when its estimate passes this share of the window (assistant.compaction.threshold).
 */
export const defaultThreshold = 0.8;

/** After compaction the history kept word for word is at most this share of the window. */
export const keptShare = 0.25;

/** A compaction request's transcript is at most this share of the window. */
export const transcriptShare = 0.5;

export function estimateTokens(characters: number, ratio: number = charactersPerToken): number {
  return Math.ceil(characters / ratio);
}

/** The characters of a request as jp measures them: its messages and tools as JSON. */
export function requestCharacters(messages: readonly PromptMessage[], tools: readonly ToolSpec[]): number {
  return JSON.stringify(messages).length + JSON.stringify(tools).length;
}

/**
 * Characters per token of this conversation's requests as the provider counted them: the last
 * request of the agent loop whose input tokens were reported, its characters over them. A small
 * model's tokenizer can take 1.5 characters a token, digits one; jp's guess of 3 would undercount.
 */
export function measuredCharactersPerToken(events: readonly ConversationEvent[]): number | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.type !== 'usage' || event.purpose !== 'step') continue;
    const input = event.usage.input_tokens;
    if (!event.request_characters || !input || input <= 0) continue;
    return Math.min(16, Math.max(0.25, event.request_characters / input));
  }
  return undefined;
}

/** How big the next request is, in tokens. */
export interface RequestEstimate {
  /** The likely size, erring high: what compaction decides on. */
  tokens: number;
  /** The least it can be: a request whose least passes the window is known to be too big. */
  least: number;
  /** The characters per token the estimate used, where this conversation measured it. */
  measured: number | undefined;
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
 * with no such report, the whole request measured in characters. Characters become tokens at the
 * ratio this conversation measured, else at 3 (likely) and 4 (least).
 */
export function estimateRequest(
  events: readonly ConversationEvent[],
  messages: readonly PromptMessage[],
  tools: readonly ToolSpec[],
): RequestEstimate {
  const measured = measuredCharactersPerToken(events);
  const likely = measured ?? charactersPerToken;
  const least = measured ?? mostCharactersPerToken;
  const compaction = latestCompaction(events);
  for (let index = events.length - 1; index > (compaction?.index ?? -1); index--) {
    const event = events[index]!;
    if (event.type !== 'usage' || event.purpose !== 'step' || event.usage.input_tokens === null) continue;
    let added = 0;
    for (const later of events.slice(index + 1)) added += eventCharacters(later);
    const input = event.usage.input_tokens;
    return {
      tokens: input + (event.usage.output_tokens ?? 0) + estimateTokens(added, likely),
      // The reported input is exact; its output may not all come back (reasoning is not sent).
      least: input + Math.floor(added / least),
      measured,
    };
  }
  const characters = requestCharacters(messages, tools);
  return { tokens: estimateTokens(characters, likely), least: Math.floor(characters / least), measured };
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
  ratio: number = charactersPerToken,
): number | undefined {
  if (points.length === 0) return undefined;
  const after = new Array<number>(events.length + 1).fill(0);
  for (let index = events.length - 1; index >= 0; index--)
    after[index] = after[index + 1]! + eventCharacters(events[index]!);
  return points.find((point) => estimateTokens(after[point + 1]!, ratio) <= keepTokens) ?? points[points.length - 1];
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
          `Result of ${names.get(event.id) ?? 'a tool'}${event.is_error ? ' (error)' : ''}: ` +
            `${shorten(event.content, perItem)}`,
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
