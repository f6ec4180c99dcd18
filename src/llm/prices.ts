/**
 * What a model's requests cost, in US dollars, from the price table that @pydantic/genai-prices
 * ships (kept by Pydantic from the providers' published prices, and released as new versions of
 * the package: jp takes a newer table with `npm update @pydantic/genai-prices`; it never fetches
 * prices at run time). Only OpenAI and Anthropic models are priced: a model of another provider (a
 * local Ollama model, an OpenAI-compatible server whose vendor jp cannot know, the test provider)
 * or one the table does not know has no cost. The table (about 480 KB of bundled code) is loaded
 * only for a priced model: when its run starts (preparePrices, so that it loads while the model
 * answers), or when `print` asks a turn's cost. Loading it and pricing a turn adds about 28 ms of
 * CPU time and 6 MiB of peak memory to a whole `jp conversation print` (medians of 20 alternated
 * runs against a conversation of an unpriced model, Node 24, 2 cores, 2026-11-27).
 */
import type { Usage } from './types.ts';

/** The table's provider of each of jp's providers whose prices it keeps. */
const pricedProviders: Record<string, string> = { openai: 'openai', anthropic: 'anthropic' };

/** The provider and model of `<provider>/<model>`, when that provider is priced. */
function pricedModel(modelId: string): { provider: string; model: string } | undefined {
  const slash = modelId.indexOf('/');
  if (slash === -1) return undefined;
  const provider = pricedProviders[modelId.slice(0, slash)];
  return provider === undefined ? undefined : { provider, model: modelId.slice(slash + 1) };
}

let priceTable: Promise<typeof import('@pydantic/genai-prices')> | undefined;

function loadPriceTable(): Promise<typeof import('@pydantic/genai-prices')> {
  priceTable ??= import('@pydantic/genai-prices');
  return priceTable;
}

/**
 * Starts loading the price table when `modelId` is priced, so that the end of a run (a cancelled
 * turn's answer among others) does not wait for it; loadPricer reports a failure to load.
 */
export function preparePrices(modelId: string): void {
  if (pricedModel(modelId) !== undefined) loadPriceTable().catch(() => {});
}

/** A request to a model, with the usage it reported. */
export interface PricedRequest {
  model: string;
  usage: Usage;
}

/**
 * The cost of requests; undefined when one of them cannot be priced (its model is not in the
 * table, or it reported no tokens).
 */
export type Pricer = (requests: readonly PricedRequest[]) => number | undefined;

/**
 * A pricer for requests to these models. The table is loaded only when one of them is priced; the
 * pricer of models none of which is priced prices nothing.
 */
export async function loadPricer(models: Iterable<string>): Promise<Pricer> {
  if (![...models].some((model) => pricedModel(model) !== undefined)) return () => undefined;
  const { calcPrice } = await loadPriceTable();
  return (requests) => {
    if (requests.length === 0) return undefined;
    let total = 0;
    for (const { model: modelId, usage } of requests) {
      const priced = pricedModel(modelId);
      if (priced === undefined) return undefined;
      if (usage.input_tokens === null && usage.output_tokens === null) return undefined;
      const price = calcPrice(
        {
          input_tokens: usage.input_tokens ?? 0,
          output_tokens: usage.output_tokens ?? 0,
          ...(usage.cached_input_tokens ? { cache_read_tokens: usage.cached_input_tokens } : {}),
          ...(usage.cache_write_tokens ? { cache_write_tokens: usage.cache_write_tokens } : {}),
        },
        priced.model,
        { providerId: priced.provider },
      );
      if (!price) return undefined;
      total += price.total_price;
    }
    return total;
  };
}

/** The cost of requests (see Pricer); the table is loaded only when every one of them may be priced. */
export async function costOf(requests: readonly PricedRequest[]): Promise<number | undefined> {
  if (requests.length === 0 || requests.some((request) => pricedModel(request.model) === undefined)) return undefined;
  return (await loadPricer(requests.map((request) => request.model)))(requests);
}

/** A cost as a person reads it: `$0.0042`, `$1.23` (at least two significant digits under a cent). */
export function formatCost(dollars: number): string {
  if (dollars === 0) return '$0';
  if (dollars >= 0.01) return `$${dollars.toFixed(2)}`;
  return `$${dollars.toPrecision(2)}`;
}
