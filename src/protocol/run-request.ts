/**
 * What a client asks a query server to run, sent as one JSON line on the server's readiness pipe
 * (server/spawn.ts), or handed over in memory for a run in the client's own process. The client
 * resolves everything that can fail on the user's input (flags, config, model, conversation, lock,
 * stdin) before it sends one. The server reads it as untrusted input (`parseRunRequest`): it
 * checks the request against this schema and refuses one that does not match, naming the field.
 * Imports nothing from the project outside this module; the client imports only the type.
 */
import * as z from 'zod/mini';

/** Where and how much a process logs (output/logger.ts). */
const logSettingsSchema = z.object({
  /** Number of -v flags: 0 off, 1 warn (and error), 2 info, 3 debug, 4 trace, 5 wire. */
  verbosity: z.number(),
  /** A path, or `-` for stderr. */
  file: z.string(),
  format: z.enum(['text', 'json']),
  /** Whether `file` is jp's own default location (opened without following a symlink). */
  isDefaultFile: z.optional(z.boolean()),
});

export type LogSettings = z.infer<typeof logSettingsSchema>;

const runRequestSchema = z.object({
  conversation_id: z.string(),
  workspace: z.object({ root: z.string(), is_default: z.boolean(), tool_root: z.string() }),
  cwd: z.string(),
  /** The new user message (stdin content included), or null for a pure `--continue`. */
  message: z.nullable(z.string()),
  /** Continue the incomplete turn first. */
  resume: z.boolean(),
  /**
   * With `resume`: the incomplete turn goes on with this message as the user's reply, as Ctrl+C →
   * reply does (what was pending is closed as not done); `message` is then null. An editor's prompt
   * after a cancelled one is sent this way.
   */
  reply: z.optional(z.string()),
  /** Images attached to `message` (or `reply`): each its IANA media type and base64 bytes (jp acp). */
  images: z.optional(z.array(z.object({ media_type: z.string(), data: z.string() }))),
  /** Drop the incomplete turn (marked discarded) before running the message. */
  discard_turn: z.boolean(),
  /**
   * Close the incomplete turn before running the message: it holds nothing a person must decide
   * (DESIGN §7), so it ends as interrupted (kept, sent to the model) and its calls without a result
   * get one saying they were not run.
   */
  close_turn: z.optional(z.boolean()),
  /** Started with --detach: no client is waited for, and the built-in detached policy is `defer`. */
  detached: z.boolean(),
  config: z.object({
    user_file: z.optional(z.string()),
    workspace_file: z.optional(z.string()),
    cfg_arguments: z.array(z.string()),
    /**
     * The content hash of the workspace config its user trusts, decided by the client
     * (src/cli/workspace-trust.ts); null: not trusted. The config is loaded with it, never re-decided.
     */
    trusted_workspace_sha256: z.nullable(z.string()),
    /**
     * The trust state in words (WorkspaceTrust.state): `not trusted` is the user's own decision, so
     * an ignored key that decides where requests go stops the run only in the other states.
     */
    workspace_trust_state: z.string(),
    flags: z.array(
      z.object({
        label: z.string(),
        path: z.array(z.string()),
        value: z.unknown(),
        /** false: a setting of the client's session, never recorded in the conversation. */
        recorded: z.optional(z.boolean()),
      }),
    ),
  }),
  tools: z.object({ no_tools: z.boolean(), enabled: z.array(z.string()) }),
  /** The exact lock file content the client holds, proving the hand-over. */
  lock_token: z.nullable(z.string()),
  log: logSettingsSchema,
  /** The per-run log the server writes its own output to (under the user-local processes/ directory). */
  run_log: z.string(),
  /** The text reported as `query` in the result, already cut to size (resultQuery): never the whole input twice. */
  query: z.string(),
  /** Milliseconds since the epoch when the user's command started, for duration_ms. */
  started_at: z.number(),
  /**
   * The client's whole environment, provider keys included: a spawned server is started with only
   * what Node needs (serverStartEnvironment), so that its keys are nowhere a tool could read them.
   * Set by spawnServer; absent for a run in the client's own process.
   */
  environment: z.optional(z.record(z.string(), z.optional(z.string()))),
});

export type RunRequest = z.infer<typeof runRequestSchema>;

export type ParsedRunRequest = { ok: true; request: RunRequest } | { ok: false; message: string };

/** Checks a run request read from a client (untrusted input). Never throws. */
export function parseRunRequest(value: unknown): ParsedRunRequest {
  const result = runRequestSchema.safeParse(value);
  if (result.success) return { ok: true, request: result.data };
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.map(String).join('.')}` : '';
  const expected = issue && 'expected' in issue ? `: expected ${String(issue.expected)}` : '';
  return { ok: false, message: `the run request is invalid${where}${expected}` };
}
