/**
 * The run's model, created (its provider SDK imported) as soon as the run is made, while it waits
 * for its client; retries and provider warnings become notices. A failure is reported when the
 * run awaits the model, never as an unhandled rejection.
 */
import type { LoadedConfig } from '../config/load.ts';
import { createChatModel } from '../llm/create.ts';
import type { ModelSpec } from '../llm/resolve.ts';
import type { ChatModel } from '../llm/types.ts';
import type { Logger } from '../output/logger.ts';
import type { Secrets } from '../redact.ts';

export function startModel(
  spec: ModelSpec,
  config: LoadedConfig,
  options: {
    environment: NodeJS.ProcessEnv;
    secrets: Secrets;
    logger: Logger;
    notice(level: 'info' | 'warning', message: string): void;
    /** What the run is busy with, for a status line (a retry's wait). */
    activity?(text: string): void;
  },
): Promise<ChatModel> {
  const retries = config.value.assistant?.request?.max_retries ?? 4;
  const { logger, notice } = options;
  const model = createChatModel(spec, config.value, {
    environment: options.environment,
    secrets: options.secrets,
    onRetry: (attempt, delay, error) => {
      const when = Number.isFinite(delay) && delay > 0 ? `in ${(delay / 1000).toFixed(1)} s` : 'now';
      notice('warning', `${error.message}; retrying ${when} (attempt ${attempt} of ${retries})`);
      // Said through the wait and the retried request alike: the notice above says how long the wait is.
      options.activity?.(`retrying, attempt ${attempt} of ${retries}`);
    },
    ...(logger.enabled('wire')
      ? { wire: (message: string, fields: Record<string, unknown>) => logger.wire(message, fields) }
      : {}),
    onWarning: (message) => notice('warning', message),
    onWaiting: (waited, limit) => {
      notice(
        'info',
        `waiting for the server (queued?): no answer after ${Math.round(waited / 1000)} s; ` +
          `jp waits up to ${Math.round(limit / 1000)} s for it to begin (assistant.request.headers_timeout_secs)`,
      );
      options.activity?.('waiting for the server (queued?)');
    },
  });
  model.catch(() => {
    // reported when the run awaits it
  });
  return model;
}
