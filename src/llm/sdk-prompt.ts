/**
 * What jp sends through the AI SDK: its prompt in the SDK's terms, where an Anthropic request marks
 * its prompt cache breakpoints, and the body an OpenAI-compatible server gets.
 */
import type { LanguageModelV3Message } from '@ai-sdk/provider';
import type { PromptMessage } from './types.ts';

/**
 * The body an OpenAI-compatible server gets: an assistant message that only calls tools carries
 * `"content": ""`, not the SDK's `null`, which llama-cpp-python's validation refuses (HTTP 500,
 * "Input should be a valid string") and every other server takes as well.
 */
export function compatibleRequestBody(body: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(body.messages)) return body;
  return {
    ...body,
    messages: body.messages.map((message: Record<string, unknown>) =>
      message.role === 'assistant' && message.content == null ? { ...message, content: '' } : message,
    ),
  };
}

/** `cacheAt`: the messages that end a prompt cache breakpoint (Anthropic, see cacheBreakpoints). */
export function toSdkPrompt(messages: PromptMessage[], cacheAt: readonly number[] = []): LanguageModelV3Message[] {
  const marked = new Set(cacheAt);
  return messages.map((message, index): LanguageModelV3Message => {
    const converted = toSdkMessage(message);
    return marked.has(index)
      ? { ...converted, providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }
      : converted;
  });
}

function toSdkMessage(message: PromptMessage): LanguageModelV3Message {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return {
        role: 'user',
        content: [
          { type: 'text', text: message.content },
          ...(message.images ?? []).map((image) => ({
            type: 'file' as const,
            data: image.data,
            mediaType: image.mediaType,
          })),
        ],
      };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          // Only Anthropic wants its reasoning back: signed thinking blocks, unchanged.
          ...(message.reasoning ?? [])
            .filter((block) => block.metadata.anthropic !== undefined)
            .map((block) => ({
              type: 'reasoning' as const,
              text: block.text,
              providerOptions: { anthropic: block.metadata.anthropic as never },
            })),
          ...(message.text ? [{ type: 'text' as const, text: message.text }] : []),
          ...message.toolCalls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.name,
            input: call.arguments,
          })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        content: message.results.map((result) => ({
          type: 'tool-result' as const,
          toolCallId: result.id,
          toolName: result.name,
          output: result.isError
            ? { type: 'error-text' as const, value: result.content }
            : { type: 'text' as const, value: result.content },
        })),
      };
  }
}

/** Anthropic's limit on cache breakpoints in one request. */
const maxCacheBreakpoints = 4;

/**
 * Where an Anthropic request marks its prompt cache breakpoints, as indices into `messages`: the
 * system block (with the tools before it, it is the prefix every request shares), the last message
 * the previous request of this turn ended with (so this request reads that request's prefix from the
 * cache), and the last message (so the next request reads this one). At most four.
 */
export function cacheBreakpoints(messages: readonly PromptMessage[]): number[] {
  const marks = new Set<number>();
  const system = messages.findIndex((message) => message.role === 'system');
  if (system !== -1) marks.add(system);
  // A compaction summary opens the history; it stays the same until the next compaction, and so
  // does the user's question that follows it when the summary's range held it.
  let summary = messages.findIndex((message) => message.role === 'user' && message.summary === true);
  if (summary !== -1 && messages[summary + 1]?.role === 'user') summary++;
  if (summary !== -1) marks.add(summary);
  const last = messages.length - 1;
  if (last >= 0 && messages[last]!.role !== 'system') {
    let lastAssistant = last;
    while (lastAssistant >= 0 && messages[lastAssistant]!.role !== 'assistant') lastAssistant--;
    if (lastAssistant > 0 && messages[lastAssistant - 1]!.role !== 'system') marks.add(lastAssistant - 1);
    marks.add(last);
  }
  return [...marks].sort((a, b) => a - b).slice(-maxCacheBreakpoints);
}
