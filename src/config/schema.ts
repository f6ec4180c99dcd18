/**
 * The one schema every configuration key is validated against (DESIGN §3). Every object is strict:
 * an unknown key is an error, never silently ignored.
 */
import * as z from 'zod/mini';

export const runModes = ['ask', 'unattended', 'edit', 'skip'] as const;
export const resultModes = ['unattended', 'ask', 'edit', 'skip'] as const;
export const detachedPolicyNames = ['auto', 'defaults', 'deny', 'defer'] as const;

const runMode = z.enum(runModes);
const resultMode = z.enum(resultModes);
const detachedPolicy = z.enum(detachedPolicyNames);

const detached = z.union([
  detachedPolicy,
  z.strictObject({
    run: z.optional(detachedPolicy),
    deliver: z.optional(detachedPolicy),
    tool: z.optional(detachedPolicy),
    /** Running a command outside the sandbox (DESIGN §10); never set by the scalar shorthand. */
    escalate: z.optional(detachedPolicy),
  }),
]);

const questionConfig = z.strictObject({
  /** Who answers: the user (a prompt, or the detached policy) or the assistant (an LLM inquiry). */
  target: z.optional(z.enum(['user', 'assistant'])),
  exclusive: z.optional(z.boolean()),
  default: z.optional(z.union([z.string(), z.number(), z.boolean()])),
  /** For select questions: "first", "last" or an exact option label. */
  default_option: z.optional(z.string()),
});

const parameterConfig = z.strictObject({
  type: z.enum(['string', 'number', 'integer', 'boolean', 'object', 'array']),
  description: z.optional(z.string()),
  required: z.optional(z.boolean()),
  enum: z.optional(z.array(z.string())),
});

const commandConfig = z.union([
  z.string(),
  z.strictObject({
    program: z.string(),
    args: z.optional(z.array(z.string())),
    shell: z.optional(z.boolean()),
  }),
]);

const environmentVariableName = z
  .string()
  .check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'));
const positiveInteger = z.int().check(z.positive());
/** A plain file name: no directory part, so it names a file in each directory looked in and nowhere else. */
const instructionFileName = z
  .string()
  .check(
    z.refine(
      (value) => value !== '' && value !== '.' && value !== '..' && !/[/\\\0]/.test(value),
      'must be a plain file name such as CLAUDE.md (no / or \\)',
    ),
  );
const nonNegativeInteger = z.int().check(z.nonnegative());
const positiveNumber = z.number().check(z.positive());

const toolConfig = z.strictObject({
  enable: z.optional(z.boolean()),
  /** `builtin` for jp's own tools, `local` for a command run on this machine. */
  source: z.optional(z.enum(['builtin', 'local'])),
  command: z.optional(commandConfig),
  description: z.optional(z.string()),
  parameters: z.optional(z.record(z.string(), parameterConfig)),
  /** Whether running the tool may change anything; decides re-run versus "outcome unknown" on resume. */
  side_effects: z.optional(z.boolean()),
  run: z.optional(runMode),
  result: z.optional(resultMode),
  detached: z.optional(detached),
  timeout_secs: z.optional(positiveNumber),
  /**
   * Variables passed to the tool's subprocess even though they hold provider keys (which tools do not get otherwise).
   */
  env_vars: z.optional(z.array(environmentVariableName)),
  questions: z.optional(z.record(z.string(), questionConfig)),
});

const toolDefaultsConfig = z.strictObject({
  run: z.optional(runMode),
  result: z.optional(resultMode),
  detached: z.optional(detached),
  /** Tool output longer than this many characters is truncated before it reaches the model. */
  output_limit: z.optional(positiveInteger),
  timeout_secs: z.optional(positiveNumber),
});

const toolsConfig = z.catchall(z.strictObject({ defaults: z.optional(toolDefaultsConfig) }), toolConfig);

const urlString = z.string().check(
  z.refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// URL'),
);

/** `[mcp.servers.<name>]` (DESIGN §9): a program started over stdio, or a streamable HTTP `url`. */
const mcpServerConfig = z.strictObject({
  command: z.optional(z.string().check(z.minLength(1))),
  args: z.optional(z.array(z.string())),
  /** Literal environment variables for the server. */
  env: z.optional(z.record(environmentVariableName, z.string())),
  /** Names of variables passed through from jp's own environment. */
  env_vars: z.optional(z.array(environmentVariableName)),
  /** Working directory; relative paths are relative to the workspace root. */
  cwd: z.optional(z.string().check(z.minLength(1))),
  url: z.optional(urlString),
  headers: z.optional(z.record(z.string(), z.string())),
  /** The environment variable holding a token sent as `Authorization: Bearer <token>`. */
  bearer_token_env: z.optional(environmentVariableName),
  startup_timeout_secs: z.optional(positiveNumber),
  tool_timeout_secs: z.optional(positiveNumber),
  enabled: z.optional(z.boolean()),
  /** Let the server's tool annotations (readOnlyHint) relax jp's defaults for its tools. */
  trust_annotations: z.optional(z.boolean()),
  /**
   * Start the server (stdio) inside the command sandbox, under `[sandbox]`. Default: true for a
   * server the workspace config defines (repository code), false for the user's own.
   */
  sandbox: z.optional(z.boolean()),
});

