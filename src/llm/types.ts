/**
 * The small provider interface the turn engine talks to (DESIGN §11). Adapters translate it to the
 * AI SDK provider packages; the test provider implements it directly.
 */

/** What a provider needs back with a reasoning block (Anthropic's thinking signature), by provider. */
export type ProviderMetadata = Record<string, Record<string, unknown>>;

export type PromptMessage =
  | { role: 'system'; content: string }
  /** `summary`: the compaction summary that stands for the older history (DESIGN §6). */
  /** `images`: attached to the message (their media type and base64 bytes), sent after the text. */
  | { role: 'user'; content: string; summary?: true; images?: { mediaType: string; data: string }[] }
  | {
      role: 'assistant';
      /** Reasoning blocks the provider must be sent back (signed thinking), before the text. */
      reasoning?: { text: string; metadata: ProviderMetadata }[];
      text: string;
      toolCalls: { id: string; name: string; arguments: unknown }[];
    }
  | { role: 'tool'; results: { id: string; name: string; content: string; isError: boolean }[] };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  messages: PromptMessage[];
  tools: ToolSpec[];
  signal: AbortSignal;
  /** Ask for a JSON object matching `schema` (structured answers to inquiries). */
  responseFormat?: { type: 'json'; schema: Record<string, unknown>; name: string };
  /**
   * The conversation id: OpenAI's `prompt_cache_key`, so requests of one conversation reach the
   * same cache. Anthropic cache breakpoints are placed by the adapter (sdk-model.ts).
   */
  cacheKey?: string;
  /** A cap on this response's output tokens, below `assistant.max_output_tokens` (a compaction summary's). */
  maxOutputTokens?: number;
  /**
   * The request is estimated past the share of the context window where jp compacts: a response
   * with no content at all is then taken for the server's refusal of a request longer than its
   * window (llama-cpp-python answers such a request with an empty HTTP 200).
   */
  likelyOverflow?: { estimate: number; window: number };
  /** Called when the response has begun (its headers arrived), before its first part. */
  onResponse?: () => void;
}

/**
 * Token counts of one request or the sum of several. A count the provider did not report is null,
 * never 0. `output_tokens` includes reasoning tokens, also where the provider reports them apart.
 */
export interface Usage {
  input_tokens: number | null;
  output_tokens: number | null;
  /** The part of output_tokens spent on reasoning, when the provider says. */
  reasoning_tokens: number | null;
  /** The part of input_tokens read from the provider's prompt cache, when the provider says. */
  cached_input_tokens: number | null;
  /** The part of input_tokens written to the provider's prompt cache (Anthropic), when the provider says. */
  cache_write_tokens: number | null;
  total_tokens: number | null;
}

/**
 * The most one step (one response of the model) may stream, whatever the provider sends: bytes of
 * text, reasoning and tool-call input, and pieces (each at least a token; the largest outputs
 * models offer are ~128K tokens). Past either, jp ends the step itself as cut at a limit: finish
 * reason `length`, provider reason `stepOutputLimit.reason`; its tool calls are not run.
 */
export const stepOutputLimit = { bytes: 4 * 1024 * 1024, pieces: 262_144, reason: 'jp_step_output_limit' } as const;

/** Why the model stopped: the AI SDK's unified reasons. */
export type FinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/** A citation or source the answer rests on (web search results, cited documents). */
export interface Source {
  url?: string;
  title?: string;
  /** For documents: the IANA media type and file name. */
  media_type?: string;
  filename?: string;
}

export type StreamPart =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  /** The reasoning block streamed so far is complete, with what the provider needs back. */
  | { type: 'reasoning_end'; metadata: ProviderMetadata }
  /** A call of one of jp's tools. Only handed out with a complete step, right before its finish. */
  | { type: 'tool_call'; id: string; name: string; input: string }
  /** A tool the provider runs itself (hosted web search): never run by jp, only recorded. */
  | { type: 'provider_tool_call'; id: string; name: string; input: unknown }
  | { type: 'provider_tool_result'; id: string; name: string; result: unknown; isError: boolean }
  | { type: 'source'; source: Source }
  /**
   * The provider's finish: the step is complete. A stream that ends without one throws instead.
   * `detail` is the provider's own explanation where it gives one (a refusal's reason).
   */
  | {
      type: 'finish';
      usage: Usage | null;
      reason: FinishReason;
      providerReason: string | null;
      detail?: string;
      /** The model the provider says answered, where it says (a local server answers with the one it has). */
      model?: string;
    };

export interface ChatModel {
  /** `<provider>/<model>` as configured. */
  readonly id: string;
  /** Streams one response. Errors are thrown as JpError (ProviderError / RetryableProviderError). */
  stream(request: ChatRequest): AsyncIterable<StreamPart>;
}

/** Adds one request's usage to a running sum; a count stays null until some request reports it. */
export function addUsage(total: Usage | null, more: Usage | null): Usage | null {
  if (!more) return total;
  if (!total) return { ...more };
  const add = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : a + b);
  return {
    input_tokens: add(total.input_tokens, more.input_tokens),
    output_tokens: add(total.output_tokens, more.output_tokens),
    reasoning_tokens: add(total.reasoning_tokens, more.reasoning_tokens),
    cached_input_tokens: add(total.cached_input_tokens, more.cached_input_tokens),
    cache_write_tokens: add(total.cache_write_tokens, more.cache_write_tokens),
    total_tokens: add(total.total_tokens, more.total_tokens),
  };
}

/** A usage in words for people: `1200 input (1100 cached, 90 written to cache), 30 output (12 reasoning)`. */
export function describeUsage(usage: Usage): string {
  const count = (value: number | null): string => (value === null ? '?' : String(value));
  const cache = [
    usage.cached_input_tokens !== null ? `${usage.cached_input_tokens} cached` : undefined,
    usage.cache_write_tokens ? `${usage.cache_write_tokens} written to cache` : undefined,
  ].filter(Boolean);
  const reasoning = usage.reasoning_tokens ? ` (${usage.reasoning_tokens} reasoning)` : '';
  const cached = cache.length > 0 ? ` (${cache.join(', ')})` : '';
  return `${count(usage.input_tokens)} input${cached}, ${count(usage.output_tokens)} output${reasoning}`;
}
