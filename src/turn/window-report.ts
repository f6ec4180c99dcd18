/**
 * What jp says when a request does not fit the model's context window: the window and where its
 * size comes from, what the request is made of (the system prompt, the tools, the user's message,
 * the rest of the conversation) in tokens, and what to change. Sizes are counted at the characters
 * per token this conversation measured, else at a generous 4: they are at least this big.
 */
import { type JpError, ProviderError, UsageError } from '../errors.ts';
import type { ContextWindow } from '../llm/context-window.ts';
import type { PromptMessage, ToolSpec } from '../llm/types.ts';
import { mostCharactersPerToken, type RequestEstimate } from './compaction.ts';

/** What to change when the window is too small for what jp must send. */
export function windowHint(): string {
  return [
    "A larger window: start the server with one (llama-server --ctx-size, Ollama's num_ctx, vLLM --max-model-len, " +
      "LM Studio's context length) and set assistant.context_window to match.",
    'Fewer tools: --no-tools, --tool <name> for the ones you need, or conversation.tools.<name>.enable = false.',
    'A shorter system prompt: assistant.system_prompt replaces the built-in one.',
  ].join('\n');
}

/** A part smaller than this many tokens is not named (JSON framing, a short heading). */
const minimumShown = 16;

export interface RequestParts {
  system: number;
  tools: number;
  message: number;
  rest: number;
}

/** The request's parts in tokens (at least), counted as jp counts a request (JSON characters). */
export function requestParts(
  messages: readonly PromptMessage[],
  tools: readonly ToolSpec[],
  ratio: number,
): RequestParts {
  const size = (value: unknown): number => Math.floor(JSON.stringify(value).length / ratio);
  const system = messages.find((message) => message.role === 'system');
  let question: PromptMessage | undefined;
  for (let index = messages.length - 1; index >= 0 && !question; index--) {
    const message = messages[index]!;
    if (message.role === 'user' && message.summary !== true) question = message;
  }
  const all = size(messages);
  const parts = {
    system: system ? size(system) : 0,
    tools: tools.length > 0 ? size(tools) : 0,
    message: question ? size(question) : 0,
  };
  return { ...parts, rest: Math.max(0, all - parts.system - parts.message) };
}

function describeParts(parts: RequestParts, toolCount: number): string {
  const items = [
    `the system prompt about ${parts.system} tokens`,
    toolCount > 0 ? `${toolCount} tool${toolCount === 1 ? '' : 's'} about ${parts.tools}` : 'no tools',
    `your message about ${parts.message}`,
  ];
  if (parts.rest >= minimumShown) items.push(`the rest of the conversation about ${parts.rest}`);
  return items.join(', ');
}

function windowOf(window: ContextWindow): string {
  return (
    `the ${window.tokens}-token context window ` +
    `(${window.source === 'default' ? 'assumed: jp does not know this model' : window.source})`
  );
}

/** Before sending: the request is known not to fit, even after compaction. Nothing was sent. */
export function requestTooBig(
  modelId: string,
  window: ContextWindow,
  estimate: RequestEstimate,
  messages: readonly PromptMessage[],
  tools: readonly ToolSpec[],
): UsageError {
  const parts = requestParts(messages, tools, estimate.measured ?? mostCharactersPerToken);
  const fixed = parts.system + parts.tools + parts.message;
  const what =
    fixed > window.tokens
      ? `cannot hold the system prompt${tools.length > 0 ? ', the tools' : ''} and your message`
      : 'cannot hold this request, even after compacting the conversation';
  return new UsageError(
    'context_window_too_small',
    `${modelId}: nothing was sent: ${windowOf(window)} ${what}: at least ${estimate.least} tokens ` +
      `(${describeParts(parts, tools.length)})`,
    {
      hint: [
        windowHint(),
        ...(parts.message > window.tokens / 2 ? ['A shorter message (or less input on stdin).'] : []),
        ...(parts.rest >= minimumShown ? ['A new conversation: jp query --new.'] : []),
        'Then send the message again (a turn being resumed: jp query --continue).',
      ].join('\n'),
    },
  );
}

/**
 * After the provider refused the request as too long and nothing older was left to compact: the
 * provider's error, with what the request is made of and what to change (and the window the
 * provider stated, when it differs from the one jp used).
 */
export function nothingLeftToCompact(
  refusal: JpError,
  window: ContextWindow | undefined,
  stated: number | undefined,
  estimate: RequestEstimate,
  tools: readonly ToolSpec[],
  messages: readonly PromptMessage[],
): JpError {
  const parts = requestParts(messages, tools, estimate.measured ?? mostCharactersPerToken);
  const mismatch =
    stated !== undefined && window !== undefined && stated < window.tokens
      ? `The server's window is ${stated} tokens, not the ${window.tokens} jp used (${window.source}): ` +
        `set assistant.context_window = ${stated}.`
      : undefined;
  return new ProviderError(refusal.code, `${refusal.message}; nothing older is left to compact`, {
    hint: [
      `The request holds ${describeParts(parts, tools.length)}.`,
      ...(mismatch ? [mismatch] : []),
      windowHint(),
    ].join('\n'),
    cause: refusal,
  });
}
