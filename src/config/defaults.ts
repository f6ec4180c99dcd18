/**
 * The built-in layer: the lowest layer of the cascade (DESIGN §3). Its own module, without the
 * schema library, so that what needs only the defaults (trust.ts, in every query client) stays light.
 */
import type { Config } from './schema.ts';

/** The built-in layer: the lowest layer of the cascade. */
export const builtinDefaults = {
  assistant: {
    model: 'openai/gpt-4.1-mini',
    max_turns: 25,
    request: {
      max_retries: 4,
      backoff_base_ms: 1000,
      backoff_max_ms: 30000,
      idle_timeout_secs: 120,
      headers_timeout_secs: 600,
    },
  },
  conversation: {
    tools: {
      defaults: { run: 'ask', result: 'unattended', output_limit: 30000, timeout_secs: 600 },
      fs_read_file: { run: 'unattended' },
      fs_list_files: { run: 'unattended' },
      fs_search: { run: 'unattended' },
      ask_user: { run: 'unattended' },
    },
  },
  sandbox: { mode: 'workspace-write', network: false },
} as unknown as Config;
