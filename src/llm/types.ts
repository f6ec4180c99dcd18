/**
 * The small provider interface the turn engine talks to (DESIGN §11). Adapters translate it to the
 * AI SDK provider packages; the test provider implements it directly.
 */

export type PromptMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; text: string; toolCalls: { id: string; name: string; arguments: unknown }[] }
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
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export type StreamPart =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; id: string; name: string; input: string }
  | { type: 'finish'; usage: Usage; finishReason: string };

export interface ChatModel {
  /** `<provider>/<model>` as configured. */
  readonly id: string;
  /** Streams one response. Errors are thrown as JpError (ProviderError / RetryableProviderError). */
  stream(request: ChatRequest): AsyncIterable<StreamPart>;
}

export const emptyUsage = (): Usage => ({ input_tokens: 0, output_tokens: 0, total_tokens: 0 });

export function addUsage(total: Usage, more: Usage): void {
  total.input_tokens += more.input_tokens;
  total.output_tokens += more.output_tokens;
  total.total_tokens += more.total_tokens;
}
