/**
 * Adapters from the ChatModel interface to the Vercel AI SDK provider packages (LanguageModelV3).
 * This module is imported lazily, only by a process that talks to a model.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3StreamPart,
} from '@ai-sdk/provider';
import { APICallError } from '@ai-sdk/provider';
import { JpError, ProviderError, RetryableProviderError } from '../errors.ts';
import { redact } from '../redact.ts';
import { providerFetch, type WireObserver } from './provider-fetch.ts';
import type { ModelSpec } from './resolve.ts';
import type { ChatModel, ChatRequest, PromptMessage, StreamPart, Usage } from './types.ts';

export async function createSdkLanguageModel(spec: ModelSpec, environment: NodeJS.ProcessEnv, wire?: WireObserver): Promise<LanguageModelV3> {
  const apiKey = spec.apiKeyVariable ? environment[spec.apiKeyVariable] : undefined;
  const fetch = await providerFetch(environment, wire);
  switch (spec.provider) {
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      const provider = createOpenAI({ apiKey, ...(fetch ? { fetch } : {}), ...(spec.baseUrl ? { baseURL: spec.baseUrl } : {}) });
      return spec.openaiApi === 'chat' ? provider.chat(spec.model) : provider.responses(spec.model);
    }
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      return createAnthropic({ apiKey, ...(fetch ? { fetch } : {}), ...(spec.baseUrl ? { baseURL: spec.baseUrl } : {}) })(spec.model);
    }
    case 'ollama':
    case 'openai-compatible': {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      const provider = createOpenAICompatible({
        name: spec.compatibleName ?? 'ollama',
        baseURL: spec.baseUrl!,
        includeUsage: true,
        ...(fetch ? { fetch } : {}),
        ...(apiKey ? { apiKey } : {}),
      });
      return provider.chatModel(spec.model);
    }
    case 'test':
      throw new Error('the test provider has no SDK model');
  }
}

export function toSdkPrompt(messages: PromptMessage[]): LanguageModelV3Message[] {
  return messages.map((message): LanguageModelV3Message => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content };
      case 'user':
        return { role: 'user', content: [{ type: 'text', text: message.content }] };
      case 'assistant':
        return {
          role: 'assistant',
          content: [
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
            output: result.isError ? { type: 'error-text' as const, value: result.content } : { type: 'text' as const, value: result.content },
          })),
        };
    }
  });
}

function toUsage(usage: { inputTokens: { total: number | undefined }; outputTokens: { total: number | undefined } }): Usage {
  const input = usage.inputTokens.total ?? 0;
  const output = usage.outputTokens.total ?? 0;
  return { input_tokens: input, output_tokens: output, total_tokens: input + output };
}

/** Maps SDK and network errors to jp errors: 429, 5xx and network failures are retryable. */
export function classifyProviderError(error: unknown, modelId: string): JpError {
  if (JpError.isInstance(error)) return error;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const body = redact((error.responseBody ?? '').slice(0, 300)).trim();
    const detail = body ? `: ${body}` : '';
    if (status === 429) {
      return new RetryableProviderError('rate_limited', `${modelId}: rate limited (HTTP 429)${detail}`, {
        hint: 'Wait and resume with `jp query --continue`, or raise assistant.request.max_retries.',
        cause: error,
      });
    }
    if (status !== undefined && status >= 500) {
      return new RetryableProviderError('provider_unavailable', `${modelId}: provider error (HTTP ${status})${detail}`, {
        hint: 'The provider is failing or overloaded; resume later with `jp query --continue`.',
        cause: error,
      });
    }
    if (status === 401 || status === 403) {
      return new ProviderError('provider_auth_failed', `${modelId}: the provider refused the credentials (HTTP ${status})${detail}`, {
        hint: 'Check the API key in the environment variable for this provider.',
        cause: error,
      });
    }
    // A 2xx status means the response had started: the stream broke on the way (a network failure).
    if (status === undefined || (status >= 200 && status < 300)) {
      return new RetryableProviderError('network_error', `${modelId}: cannot reach the provider: ${redact(error.message)}`, {
        hint: 'Check the network and providers.<name>.base_url, then resume with `jp query --continue`.',
        cause: error,
      });
    }
    return new ProviderError('provider_rejected_request', `${modelId}: the provider rejected the request (HTTP ${status})${detail}`, {
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ETIMEDOUT' || /fetch failed|socket|terminated/i.test(message)) {
    return new RetryableProviderError('network_error', `${modelId}: connection to the provider failed: ${redact(message)}`, {
      hint: 'Resume with `jp query --continue` once the provider is reachable.',
      cause: error,
    });
  }
  return new ProviderError('provider_error', `${modelId}: ${redact(message)}`, { cause: error });
}

export class SdkChatModel implements ChatModel {
  readonly id: string;
  private readonly model: LanguageModelV3;

  constructor(id: string, model: LanguageModelV3) {
    this.id = id;
    this.model = model;
  }

  async *stream(request: ChatRequest): AsyncIterable<StreamPart> {
    const options: LanguageModelV3CallOptions = {
      prompt: toSdkPrompt(request.messages),
      abortSignal: request.signal,
      ...(request.tools.length > 0
        ? {
            tools: request.tools.map((tool) => ({
              type: 'function' as const,
              name: tool.name,
              description: tool.description,
              inputSchema: tool.parameters as never,
            })),
          }
        : {}),
      ...(request.responseFormat
        ? { responseFormat: { type: 'json' as const, schema: request.responseFormat.schema as never, name: request.responseFormat.name } }
        : {}),
    };
    let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart>;
    try {
      const result = await this.model.doStream(options);
      reader = result.stream.getReader();
    } catch (error) {
      throw classifyProviderError(error, this.id);
    }
    try {
      for (;;) {
        let next: ReadableStreamReadResult<LanguageModelV3StreamPart>;
        try {
          next = await reader.read();
        } catch (error) {
          throw classifyProviderError(error, this.id);
        }
        if (next.done) return;
        const part = next.value;
        switch (part.type) {
          case 'text-delta':
            if (part.delta) yield { type: 'text', text: part.delta };
            break;
          case 'reasoning-delta':
            if (part.delta) yield { type: 'reasoning', text: part.delta };
            break;
          case 'tool-call':
            yield { type: 'tool_call', id: part.toolCallId, name: part.toolName, input: part.input };
            break;
          case 'finish':
            yield { type: 'finish', usage: toUsage(part.usage), finishReason: part.finishReason.unified };
            break;
          case 'error':
            throw classifyProviderError(part.error, this.id);
          default:
            break;
        }
      }
    } finally {
      reader.releaseLock();
    }
  }
}
