/**
 * Adapters from the ChatModel interface to the Vercel AI SDK provider packages (LanguageModelV3).
 * This module is imported lazily, only by a process that talks to a model.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import { InvalidResponseDataError } from '@ai-sdk/provider';
import type { Secrets } from '../redact.ts';
import type { JpError } from '../errors.ts';
import { brokenStream, classifyProviderError, emptyResponse, notEventStream, providerName } from './provider-errors.ts';
import { providerFetch, type WireObserver } from './provider-fetch.ts';
import type { ModelSpec } from './resolve.ts';
import {
  stepOutputLimit,
  type ChatModel,
  type ChatRequest,
  type FinishReason,
  type ProviderMetadata,
  type StreamPart,
  type Usage,
} from './types.ts';
import { cacheBreakpoints, compatibleRequestBody, toSdkPrompt } from './sdk-prompt.ts';

/** Each request's `onResponse`, by the signal its fetch is given (the SDKs pass it to fetch unchanged). */
const responseBegun = new WeakMap<AbortSignal, () => void>();

export async function createSdkLanguageModel(
  spec: ModelSpec,
  environment: NodeJS.ProcessEnv,
  wire?: WireObserver,
): Promise<LanguageModelV3> {
  const apiKey = spec.apiKeyVariable ? environment[spec.apiKeyVariable] : undefined;
  const deltas =
    spec.provider === 'anthropic'
      ? 'anthropic'
      : spec.provider === 'openai' && spec.openaiApi !== 'chat'
        ? 'openai-responses'
        : 'openai-chat';
  const fetch = await providerFetch(environment, deltas, wire, (signal) => responseBegun.get(signal)?.());
  switch (spec.provider) {
    case 'openai': {
      const { createOpenAI } = await import('@ai-sdk/openai');
      const provider = createOpenAI({ apiKey, fetch, ...(spec.baseUrl ? { baseURL: spec.baseUrl } : {}) });
      return spec.openaiApi === 'chat' ? provider.chat(spec.model) : provider.responses(spec.model);
    }
    case 'anthropic': {
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      return createAnthropic({ apiKey, fetch, ...(spec.baseUrl ? { baseURL: spec.baseUrl } : {}) })(spec.model);
    }
    case 'ollama':
    case 'openai-compatible': {
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      const provider = createOpenAICompatible({
        name: spec.compatibleName ?? 'ollama',
        baseURL: spec.baseUrl!,
        includeUsage: true,
        fetch,
        transformRequestBody: compatibleRequestBody,
        ...(apiKey ? { apiKey } : {}),
      });
      return provider.chatModel(spec.model);
    }
    case 'test':
      throw new Error('the test provider has no SDK model');
  }
}

/** `assistant.max_output_tokens` and `assistant.reasoning`, as configured. */
export interface ModelSettings {
  maxOutputTokens?: number;
  reasoning?: { effort?: string; budget_tokens?: number };
}

/** The reasoning settings in each provider's own terms (OpenAI reasoning effort, Anthropic thinking budget). */
export function reasoningOptions(
  spec: ModelSpec,
  reasoning: ModelSettings['reasoning'],
): { options: SharedV3ProviderOptions; ignored: string[] } {
  const ignored: string[] = [];
  if (!reasoning) return { options: {}, ignored };
  const { effort, budget_tokens: budget } = reasoning;
  switch (spec.provider) {
    case 'anthropic': {
      const anthropic: Record<string, unknown> = {};
      if (budget !== undefined) anthropic.thinking = { type: 'enabled', budgetTokens: budget };
      if (effort !== undefined) anthropic.effort = effort;
      return { options: { anthropic: anthropic as never }, ignored };
    }
    case 'openai':
      if (budget !== undefined)
        ignored.push('assistant.reasoning.budget_tokens (OpenAI takes an effort, not a budget)');
      return { options: effort !== undefined ? { openai: { reasoningEffort: effort } } : {}, ignored };
    case 'ollama':
    case 'openai-compatible':
      if (budget !== undefined)
        ignored.push(`assistant.reasoning.budget_tokens (${providerName(spec)} takes reasoning_effort, not a budget)`);
      return { options: effort !== undefined ? { openaiCompatible: { reasoningEffort: effort } } : {}, ignored };
    default:
      return { options: {}, ignored };
  }
}

