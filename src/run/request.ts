/**
 * What a client asks a query server to run. The client resolves everything that can fail on the
 * user's input (flags, config, model, conversation, lock, stdin) before spawning the server, then
 * hands this over on the server's readiness pipe.
 */
import type { LogSettings } from '../output/logger.ts';

export interface RunRequest {
  conversation_id: string;
  workspace: { root: string; is_default: boolean; tool_root: string };
  cwd: string;
  /** The new user message (stdin content included), or null for a pure `--continue`. */
  message: string | null;
  /** Continue the incomplete turn first. */
  resume: boolean;
  /**
   * With `resume`: the incomplete turn goes on with this message as the user's reply, as Ctrl+C →
   * reply does (what was pending is closed as not done); `message` is then null. An editor's prompt
   * after a cancelled one is sent this way.
   */
  reply?: string;
  /** Drop the incomplete turn (marked discarded) before running the message. */
  discard_turn: boolean;
  /**
   * Close the incomplete turn before running the message: it holds nothing a person must decide
   * (DESIGN §7), so it ends as interrupted (kept, sent to the model) and its calls without a result
   * get one saying they were not run.
   */
  close_turn?: boolean;
  /** Started with --detach: no client is waited for, and the built-in detached policy is `defer`. */
  detached: boolean;
  config: {
    user_file: string | undefined;
    workspace_file: string | undefined;
    cfg_arguments: string[];
    /**
     * The content hash of the workspace config its user trusts, decided by the client
     * (src/cli/workspace-trust.ts); null: not trusted. The config is loaded with it, never re-decided.
     */
    trusted_workspace_sha256: string | null;
    /**
     * The trust state in words (WorkspaceTrust.state): `not trusted` is the user's own decision, so
     * an ignored key that decides where requests go stops the run only in the other states.
     */
    workspace_trust_state: string;
    flags: { label: string; path: string[]; value: unknown }[];
  };
  tools: { no_tools: boolean; enabled: string[] };
  /** The exact lock file content the client holds, proving the hand-over. */
  lock_token: string | null;
  log: LogSettings;
  /** The per-run log the server writes its own output to (under the user-local processes/ directory). */
  run_log: string;
  /** The text reported as `query` in the result, already cut to size (resultQuery): never the whole input twice. */
  query: string;
  /** Milliseconds since the epoch when the user's command started, for duration_ms. */
  started_at: number;
  /**
   * The client's whole environment, provider keys included: a spawned server is started with only
   * what Node needs (serverStartEnvironment), so that its keys are nowhere a tool could read them.
   * Set by spawnServer; absent for a run in the client's own process.
   */
  environment?: Record<string, string | undefined>;
}