/** The events a hook can be configured for (DESIGN §10, README "Hooks"): the common hook contract's names. */
export const hookEventNames = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'Notification',
  'Stop',
  'PreCompact',
] as const;

/** A hook's matcher: a regular expression matched against the whole name (`""` or `"*"`: everything). */
const hookMatcher = z.string().check(
  z.refine((value) => {
    try {
      new RegExp(value === '*' ? '' : value);
      return true;
    } catch {
      return false;
    }
  }, 'must be a regular expression, e.g. "Bash|run_command", or "*" for every tool'),
);

/** `[[hooks.<Event>]]`: one command run at that event (src/hooks/). `timeout` in seconds, at most an hour. */
const hookEntry = z.strictObject({
  matcher: z.optional(hookMatcher),
  command: z.string().check(z.minLength(1)),
  timeout: z.optional(positiveNumber.check(z.lte(3600))),
});

/**
 * A PermissionRequest hook answers escalations (leaving the sandbox) only when the user's own config says
 * `escalate = true`.
 */
const permissionHookEntry = z.strictObject({ ...hookEntry.shape, escalate: z.optional(z.boolean()) });

/** Server names become part of tool names (`mcp__<server>__<tool>`), which providers restrict. */
const mcpServerName = z
  .string()
  .check(z.regex(/^[A-Za-z0-9_-]{1,32}$/, 'a server name is 1 to 32 letters, digits, _ or -'));

