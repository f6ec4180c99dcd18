/**
 * Compaction requests (DESIGN §6): the model summarises the history up to a cut point, and a
 * `compaction` event records the summary and the range it stands for. Used before a request that
 * would outgrow the context window, after a provider's context-length refusal, and by
 * `jp conversation compact`. Never touches a terminal.
 */
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import { ProviderError, UsageError } from '../errors.ts';
import type { ChatModel, PromptMessage, Usage } from '../llm/types.ts';
import {
  charactersPerToken,
  chooseCut,
  cutPoints,
  estimateTokens,
  defaultThreshold,
  keptShare,
  measuredCharactersPerToken,
  mostCharactersPerToken,
  transcript,
  transcriptShare,
} from './compaction.ts';
import { compactionPrompt } from './compaction-prompt.ts';
import { windowHint } from './window-report.ts';
import { latestCompaction, summaryMessage } from './history.ts';

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
 * Summarises the history up to a cut point, one `compaction` event per summary request: a
 * transcript too long for one request is summarised in pieces, each building on the last. What
 * the request after it may hold is `windowTokens` × the threshold share; `fixedTokens` of it are
 * what no compaction shortens (the system prompt, the tools, the user's question). The summary's
 * cap and the history kept word for word (at most a quarter of the window; `keep: 'last-turn'`:
 * everything before the last turn) share the rest (summaryBudget). Each summary request fits the
 * window with its answer. False when there is nothing to cut.
 */
export async function compactHistory(
  context: CompactionContext,
  reason: EventOf<'compaction'>['reason'],
  windowTokens: number,
  options: { keep?: 'share' | 'last-turn'; fixedTokens?: number; threshold?: number } = {},
): Promise<boolean> {
  const { events } = context;
  const inForce = latestCompaction(events);
  let from = inForce ? inForce.event.replaces[1] + 1 : 0;
  const points = cutPoints(events, from);
  if (points.length === 0) return false;
  const lastTurn = events.map((event) => event.type).lastIndexOf('turn_start');
  const measured = measuredCharactersPerToken(events);
  const ratio = measured ?? charactersPerToken;
  const budget = summaryBudget(windowTokens, ratio, context.model.id, {
    fixedTokens: options.fixedTokens ?? 0,
    threshold: options.threshold ?? defaultThreshold,
  });
  const target =
    options.keep === 'last-turn'
      ? ([...points].reverse().find((point) => point < lastTurn) ?? points[points.length - 1])
      : chooseCut(events, points, budget.keepTokens, ratio);
  if (target === undefined) return false;
  let summary = inForce?.event.summary;
  const perItem = Math.max(300, Math.floor(windowTokens * 3 * 0.02));
  await context.beforeCompact?.();
  context.notice(
    `compacting the conversation: summarising ${target - from + 1} events ` +
      `to fit the context window (${windowTokens} tokens)`,
  );
  context.activity?.('compacting the conversation');
  while (from <= target) {
    const candidates = points.filter((point) => point >= from && point <= target);
    const fits = (point: number): boolean =>
      estimateTokens(transcript(events, from, point, summary, perItem).length, ratio) <= budget.transcriptTokens;
    const end = [...candidates].reverse().find(fits) ?? candidates[0]!;
    const text = transcript(events, from, end, summary, perItem);
    const limit = Math.floor(budget.transcriptTokens * ratio);
    summary = await summarize(
      context,
      text.length > limit ? `${text.slice(0, limit)}\n[… the rest of this part was left out …]` : text,
      budget,
      measured ?? mostCharactersPerToken,
    );
    context.append({ type: 'compaction', timestamp: now(), summary, replaces: [0, end], reason });
    context.sync();
    from = end + 1;
  }
  return true;
}

/** What one summary request may take of the window, and what the request after it may keep. */
export interface SummaryBudget {
  /** The summary request's output cap (max_output_tokens): a summary never runs to the end of the window. */
  outputTokens: number;
  maxWords: number;
  transcriptTokens: number;
  /** The history kept word for word after the cut, at most. */
  keepTokens: number;
}

/**
 * The summary's share of the window: what the threshold share leaves after `fixedTokens` and the
 * summary's own heading, half for the summary (at most an eighth of the window, 4,096 tokens) and
 * half for the history kept word for word (at most a quarter of the window). Past the threshold
 * already, half of what the window leaves, the other half for the answer. The summary is asked for
 * in words at two tokens a word and capped in tokens; the transcript gets at most half of the
 * window, less what the compaction prompt and the answer take. A window that cannot hold even that
 * is said so.
 */
export function summaryBudget(
  windowTokens: number,
  ratio: number,
  modelId: string,
  request: { fixedTokens: number; threshold: number },
): SummaryBudget {
  const { fixedTokens } = request;
  const heading = estimateTokens(summaryMessage('').length + 16, ratio);
  const comfortable = Math.floor(windowTokens * request.threshold) - fixedTokens - heading;
  const room = comfortable >= 128 ? comfortable : Math.floor((windowTokens - fixedTokens - heading) / 2);
  const outputTokens = Math.max(16, Math.min(4096, Math.floor(windowTokens / 8), Math.floor(room / 2)));
  const keepTokens = Math.max(0, Math.min(Math.floor(windowTokens * keptShare), room - outputTokens));
  const maxWords = Math.max(10, Math.floor(outputTokens / 2));
  const promptTokens = estimateTokens(compactionPrompt(maxWords).length + 64, ratio);
  const left = windowTokens - promptTokens - outputTokens - Math.ceil(windowTokens * 0.05);
  const transcriptTokens = Math.min(Math.floor(windowTokens * transcriptShare), left);
  if (transcriptTokens < 64) {
    throw new UsageError(
      'context_window_too_small',
      `${modelId}: a ${windowTokens}-token context window cannot hold a compaction request ` +
        `(its instructions take about ${promptTokens} tokens and its summary up to ${outputTokens})`,
      { hint: windowHint() },
    );
  }
  return { outputTokens, maxWords, transcriptTokens, keepTokens };
}

/**
 * One compaction request: the transcript in, the summary out, its output capped; a summary that
 * still comes back longer than the cap (a server that ignores it) is cut to it, counted at
 * `ratio` characters a token (generous where nothing was measured).
 */
async function summarize(
  context: CompactionContext,
  text: string,
  budget: SummaryBudget,
  ratio: number,
): Promise<string> {
  const messages: PromptMessage[] = [
    { role: 'system', content: compactionPrompt(budget.maxWords) },
    { role: 'user', content: `Summarise this conversation so far:\n\n${text}` },
  ];
  let summary = '';
  for await (const part of context.model.stream({
    messages,
    tools: [],
    signal: context.signal,
    cacheKey: context.conversationId,
    maxOutputTokens: budget.outputTokens,
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
        hint:
          'Try again (`jp query --continue` resumes the turn), ' +
          'or set assistant.context_window larger if the model allows.',
      },
    );
  }
  const most = Math.floor(budget.outputTokens * ratio);
  return summary.length > most ? `${summary.slice(0, most).trimEnd()} [… cut to fit the context window]` : summary;
}
