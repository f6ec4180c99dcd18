/**
 * Tool definition (DESIGN §9): a schema and `execute(args, context)`. The context carries the abort
 * signal and the answers to questions the tool asked; a tool never sees the terminal. Invalid
 * arguments become a message the model can act on.
 */
import * as z from 'zod/mini';
import type { AnsweredBy, EscalationNeed, JsonValue, Question } from '../inquiry/types.ts';
import type { CommandSandbox } from '../sandbox/engine.ts';

export type ToolResult =
  | { kind: 'success'; content: string }
  | { kind: 'error'; message: string }
  /** The tool needs an answer first; it is run again with the answer in `context.answers`. */
  | { kind: 'needs_input'; question: Question };

/** Told about tool subprocess groups, so a forced kill can reach them through the registry. */
export interface ProcessTracker {
  /** The JP_TOOL_PROCESS value for the next subprocess: `<run marker>.<n>` (see marked-processes.ts). */
  nextMarker(): string;
  started(processGroupId: number, marker: string): void;
  ended(processGroupId: number): void;
}

/** How a question asked while a tool runs (ToolContext.ask) was settled. */
export type ToolAnswer =
  | {
      kind: 'answered';
      answer: JsonValue;
      by: AnsweredBy /** How a policy or the assistant came to answer. */;
      reason: string | undefined;
    }
  /** Nobody answered (no user, and the policy could not): `reason` says why in plain words. */
  | { kind: 'unanswered'; reason: string }
  /** Policy `defer`: the tool must stop now; the call runs again once a human has answered. */
  | { kind: 'deferred' };

/**
 * The user's editor as the place files are read and written (an ACP client that offers
 * fs/read_text_file and fs/write_text_file): unsaved buffers are seen, and edits land in the editor.
 * Paths are absolute and already confined to the workspace; the call was approved before it ran.
 */
export interface EditorFiles {
  /** The text as the editor has it; undefined when it cannot give it (the tool reads the disk). */
  read?(file: string): Promise<string | undefined>;
  /** Throws, with a message for the model, when the editor did not write it. */
  write?(file: string, content: string): Promise<void>;
}

/** How a command run in the user's editor's terminal ended (EditorTerminal). */
export interface EditorTerminalOutcome {
  /** stdout and stderr together, as the terminal shows them; its tail when `truncated`. */
  output: string;
  truncated: boolean;
  exitCode: number | null;
  signal: string | null;
}

/**
 * A terminal of the user's editor (an ACP client that offers `terminal/*`): the command runs there,
 * so the user watches its output live. The command given is the whole command line to start, the
 * sandbox already applied. Killed when `signal` aborts. Throws, with a message for the model, when
 * the editor could not run it.
 */
export interface EditorTerminal {
  run(
    command: { command: string; args: string[]; cwd: string },
    options: { signal: AbortSignal; outputByteLimit: number },
  ): Promise<EditorTerminalOutcome>;
}

export interface ToolContext {
  signal: AbortSignal;
  /** Directory the tool is confined to (the workspace root). */
  toolRoot: string;
  /** The environment for the tool's subprocesses: jp's own without the provider keys (environment.ts). */
  environment: NodeJS.ProcessEnv;
  conversationId: string;
  /** Answers to the questions this call asked, by question id. */
  answers: Record<string, JsonValue>;
  /** Who gave each answer: the user, a policy default, or the assistant. */
  answeredBy: Record<string, AnsweredBy>;
  processes: ProcessTracker;
  timeoutMilliseconds: number;
  /**
   * Characters of output that reach the model (`conversation.tools.defaults.output_limit`): longer
   * output is cut by jp in one place (truncate.ts). A tool that can return a part of something
   * (fs_read_file) stops within it instead.
   */
  outputLimit: number;
  /**
   * Asks a question while the tool runs (an MCP elicitation). It is an inquiry like any other,
   * persisted and routed by route(); an answer given before (a resumed call) is returned at once.
   */
  ask(question: Question): Promise<ToolAnswer>;
  /** Progress of a long call, shown as chrome on the clients' stderr. */
  progress(message: string): void;
  /** What the call's commands write as they run, for a person to watch (the result still carries it). */
  output?(stream: 'stdout' | 'stderr', text: string): void;
  /** Where the commands this call starts run: the run's sandbox, or none for an approved escalation. */
  sandbox: CommandSandbox;
  /** Files go through the user's editor when its client offers that; absent: the disk. */
  editorFiles?: EditorFiles;
  /** run_command's command runs in a terminal of the user's editor when its client offers that; absent: here. */
  editorTerminal?: EditorTerminal;
}

export type Validation = { ok: true; value: unknown } | { ok: false; message: string };

