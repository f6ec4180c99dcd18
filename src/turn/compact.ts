/**
 * Compaction requests (DESIGN §6): the model summarises the history up to a cut point, and a
 * `compaction` event records the summary and the range it stands for. Used before a request that
 * would outgrow the context window, after a provider's context-length refusal, and by
 * `jp conversation compact`. Never touches a terminal.
 */
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import { ProviderError } from '../errors.ts';
import type { ChatModel, PromptMessage, Usage } from '../llm/types.ts';
import { chooseCut, cutPoints, estimateTokens, keptShare, transcript, transcriptShare } from './compaction.ts';
import { compactionPrompt } from './compaction-prompt.ts';
import { latestCompaction } from './history.ts';

export interface CompactionContext {
  /** The whole log; `append` adds to it. */
  events: readonly ConversationEvent[];
  model: ChatModel;
  conversationId: string;
  signal: AbortSignal;
  /** Persists an event (redacted) and adds it to `events`. */
  append(event: ConversationEvent): void;
  /** Makes what was appended durable (a compaction survives a crash right after it). */
  sync(): void;
  notice(message: string): void;
  /** What the run is busy with, for a status line (compacting); absent where nothing shows one. */
  activity?(text: string): void;
  /** A summary request's reported usage (it is appended as a `usage` event by the caller). */
  usage(usage: Usage): void;
  /** The user's PreCompact hooks, told before anything is summarised. */
  beforeCompact?(): Promise<void>;
}

/**
 * Summarises the history up to a cut point, leaving at most a quarter of `windowTokens` word for
 * word (`keep: 'last-turn'`: everything before the last turn), one `compaction` event per summary
 * request: a transcript too long for one request is summarised in pieces, each building on the
 * last. False when there is nothing to cut.
 */
export async function compactHistory(
  context: CompactionContext,
  reason: EventOf<'compaction'>['reason'],
  windowTokens: number,
  keep: 'share' | 'last-turn' = 'share',
): Promise<boolean> {
  const { events } = context;
  const inForce = latestCompaction(events);
  let from = inForce ? inForce.event.replaces[1] + 1 : 0;
  const points = cutPoints(events, from);
  const lastTurn = events.map((event) => event.type).lastIndexOf('turn_start');
  const target =
    keep === 'last-turn'
      ? ([...points].reverse().find((point) => point < lastTurn) ?? points[points.length - 1])
      : chooseCut(events, points, Math.floor(windowTokens * keptShare));
  if (target === undefined) return false;
  let summary = inForce?.event.summary;
  const perItem = Math.max(300, Math.floor(windowTokens * 3 * 0.02));
  const transcriptTokens = Math.floor(windowTokens * transcriptShare);
  await context.beforeCompact?.();
  context.notice(
    `compacting the conversation: summarising ${target - from + 1} events to fit the context window (${windowTokens} tokens)`,
  );
  context.activity?.('compacting the conversation');
  while (from <= target) {
    const candidates = points.filter((point) => point >= from && point <= target);
    const fits = (point: number): boolean =>
      estimateTokens(transcript(events, from, point, summary, perItem).length) <= transcriptTokens;
    const end = [...candidates].reverse().find(fits) ?? candidates[0]!;
    const text = transcript(events, from, end, summary, perItem);
    const limit = transcriptTokens * 3;
    summary = await summarize(
      context,
      text.length > limit ? `${text.slice(0, limit)}\n[… the rest of this part was left out …]` : text,
      windowTokens,
    );
    context.append({ type: 'compaction', timestamp: now(), summary, replaces: [0, end], reason });
    context.sync();
    from = end + 1;
  }
  return true;
}

/** One compaction request: the transcript in, the summary out. */
async function summarize(context: CompactionContext, text: string, windowTokens: number): Promise<string> {
  const maxWords = Math.min(1500, Math.max(100, Math.floor((windowTokens * 0.08) / 1.4)));
  const messages: PromptMessage[] = [
    { role: 'system', content: compactionPrompt(maxWords) },
    { role: 'user', content: `Summarise this conversation so far:\n\n${text}` },
  ];
  let summary = '';
  for await (const part of context.model.stream({
    messages,
    tools: [],
    signal: context.signal,
    cacheKey: context.conversationId,
  })) {
    if (part.type === 'text') summary += part.text;
    else if (part.type === 'finish' && part.usage) context.usage(part.usage);
  }
  summary = summary.trim();
  if (summary === '') {
    throw new ProviderError(
      'compaction_failed',
      `${context.model.id} returned an empty summary when asked to compact the conversation`,
      {
        hint: 'Try again (`jp query --continue` resumes the turn), or set assistant.context_window larger if the model allows.',
      },
    );
  }
  return summary;
}