export const configSchema = z.strictObject({
  assistant: z.optional(
    z.strictObject({
      model: z.optional(z.string().check(z.minLength(1))),
      /** Replaces jp's built-in system prompt (src/turn/system-prompt.ts). */
      system_prompt: z.optional(z.string()),
      /** Appended to the system prompt (built-in or replaced), before the instruction files. */
      instructions: z.optional(z.string()),
      /** File names read like AGENTS.md (e.g. CLAUDE.md), from the workspace root down to the working directory. */
      instruction_files: z.optional(z.array(instructionFileName)),
      max_turns: z.optional(positiveInteger),
      /** Input tokens the model takes; overrides jp's table (src/llm/context-window.ts). */
      context_window: z.optional(positiveInteger),
      /** Older turns are summarised before a request would pass `threshold` of the context window. */
      compaction: z.optional(
        z.strictObject({
          threshold: z.optional(z.number().check(z.gt(0), z.lte(1))),
        }),
      ),
      /** Budgets of one turn (per run of it): `tokens` caps input + output tokens, like max_turns caps requests. */
      budget: z.optional(z.strictObject({ tokens: z.optional(positiveInteger) })),
      /** Cap on the tokens of one model response; a response cut there ends with finish reason `length`. */
      max_output_tokens: z.optional(positiveInteger),
      /** How much the model reasons: OpenAI's reasoning effort, Anthropic's thinking budget (and effort). */
      reasoning: z.optional(
        z.strictObject({
          effort: z.optional(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])),
          budget_tokens: z.optional(z.int().check(z.gte(1024))),
        }),
      ),
      request: z.optional(
        z.strictObject({
          /** At most 10 in any layer: a failing provider is never hammered with the user's key (DESIGN §10). */
          max_retries: z.optional(nonNegativeInteger.check(z.lte(10))),
          backoff_base_ms: z.optional(nonNegativeInteger),
          backoff_max_ms: z.optional(nonNegativeInteger),
          /**
           * Seconds without a byte from the provider, once its response began, before the request is abandoned and
           * retried.
           */
          idle_timeout_secs: z.optional(positiveNumber),
          /**
           * Seconds the provider may take to begin its response (headers; a local server's queue) before the request is
           * abandoned.
           */
          headers_timeout_secs: z.optional(positiveNumber),
        }),
      ),
    }),
  ),
  providers: z.optional(
    z.strictObject({
      openai: z.optional(
        z.strictObject({
          base_url: z.optional(urlString),
          api: z.optional(z.enum(['responses', 'chat'])),
          api_key_env: z.optional(environmentVariableName),
        }),
      ),
      anthropic: z.optional(
        z.strictObject({ base_url: z.optional(urlString), api_key_env: z.optional(environmentVariableName) }),
      ),
      ollama: z.optional(z.strictObject({ base_url: z.optional(urlString) })),
      'openai-compatible': z.optional(
        z.record(
          z.string(),
          z.strictObject({
            base_url: urlString,
            api_key_env: z.optional(environmentVariableName),
            context_window: z.optional(positiveInteger),
          }),
        ),
      ),
      test: z.optional(z.strictObject({ script: z.optional(z.string()) })),
    }),
  ),
  /** Environment variables whose values are secrets: redacted wherever jp writes or sends text (DESIGN §10). */
  secrets: z.optional(z.strictObject({ env_vars: z.optional(z.array(environmentVariableName)) })),
  conversation: z.optional(
    z.strictObject({
      tools: z.optional(toolsConfig),
      hooks: z.optional(z.strictObject({ on_waiting: z.optional(z.string()) })),
    }),
  ),
  mcp: z.optional(z.strictObject({ servers: z.optional(z.record(mcpServerName, mcpServerConfig)) })),
  /** Programs of the user's run at points of a run, in the common hook contract (src/hooks/). */
  hooks: z.optional(
    z.strictObject({
      SessionStart: z.optional(z.array(hookEntry)),
      UserPromptSubmit: z.optional(z.array(hookEntry)),
      PreToolUse: z.optional(z.array(hookEntry)),
      PermissionRequest: z.optional(z.array(permissionHookEntry)),
      PostToolUse: z.optional(z.array(hookEntry)),
      Notification: z.optional(z.array(hookEntry)),
      Stop: z.optional(z.array(hookEntry)),
      PreCompact: z.optional(z.array(hookEntry)),
    }),
  ),
  /** How jp draws at a terminal. `theme`: colours for a dark or a light background (default: asked of the terminal). */
  ui: z.optional(z.strictObject({ theme: z.optional(z.enum(['dark', 'light'])) })),
  /** How commands the model runs are confined (DESIGN §10). */
  sandbox: z.optional(
    z.strictObject({
      mode: z.optional(z.enum(['workspace-write', 'read-only', 'off'])),
      /** Let sandboxed commands reach the network. */
      network: z.optional(z.boolean()),
      /**
       * Directories writable besides the workspace under workspace-write; `~/` and workspace-relative paths allowed.
       */
      writable_roots: z.optional(z.array(z.string().check(z.minLength(1)))),
      /** Paths hidden from sandboxed commands besides the built-in list; every layer's list counts. */
      hidden_paths: z.optional(z.array(z.string().check(z.minLength(1)))),
      /**
       * Hide all of the home directory but the workspace, writable_roots and readable_roots (off by
       * default: per-user toolchains live there, see the README).
       */
      hide_home: z.optional(z.boolean()),
      /** With hide_home: directories shown read-only (`~/.rustup`, `~/.cargo`, `~/.pyenv`...). */
      readable_roots: z.optional(z.array(z.string().check(z.minLength(1)))),
      /** Linux: the bubblewrap program when it is not at a system path (/usr/bin/bwrap...); never looked up on PATH. */
      bwrap_path: z.optional(z.string().check(z.regex(/^\//, 'an absolute path'))),
    }),
  ),
  /**
   * The workspace's state recorded before each change the model makes, for `jp conversation diff` and
   * `undo` (DESIGN §10).
   */
  checkpoints: z.optional(
    z.strictObject({
      enabled: z.optional(z.boolean()),
      /** Files larger than this many bytes are not recorded (named when a checkpoint leaves them out). */
      max_file_size: z.optional(positiveInteger),
      /** A workspace with more files than this (not ignored) is not checkpointed; said once per run. */
      max_files: z.optional(positiveInteger),
    }),
  ),
  /** `jp web`: the SSH hosts whose runs the page shows too, and how it reaches them. */
  web: z.optional(
    z.strictObject({
      /** `user@devbox`, `devbox` (a Host of ~/.ssh/config) or `ssh://user@host:port`. */
      hosts: z.optional(z.array(z.string().check(z.minLength(1)))),
      /** The ssh program and its options (default `["ssh"]`), before the host. */
      ssh_command: z.optional(z.array(z.string().check(z.minLength(1))).check(z.minLength(1))),
      /** What starts jp on a host (default `jp`), as the host's shell reads it. */
      remote_command: z.optional(z.string().check(z.minLength(1))),
    }),
  ),
  /**
   * Workspace roots whose ownership the user accepts as it is (another owner, group-writable), or
   * `"*"`: read from the user config only (config/safe-directories.ts); elsewhere it has no effect.
   */
  safe: z.optional(z.strictObject({ directories: z.optional(z.array(z.string().check(z.minLength(1)))) })),
});

export type Config = z.infer<typeof configSchema>;
export type ToolConfig = z.infer<typeof toolConfig>;
export type ToolDefaultsConfig = z.infer<typeof toolDefaultsConfig>;
export type QuestionConfig = z.infer<typeof questionConfig>;
export type McpServerConfig = z.infer<typeof mcpServerConfig>;
export type ParameterConfig = z.infer<typeof parameterConfig>;
export type HookEntryConfig = z.infer<typeof permissionHookEntry>;
export type HookEventName = (typeof hookEventNames)[number];
export type DetachedConfig = z.infer<typeof detached>;
export type RunMode = (typeof runModes)[number];
export type ResultMode = (typeof resultModes)[number];
