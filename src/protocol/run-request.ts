/**
 * What a client asks a query server to run, sent as one JSON line on the server's readiness pipe
 * (launch/spawn.ts), or handed over in memory for a run in the client's own process. The client
 * settles what it must to start the run (flags, stdin, the conversation and its lock, the trust
 * decision on its config snapshot) and sends the config files as it read them; the process that
 * runs the turn loads the configuration from them, the model and the tools, and their errors come
 * back before anything runs. The server reads the request as untrusted input (`parseRunRequest`):
 * it checks it against this schema and refuses one that does not match, naming the field.
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

/**
 * The configuration files as the client read them (config/snapshot.ts): the process that runs the
 * turn goes by these texts and reads no config file itself.
 */
const configFilesSchema = z.object({
  /** The user config's path, and its text (null: there is none). */
  user: z.object({ path: z.string(), text: z.nullable(z.string()) }),
  /** The workspace config (null: none), with the hash its trust is keyed by, taken when it was read. */
  workspace: z.nullable(z.object({ path: z.string(), text: z.string(), trust_sha256: z.string() })),
});

export type ConfigFilesWire = z.infer<typeof configFilesSchema>;

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
    files: configFilesSchema,
    cfg_arguments: z.array(z.string()),
    /**
     * The trust hash of the workspace config its user trusts (that of `files.workspace`), decided by
     * the client (config/trust-decision.ts); null: not trusted. The config is loaded with it, never re-decided.
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

/**
 * The first line a server writes back on its readiness pipe: ready with its socket and the run's
 * capability (for the starting client's hello), or why it is not.
 */
export type ReadyMessage =
  | { ready: true; pid: number; socket_path: string; capability: string }
  | { ready: false; error: { code: string; message: string; hint?: string; exit_code: number } };