/**
 * The usage of one request, or null when the provider sent none. Output includes reasoning tokens:
 * where a provider reports them apart from its completion tokens (xAI), its own total says so.
 */
export function toUsage(usage: LanguageModelV3Usage): Usage | null {
  const input = usage.inputTokens.total;
  const output = usage.outputTokens.total;
  if (input === undefined && output === undefined) return null;
  const reasoning = usage.outputTokens.reasoning ?? null;
  const raw = usage.raw as Record<string, unknown> | undefined;
  const providerTotal = typeof raw?.total_tokens === 'number' ? raw.total_tokens : undefined;
  let outputTokens = output ?? null;
  if (outputTokens !== null && input !== undefined && reasoning && providerTotal === input + outputTokens + reasoning)
    outputTokens += reasoning;
  return {
    input_tokens: input ?? null,
    output_tokens: outputTokens,
    reasoning_tokens: reasoning,
    cached_input_tokens: reportedCacheCount(
      raw,
      ['cache_read_input_tokens', 'cached_tokens'],
      usage.inputTokens.cacheRead,
    ),
    cache_write_tokens: reportedCacheCount(
      raw,
      ['cache_creation_input_tokens', 'cache_write_tokens'],
      usage.inputTokens.cacheWrite,
    ),
    total_tokens: providerTotal ?? (input !== undefined && outputTokens !== null ? input + outputTokens : null),
  };
}

/**
 * A cache count as the SDK mapped it, but only when the provider's own usage carries one of `keys`
 * (at the top, or in `prompt_tokens_details` / `input_tokens_details`): the SDKs turn a count the
 * provider never sent into 0, and jp says null for that.
 */
function reportedCacheCount(
  raw: Record<string, unknown> | undefined,
  keys: string[],
  mapped: number | undefined,
): number | null {
  if (!raw || mapped === undefined) return null;
  const places = [raw, raw.prompt_tokens_details, raw.input_tokens_details].filter(
    (place): place is Record<string, unknown> => typeof place === 'object' && place !== null,
  );
  return places.some((place) => keys.some((key) => typeof place[key] === 'number')) ? mapped : null;
}

/**
 * The SDKs start every stream with this finish reason and replace it when the provider's own finish
 * arrives; a finish part that still carries it means the stream ended without one.
 */
function isProvidersFinish(reason: LanguageModelV3FinishReason): boolean {
  return !(reason.unified === 'other' && reason.raw === undefined);
}

/** The provider's own explanation of a finish, where it gives one (Anthropic's refusal details). */
function finishDetail(part: Extract<LanguageModelV3StreamPart, { type: 'finish' }>): string | undefined {
  const details = (
    part.providerMetadata?.anthropic as { stopDetails?: { explanation?: unknown; category?: unknown } } | undefined
  )?.stopDetails;
  if (typeof details?.explanation === 'string') return details.explanation;
  if (typeof details?.category === 'string') return `category: ${details.category}`;
  return undefined;
}

function mergeMetadata(into: ProviderMetadata, more: Record<string, unknown> | undefined): void {
  if (!more) return;
  for (const [provider, values] of Object.entries(more)) {
    if (typeof values === 'object' && values !== null)
      into[provider] = { ...into[provider], ...(values as Record<string, unknown>) };
  }
}

export class SdkChatModel implements ChatModel {
  readonly id: string;
  private readonly spec: ModelSpec;
  private readonly model: LanguageModelV3;
  private readonly providerOptions: SharedV3ProviderOptions;
  private readonly maxOutputTokens: number | undefined;
  private readonly onWarning: (message: string) => void;
  private readonly warned = new Set<string>();
  /** The SDK's own warnings are about settings it could not honour: said only when the user chose some. */
  private readonly sayWarnings: boolean;
  /** Settings this provider has no equivalent for, said with the first request (when someone listens). */
  private readonly ignored: string[];

  /** `secrets`: what the provider says in an error or a finish is redacted by these. */
  constructor(
    spec: ModelSpec,
    model: LanguageModelV3,
    private readonly secrets: Secrets,
    settings: ModelSettings = {},
    onWarning: (message: string) => void = () => {},
  ) {
    this.id = spec.id;
    this.spec = spec;
    this.model = model;
    this.onWarning = onWarning;
    this.maxOutputTokens = settings.maxOutputTokens;
    this.sayWarnings = settings.maxOutputTokens !== undefined || settings.reasoning !== undefined;
    const reasoning = reasoningOptions(spec, settings.reasoning);
    this.providerOptions = reasoning.options;
    this.ignored = reasoning.ignored;
  }

