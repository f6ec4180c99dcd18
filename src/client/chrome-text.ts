/**
 * Text of the text renderer's chrome lines (text-renderer.ts): text jp did not write made safe to
 * show on one line, a user message's first line for a replay, text cut to a number of terminal
 * cells, what a turn took (tokens, cost), and what a compaction replaced.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { formatCost, type PricedRequest, type Pricer } from '../llm/prices.ts';
import { addUsage, describeUsage, type Usage } from '../llm/types.ts';
import { visible } from '../output/sanitize.ts';
import stringWidth from 'string-width';
import { graphemes } from './graphemes.ts';

/** Text jp did not write, made safe to show on one line (see sanitize.ts). */
export function oneLine(text: string): string {
  return visible(text, { singleLine: true });
}

/** First line of a user message for a replay, with how much was left out. */
export function firstLine(text: string): string {
  const lines = text.split('\n');
  const first = lines[0]!.length > 200 ? lines[0]!.slice(0, 199) + '…' : lines[0]!;
  return oneLine(
    lines.length > 1 ? `${first} (+${lines.length - 1} more line${lines.length === 2 ? '' : 's'})` : first,
  );
}

/** `text` cut to `width` terminal cells, ending in `…` when it was cut. */
export function cutToWidth(text: string, width: number): string {
  if (stringWidth(text) <= width) return text;
  let cut = '';
  let used = 0;
  for (const character of graphemes(text)) {
    const cells = stringWidth(character);
    if (used + cells > width - 1) break;
    cut += character;
    used += cells;
  }
  return cut + '…';
}

/** What a turn took: `[tokens: 1000 input (0 cached), 200 output • $0.00072]` (the cost when known). */
export function tokensLine(usage: Usage, cost: number | null | undefined): string {
  return `[tokens: ${describeUsage(usage)}${cost === null || cost === undefined ? '' : ` • ${formatCost(cost)}`}]`;
}

/** What a replayed turn's requests took, priced by `price` when given; undefined when none reported usage. */
export function turnTokensLine(requests: readonly PricedRequest[], price: Pricer | undefined): string | undefined {
  const usage = requests.reduce<Usage | null>((total, request) => addUsage(total, request.usage), null);
  return usage ? tokensLine(usage, price?.(requests)) : undefined;
}

/** A compaction in a replay: how many events the summary replaces from there on, and why. */
export function compactionLine(event: Extract<ConversationEvent, { type: 'compaction' }>): string {
  const count = event.replaces[1] - event.replaces[0] + 1;
  const why =
    event.reason === 'manual'
      ? 'jp conversation compact'
      : event.reason === 'context_length'
        ? 'the provider refused a longer request'
        : 'the context window was filling up';
  return `[compacted: the ${count} events above are sent to the model as a summary from here on (${why})]`;
}