export interface Tool {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  /** Whether running it may change anything: decides re-run versus "outcome unknown" on resume. */
  sideEffects: boolean;
  /**
   * It only reads and asks nothing: the read-only calls of one batch that run unattended run at
   * the same time (src/turn/tool-batch.ts).
   */
  readOnly?: boolean;
  /** The tool's own result says who answered its questions (from `answeredBy`); otherwise jp adds it. */
  tellsWhoAnswered?: boolean;
  /** The tool's own `run` mode default, below the user's config for this tool (trusted MCP annotations). */
  defaultRunMode?: { value: 'unattended'; reason: string };
  /** The tool's own time limit, used when `conversation.tools.<name>.timeout_secs` is not set. */
  timeoutSeconds?: number;
  /** The commands it starts run in the sandbox (run_command, local command tools). */
  confined?: boolean;
  /**
   * The call must be allowed by a human (an `escalate` inquiry), not by the `run` policy alone: it
   * asks to run outside the sandbox (run_command's `escalate: true`), or a file tool writes where
   * git runs programs from (needs `git`). What for, and why.
   */
  escalation?(argumentsValue: unknown, toolRoot: string): { needs: EscalationNeed; justification: string } | undefined;
  /** The file a call writes, as the model named it (jp's file tools): kept by checkpoints even when ignored. */
  writesFile?(argumentsValue: unknown): string | undefined;
  /** False once the tool can no longer be called (its MCP server stopped): it is not offered any more. */
  available?(): boolean;
  validate(argumentsValue: unknown): Validation;
  execute(argumentsValue: unknown, context: ToolContext): Promise<ToolResult>;
}

/** Describes zod issues in words a model can act on. */
export function describeIssues(
  issues: readonly { path: PropertyKey[]; code: string; message: string; expected?: string; keys?: string[] }[],
): string {
  return issues
    .slice(0, 5)
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'arguments';
      if (issue.code === 'invalid_type') return `${where}: expected ${issue.expected}`;
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys ?? [];
        return `${where}: ${keys.length === 1 ? 'unknown field' : 'unknown fields'} ${keys.join(', ')}`;
      }
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}

export function validationMessage(toolName: string, detail: string, parameters: Record<string, unknown>): string {
  return (
    `Invalid arguments for ${toolName}: ${detail}. ` +
    `Call ${toolName} again with arguments that match its schema: ${JSON.stringify(parameters)}`
  );
}

/**
 * The answer to a call whose arguments did not parse as JSON (a model that writes a raw newline in a
 * string, or stops half way): what the parser said and what it was given, so the model can fix it.
 * Undefined when the arguments are not such a text.
 */
export function notJsonMessage(
  toolName: string,
  argumentsValue: unknown,
  parameters: Record<string, unknown>,
): string | undefined {
  if (typeof argumentsValue !== 'string') return undefined;
  try {
    JSON.parse(argumentsValue);
    return undefined;
  } catch (error) {
    const given = argumentsValue.length > 200 ? `${argumentsValue.slice(0, 199)}…` : argumentsValue;
    return validationMessage(
      toolName,
      `the arguments were not valid JSON: ${(error as Error).message}; they were ${JSON.stringify(given)}`,
      parameters,
    );
  }
}

export function defineTool<Schema extends z.ZodMiniType>(definition: {
  name: string;
  description: string;
  schema: Schema;
  sideEffects: boolean;
  readOnly?: boolean;
  tellsWhoAnswered?: boolean;
  confined?: boolean;
  timeoutSeconds?: number;
  escalation?(
    argumentsValue: z.infer<Schema>,
    toolRoot: string,
  ): { needs: EscalationNeed; justification: string } | undefined;
  writesFile?(argumentsValue: z.infer<Schema>): string | undefined;
  execute(argumentsValue: z.infer<Schema>, context: ToolContext): Promise<ToolResult>;
}): Tool {
  // Generated on first use: building JSON Schemas at start-up would slow down every command.
  let parameters: Record<string, unknown> | undefined;
  const jsonSchema = (): Record<string, unknown> => {
    if (!parameters) {
      parameters = z.toJSONSchema(definition.schema) as Record<string, unknown>;
      delete parameters.$schema;
    }
    return parameters;
  };
  return {
    name: definition.name,
    description: definition.description,
    get parameters() {
      return jsonSchema();
    },
    sideEffects: definition.sideEffects,
    ...(definition.readOnly ? { readOnly: true } : {}),
    ...(definition.tellsWhoAnswered ? { tellsWhoAnswered: true } : {}),
    ...(definition.confined ? { confined: true } : {}),
    ...(definition.timeoutSeconds !== undefined ? { timeoutSeconds: definition.timeoutSeconds } : {}),
    ...(definition.escalation
      ? {
          escalation: (argumentsValue: unknown, toolRoot: string) =>
            definition.escalation!(argumentsValue as z.infer<Schema>, toolRoot),
        }
      : {}),
    ...(definition.writesFile
      ? {
          writesFile: (argumentsValue: unknown) => {
            const result = definition.schema.safeParse(argumentsValue);
            return result.success ? definition.writesFile!(result.data) : undefined;
          },
        }
      : {}),
    validate(argumentsValue) {
      const result = definition.schema.safeParse(argumentsValue);
      if (result.success) return { ok: true, value: result.data };
      return {
        ok: false,
        message: validationMessage(definition.name, describeIssues(result.error.issues as never), jsonSchema()),
      };
    },
    execute(argumentsValue, context) {
      return definition.execute(argumentsValue as z.infer<Schema>, context);
    },
  };
}