  private warn(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.onWarning(message);
  }

  /** The configured options, and OpenAI's `prompt_cache_key` = the conversation id. */
  private requestProviderOptions(request: ChatRequest): SharedV3ProviderOptions {
    if (this.spec.provider !== 'openai' || request.cacheKey === undefined) return this.providerOptions;
    return { ...this.providerOptions, openai: { ...this.providerOptions.openai, promptCacheKey: request.cacheKey } };
  }

  async *stream(request: ChatRequest): AsyncIterable<StreamPart> {
    for (const key of this.ignored) this.warn(`${key} is ignored for ${this.id}`);
    const providerOptions = this.requestProviderOptions(request);
    const options: LanguageModelV3CallOptions = {
      prompt: toSdkPrompt(
        request.messages,
        this.spec.provider === 'anthropic' ? cacheBreakpoints(request.messages) : [],
      ),
      abortSignal: request.signal,
      ...outputCap(this.maxOutputTokens, request.maxOutputTokens),
      ...(Object.keys(providerOptions).length > 0 ? { providerOptions } : {}),
      ...(request.tools.length > 0
        ? {
            tools: request.tools.map((tool) => ({
              type: 'function' as const,
              name: tool.name,
              description: tool.description,
              inputSchema: tool.parameters as never,
            })),
            // OpenAI-compatible servers differ when it is left out: llama-cpp-python's function-calling
            // format then offers no tools at all.
            ...(this.spec.provider === 'openai-compatible' || this.spec.provider === 'ollama'
              ? { toolChoice: { type: 'auto' as const } }
              : {}),
          }
        : {}),
      ...(request.responseFormat
        ? {
            responseFormat: {
              type: 'json' as const,
              schema: request.responseFormat.schema as never,
              name: request.responseFormat.name,
            },
          }
        : {}),
    };
    let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart>;
    try {
      if (request.onResponse) responseBegun.set(request.signal, request.onResponse);
      const result = await this.model.doStream(options);
      reader = result.stream.getReader();
      const contentType = result.response?.headers?.['content-type'];
      if (contentType !== undefined && !/event-stream|ndjson|json/i.test(contentType)) {
        reader.cancel().catch(() => {});
        throw notEventStream(this.spec, contentType, this.secrets);
      }
    } catch (error) {
      throw classifyProviderError(error, this.spec, 'request', this.secrets);
    }
    // A step's calls of jp's tools are handed out only once its finish has arrived.
    const toolCalls: Extract<StreamPart, { type: 'tool_call' }>[] = [];
    const reasoningMetadata = new Map<string, ProviderMetadata>();
    let outputBytes = 0;
    let outputPieces = 0;
    /** Whether anything of the response's content arrived (an empty body sends nothing but the start). */
    let content = false;
    let answeredBy: string | undefined;
    const endedEarly = (cause?: unknown): JpError =>
      content
        ? brokenStream(this.spec, this.secrets, cause, 'the stream ended without its finish event')
        : emptyResponse(this.spec, request.likelyOverflow);
    try {
      for (;;) {
        let next: ReadableStreamReadResult<LanguageModelV3StreamPart>;
        try {
          next = await reader.read();
        } catch (error) {
          throw classifyProviderError(error, this.spec, 'stream', this.secrets);
        }
        if (next.done) throw endedEarly();
        const part = next.value;
        if (part.type !== 'stream-start' && part.type !== 'finish' && part.type !== 'error') content = true;
        if (part.type === 'text-delta' || part.type === 'reasoning-delta' || part.type === 'tool-input-delta') {
          const room = stepOutputLimit.bytes - outputBytes;
          outputBytes += Buffer.byteLength(part.delta);
          outputPieces++;
          if (outputBytes > stepOutputLimit.bytes || outputPieces > stepOutputLimit.pieces) {
            // An endless (or runaway) stream: the step ends here, cut at jp's limit (what of this
            // piece fits is kept: pieces arrive merged); the reader is cancelled below, which ends
            // the request. Its tool calls are not handed out.
            const fitting =
              outputBytes > stepOutputLimit.bytes
                ? Buffer.from(part.delta)
                    .subarray(0, room)
                    .toString('utf8')
                    .replace(/\uFFFD$/, '')
                : '';
            if (fitting && part.type !== 'tool-input-delta')
              yield { type: part.type === 'text-delta' ? 'text' : 'reasoning', text: fitting };
            yield { type: 'finish', usage: null, reason: 'length', providerReason: stepOutputLimit.reason };
            return;
          }
        }
        switch (part.type) {
          case 'text-delta':
            if (part.delta) yield { type: 'text', text: part.delta };
            break;
          case 'reasoning-start':
            if (part.providerMetadata) mergeMetadata(getOrCreate(reasoningMetadata, part.id), part.providerMetadata);
            break;
          case 'reasoning-delta':
            if (part.providerMetadata) mergeMetadata(getOrCreate(reasoningMetadata, part.id), part.providerMetadata);
            if (part.delta) yield { type: 'reasoning', text: part.delta };
            break;
          case 'reasoning-end': {
            const metadata = reasoningMetadata.get(part.id) ?? {};
            mergeMetadata(metadata, part.providerMetadata);
            reasoningMetadata.delete(part.id);
            // Only Anthropic needs its reasoning back (signed thinking); other providers' is not kept.
            if (metadata.anthropic) yield { type: 'reasoning_end', metadata: { anthropic: metadata.anthropic } };
            break;
          }
          case 'tool-call':
            if (part.providerExecuted)
              yield {
                type: 'provider_tool_call',
                id: part.toolCallId,
                name: part.toolName,
                input: parseInput(part.input),
              };
            else toolCalls.push({ type: 'tool_call', id: part.toolCallId, name: part.toolName, input: part.input });
            break;
          case 'tool-result':
            if (!part.preliminary)
              yield {
                type: 'provider_tool_result',
                id: part.toolCallId,
                name: part.toolName,
                result: part.result,
                isError: part.isError === true,
              };
            break;
          case 'source':
            yield {
              type: 'source',
              source:
                part.sourceType === 'url'
                  ? { url: part.url, ...(part.title ? { title: part.title } : {}) }
                  : {
                      title: part.title,
                      media_type: part.mediaType,
                      ...(part.filename ? { filename: part.filename } : {}),
                    },
            };
            break;
          case 'stream-start':
            if (this.sayWarnings) for (const warning of part.warnings) this.warn(`${this.id}: ${warningText(warning)}`);
            break;
          case 'response-metadata':
            if (part.modelId) answeredBy = this.secrets.redact(part.modelId);
            break;
          case 'finish': {
            if (!isProvidersFinish(part.finishReason)) throw endedEarly();
            yield* toolCalls;
            const detail = finishDetail(part);
            yield {
              type: 'finish',
              usage: toUsage(part.usage),
              reason: part.finishReason.unified as FinishReason,
              providerReason: part.finishReason.raw ?? null,
              ...(detail ? { detail: this.secrets.redact(detail) } : {}),
              ...(answeredBy ? { model: answeredBy } : {}),
            };
            return;
          }
          case 'error':
            // openai-compatible reports a stream that ended without a finish reason as an error.
            if (
              InvalidResponseDataError.isInstance(part.error) &&
              /without a finish reason/i.test(part.error.message)
            ) {
              throw endedEarly(part.error);
            }
            throw classifyProviderError(part.error, this.spec, 'stream', this.secrets);
          default:
            break;
        }
      }
    } finally {
      reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }
}

/** The output cap of one request: the configured one, lowered by the request's own. */
function outputCap(configured: number | undefined, requested: number | undefined): { maxOutputTokens?: number } {
  const caps = [configured, requested].filter((cap): cap is number => cap !== undefined);
  return caps.length > 0 ? { maxOutputTokens: Math.min(...caps) } : {};
}

function getOrCreate(map: Map<string, ProviderMetadata>, id: string): ProviderMetadata {
  let value = map.get(id);
  if (!value) map.set(id, (value = {}));
  return value;
}

function parseInput(input: string): unknown {
  try {
    return JSON.parse(input);
  } catch {
    return input;
  }
}

function warningText(warning: { type: string; feature?: string; details?: string; message?: string }): string {
  if (warning.type === 'other') return warning.message ?? 'warning';
  return `${warning.feature ?? 'a setting'} is not supported${warning.details ? `: ${warning.details}` : ''}`;
}
