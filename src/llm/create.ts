/**
 * Builds the ChatModel for a resolved spec, with retries. Provider SDKs are imported here, lazily.
 */
import type { Config } from '../config/schema.ts';
import type { JpError } from '../errors.ts';
import type { Secrets } from '../redact.ts';
import type { WireObserver } from './provider-fetch.ts';
import type { ModelSpec } from './resolve.ts';
import { RetryingChatModel } from './retry.ts';
import type { ChatModel } from './types.ts';

export interface CreateModelOptions {
  environment: NodeJS.ProcessEnv;
  secrets: Secrets;
  onRetry?: (attempt: number, delayMilliseconds: number, error: JpError) => void;
  /** Sees the provider's HTTP traffic (request bodies, raw response stream), for -vvvvv. */
  wire?: WireObserver;
  /** A setting the provider cannot honour, said once (chrome on stderr). */
  onWarning?: (message: string) => void;
  /** A request's response has not begun after a few seconds (a server's queue). */
  onWaiting?: (waitedMilliseconds: number, limitMilliseconds: number) => void;
}

export async function createChatModel(
  spec: ModelSpec,
  config: Config,
  options: CreateModelOptions,
): Promise<ChatModel> {
  let model: ChatModel;
  if (spec.provider === 'test') {
    const { loadTestScript, TestChatModel } = await import('./test-provider.ts');
    model = new TestChatModel(spec.id, loadTestScript(spec.testScript!));
  } else {
    const { createSdkLanguageModel, SdkChatModel } = await import('./sdk-model.ts');
    const assistant = config.assistant ?? {};
    model = new SdkChatModel(
      spec,
      await createSdkLanguageModel(spec, options.environment, options.wire),
      options.secrets,
      {
        ...(assistant.max_output_tokens !== undefined ? { maxOutputTokens: assistant.max_output_tokens } : {}),
        ...(assistant.reasoning !== undefined ? { reasoning: assistant.reasoning } : {}),
      },
      options.onWarning,
    );
  }
  const request = config.assistant?.request ?? {};
  return new RetryingChatModel(model, {
    maxRetries: request.max_retries ?? 4,
    baseDelayMilliseconds: request.backoff_base_ms ?? 1000,
    maxDelayMilliseconds: request.backoff_max_ms ?? 30_000,
    idleTimeoutMilliseconds: (request.idle_timeout_secs ?? 120) * 1000,
    headersTimeoutMilliseconds: (request.headers_timeout_secs ?? 600) * 1000,
    ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    ...(options.onWaiting ? { onWaiting: options.onWaiting } : {}),
  });
}
