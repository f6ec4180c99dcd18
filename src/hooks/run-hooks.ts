/**
 * The hooks of one run (README "Hooks"): for each event, the configured hooks whose matcher matches
 * run at once, each given the event as JSON on stdin in the common contract's fields (`session_id`
 * is the conversation id) plus jp's own under `jp`; their decisions are combined (a deny wins). A
 * hook that fails (another exit code, its timeout, no start) decides nothing and is named on the
 * clients' stderr. Hooks run outside the sandbox, in the workspace root, with jp's environment
 * minus the provider keys (as tools get it).
 */
import type { HookEventName } from '../config/schema.ts';
import type { Inquiry } from '../inquiry/types.ts';
import { truncateOutput } from '../tools/truncate.ts';
import type { ProcessTracker } from '../tools/tool.ts';
import type {
  BeforeToolVerdict,
  HookAnswer,
  HookInquiry,
  HookNote,
  ToolCallFacts,
  TurnHooks,
} from '../turn/hook-port.ts';
import { type HookRun, runHook } from './command.ts';
import type { ConfiguredHook } from './config.ts';
import {
  additionalContext,
  blocked,
  permissionDecision,
  promptContext,
  stopAsked,
  systemMessage,
  toolDecision,
} from './decision.ts';
import { commonToolInput, commonToolName, jpArguments, matchesTool } from './tool-names.ts';
import { spawnWaitingNotification } from './waiting.ts';

/** Characters of what one hook says that reach the model (context, a reason). */
export const maxHookTextCharacters = 10_000;

export interface RunHooksOptions {
  hooks: ConfiguredHook[];
  conversationId: string;
  /** The conversation's events.ndjson (the common contract's `transcript_path`). */
  transcriptPath: string;
  /** Where the user ran jp: the `cwd` hooks are told. */
  cwd: string;
  /** Where hooks run. */
  workspaceRoot: string;
  /** What file tools' paths are relative to (`file_path` is made absolute with it). */
  toolRoot: string;
  /** jp's environment without the provider keys (tools/environment.ts). */
  environment: NodeJS.ProcessEnv;
  /** The run's sandbox mode (`workspace-write`, `read-only`, `off`), told to tool hooks. */
  sandboxMode: string;
  processes: ProcessTracker;
  notice(level: 'info' | 'warning', message: string): void;
  log(message: string, fields?: Record<string, unknown>): void;
}

/** Where a hook's words are cut before they reach the model. */
function bounded(text: string): string {
  return truncateOutput(text, maxHookTextCharacters, 'hook output');
}

export class RunHooks implements TurnHooks {
  private readonly options: RunHooksOptions;
  private stop: HookNote | undefined;

  constructor(options: RunHooksOptions) {
    this.options = options;
  }

  /** Whether any hook is configured for `event`. */
  has(event: HookEventName): boolean {
    return this.options.hooks.some((hook) => hook.event === event);
  }

  private matching(
    event: HookEventName,
    name: string | undefined,
    extra?: (hook: ConfiguredHook) => boolean,
  ): ConfiguredHook[] {
    return this.options.hooks.filter(
      (hook) =>
        hook.event === event &&
        (name === undefined || matchesTool(hook.matcher, name)) &&
        (extra === undefined || extra(hook)),
    );
  }

  /** The common fields of every event's input. */
  private input(event: HookEventName, fields: Record<string, unknown>, jp: Record<string, unknown> = {}): unknown {
    return {
      session_id: this.options.conversationId,
      transcript_path: this.options.transcriptPath,
      cwd: this.options.cwd,
      hook_event_name: event,
      ...fields,
      jp: { conversation_id: this.options.conversationId, workspace_root: this.options.workspaceRoot, ...jp },
    };
  }

  private environment(): NodeJS.ProcessEnv {
    return {
      ...this.options.environment,
      JP_CONVERSATION_ID: this.options.conversationId,
      JP_PROJECT_DIR: this.options.workspaceRoot,
    };
  }

  /** Runs `hooks` at once; reports failures and messages; remembers a `continue: false`. */
  private async run(hooks: ConfiguredHook[], input: unknown, signal: AbortSignal): Promise<HookRun[]> {
    return Promise.all(hooks.map((hook) => this.runOne(hook, input, signal)));
  }

  private async runOne(hook: ConfiguredHook, input: unknown, signal: AbortSignal): Promise<HookRun> {
    const { notice, log } = this.options;
    log('hook started', { event: hook.event, command: hook.command });
    const run = await runHook(hook, input, {
      environment: this.environment(),
      cwd: this.options.workspaceRoot,
      processes: this.options.processes,
      signal,
    });
    log('hook ended', { event: hook.event, command: hook.command, outcome: run.kind });
    if (run.kind === 'failed') {
      const said = run.stderr === '' ? '' : `: ${run.stderr.split('\n')[0]}`;
      notice('warning', `hook \`${hook.command}\` (${hook.event}) failed, ${run.failure}${said}; it decided nothing`);
    }
    const message = systemMessage(run);
    if (message) notice('info', `hook \`${hook.command}\`: ${message}`);
    const stop = stopAsked(run);
    if (stop && !this.stop) this.stop = { hook: hook.command, text: bounded(stop) };
    return run;
  }

  stopRequested(): HookNote | undefined {
    return this.stop;
  }

  private toolFields(call: ToolCallFacts): Record<string, unknown> {
    return {
      tool_name: commonToolName(call.tool),
      tool_input: commonToolInput(call.tool, call.arguments, this.options.toolRoot),
      tool_use_id: call.id,
    };
  }

  async beforeTool(call: ToolCallFacts, signal: AbortSignal): Promise<BeforeToolVerdict> {
    const verdict: BeforeToolVerdict = { decision: 'none', context: [] };
    const hooks = this.matching('PreToolUse', call.tool);
    if (hooks.length === 0) return verdict;
    const input = this.input('PreToolUse', this.toolFields(call), {
      tool: call.tool,
      sandbox: this.options.sandboxMode,
    });
    const rank = { none: 0, allow: 1, ask: 2, deny: 3 } as const;
    for (const run of await this.run(hooks, input, signal)) {
      const decided = toolDecision(run);
      const context = additionalContext(run);
      if (context) verdict.context.push({ hook: run.hook.command, text: bounded(context) });
      if (decided.decision && rank[decided.decision] > rank[verdict.decision]) {
        verdict.decision = decided.decision;
        verdict.hook = run.hook.command;
        const reason = decided.reason ?? '';
        if (reason !== '') verdict.reason = bounded(reason);
        else delete verdict.reason;
      }
      if (decided.decision !== 'deny' && isRecord(decided.updatedInput) && !verdict.updated) {
        verdict.updated = {
          hook: run.hook.command,
          arguments: jpArguments(call.tool, decided.updatedInput, call.arguments, this.options.toolRoot),
        };
      }
    }
    return verdict;
  }

  async afterTool(
    call: ToolCallFacts,
    result: { content: string; isError: boolean },
    signal: AbortSignal,
  ): Promise<HookNote[]> {
    const hooks = this.matching('PostToolUse', call.tool);
    if (hooks.length === 0) return [];
    const input = this.input(
      'PostToolUse',
      { ...this.toolFields(call), tool_response: { content: result.content, is_error: result.isError } },
      { tool: call.tool, sandbox: this.options.sandboxMode },
    );
    const notes: HookNote[] = [];
    for (const run of await this.run(hooks, input, signal)) {
      const block = blocked(run);
      if (block && block.reason !== '') notes.push({ hook: run.hook.command, text: bounded(block.reason) });
      const context = additionalContext(run);
      if (context) notes.push({ hook: run.hook.command, text: bounded(context) });
    }
    return notes;
  }

  /** A hook answers an escalation only when the user's own config says `escalate = true`. */
  answers(inquiry: Inquiry): boolean {
    return this.permissionHooks(inquiry).length > 0;
  }

  private permissionHooks(inquiry: Inquiry): ConfiguredHook[] {
    if (inquiry.kind === 'tool_question') return [];
    return this.matching('PermissionRequest', inquiry.tool, (hook) => inquiry.kind !== 'escalate' || hook.escalate);
  }

  /**
   * The first deny of any matching hook answers at once (the others are stopped); an allow answers
   * once every hook has finished without a deny. No decision from any: undefined.
   */
  async answer(request: HookInquiry, signal: AbortSignal): Promise<HookAnswer | undefined> {
    const hooks = this.permissionHooks(request.inquiry);
    if (hooks.length === 0) return undefined;
    const { inquiry } = request;
    const fields: Record<string, unknown> = {
      tool_name: commonToolName(inquiry.tool),
      tool_use_id: request.toolCallId,
      ...(inquiry.kind === 'deliver_tool_result'
        ? { tool_response: { content: inquiry.result, is_error: inquiry.is_error === true } }
        : {}),
      ...(inquiry.kind === 'run_tool' || inquiry.kind === 'escalate'
        ? { tool_input: commonToolInput(inquiry.tool, inquiry.arguments, this.options.toolRoot) }
        : {}),
    };
    const input = this.input('PermissionRequest', fields, {
      tool: inquiry.tool,
      inquiry_id: request.id,
      inquiry_kind: inquiry.kind,
      inquiry,
      sandbox: this.options.sandboxMode,
      policy: request.policy,
      human_asked: request.humanAsked,
    });
    const stopOthers = new AbortController();
    const onAbort = (): void => stopOthers.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      let allowed: HookAnswer | undefined;
      const denied = await new Promise<HookAnswer | undefined>((resolve) => {
        let left = hooks.length;
        for (const hook of hooks) {
          void this.runOne(hook, input, stopOthers.signal).then((run) => {
            const decided = permissionDecision(run);
            if (decided?.behavior === 'deny') {
              if (decided.interrupt && !this.stop)
                this.stop = { hook: hook.command, text: decided.message ?? 'the hook denied and asked to stop' };
              resolve(answerOf(hook.command, inquiry, 'deny', decided.message));
            } else if (decided?.behavior === 'allow' && !allowed) {
              allowed = answerOf(hook.command, inquiry, 'allow', decided.message);
              if (isRecord(decided.updatedInput) && inquiry.kind === 'run_tool')
                allowed.updatedArguments = jpArguments(
                  inquiry.tool,
                  decided.updatedInput,
                  inquiry.arguments,
                  this.options.toolRoot,
                );
            }
            if (--left === 0) resolve(undefined);
          });
        }
      });
      return denied ?? (signal.aborted ? undefined : allowed);
    } finally {
      signal.removeEventListener('abort', onAbort);
      stopOthers.abort();
    }
  }

  async stopping(facts: { lastMessage: string; active: boolean }, signal: AbortSignal): Promise<HookNote | undefined> {
    const hooks = this.matching('Stop', undefined);
    if (hooks.length === 0) return undefined;
    const input = this.input('Stop', { stop_hook_active: facts.active, last_assistant_message: facts.lastMessage });
    for (const run of await this.run(hooks, input, signal)) {
      const block = blocked(run);
      if (block) return { hook: run.hook.command, text: bounded(block.reason || 'a Stop hook asked to go on') };
    }
    return undefined;
  }

  async compacting(trigger: 'auto' | 'manual', signal: AbortSignal): Promise<void> {
    const hooks = this.options.hooks.filter(
      (hook) => hook.event === 'PreCompact' && (hook.matcher === undefined || hook.matcher.test(trigger)),
    );
    if (hooks.length > 0) await this.run(hooks, this.input('PreCompact', { trigger, custom_instructions: '' }), signal);
  }

  notify(type: 'permission_prompt', message: string, inquiry: Inquiry): void {
    const hooks = this.notificationHooks(type);
    if (hooks.length === 0) return;
    const input = this.input(
      'Notification',
      { message, notification_type: type },
      { tool: inquiry.tool, inquiry_kind: inquiry.kind },
    );
    void this.run(hooks, input, new AbortController().signal);
  }

  private notificationHooks(type: string): ConfiguredHook[] {
    return this.options.hooks.filter(
      (hook) => hook.event === 'Notification' && (hook.matcher === undefined || hook.matcher.test(type)),
    );
  }

  /**
   * SessionStart (`startup` for a new conversation, `resume` for one with turns): what the hooks
   * give the model, joined; undefined when none did.
   */
  async sessionStart(source: 'startup' | 'resume', model: string, signal: AbortSignal): Promise<string | undefined> {
    const hooks = this.options.hooks.filter(
      (hook) => hook.event === 'SessionStart' && (hook.matcher === undefined || hook.matcher.test(source)),
    );
    if (hooks.length === 0) return undefined;
    const runs = await this.run(hooks, this.input('SessionStart', { source, model }), signal);
    const context = runs
      .map(promptContext)
      .filter((text): text is string => text !== undefined)
      .map(bounded);
    return context.length > 0 ? context.join('\n\n') : undefined;
  }

  /**
   * UserPromptSubmit: blocked (exit 2, `decision: "block"`, `continue: false`) with the reason for
   * the user, or the context the hooks add for the model.
   */
  async promptSubmitted(
    prompt: string,
    signal: AbortSignal,
  ): Promise<{ blocked: HookNote } | { blocked?: undefined; context: string | undefined }> {
    const hooks = this.matching('UserPromptSubmit', undefined);
    if (hooks.length === 0) return { context: undefined };
    const runs = await this.run(hooks, this.input('UserPromptSubmit', { prompt }), signal);
    for (const run of runs) {
      const block = blocked(run);
      const stop = stopAsked(run);
      if (block || stop)
        return {
          blocked: { hook: run.hook.command, text: bounded(block?.reason || stop || 'the prompt was blocked') },
        };
    }
    const context = runs
      .map(promptContext)
      .filter((text): text is string => text !== undefined)
      .map(bounded);
    return { context: context.length > 0 ? context.join('\n\n') : undefined };
  }

  /**
   * Notification `waiting_for_input`: the run deferred an inquiry and nobody is there. The hooks
   * outlive this process (it exits right after), so they are started detached and not waited for.
   */
  waiting(pending: { id: string; tool: string; kind: string } | null, output: 'inherit' | 'ignore'): boolean {
    const hooks = this.notificationHooks('waiting_for_input');
    if (hooks.length === 0) return false;
    const { conversationId, workspaceRoot } = this.options;
    const message = pending
      ? `jp is waiting for you: ${pending.tool} (${pending.kind}) needs an answer; resume with jp query --continue ` +
        `--id=${conversationId}`
      : `jp is waiting for you; resume with jp query --continue --id=${conversationId}`;
    const input = this.input(
      'Notification',
      { message, notification_type: 'waiting_for_input' },
      pending ? { tool: pending.tool, inquiry_kind: pending.kind, inquiry_id: pending.id } : {},
    );
    for (const hook of hooks) {
      spawnWaitingNotification(hook.command, input, {
        environment: {
          ...this.environment(),
          JP_TOOL_NAME: pending?.tool ?? '',
          JP_INQUIRY_KIND: pending?.kind ?? '',
          JP_INQUIRY_ID: pending?.id ?? '',
          JP_WORKSPACE_ROOT: workspaceRoot,
          JP_RESUME_COMMAND: `jp query --continue --id=${conversationId}`,
        },
        cwd: workspaceRoot,
        output,
      });
    }
    return true;
  }
}

function answerOf(hook: string, inquiry: Inquiry, behavior: 'allow' | 'deny', message: string | undefined): HookAnswer {
  const yes = inquiry.kind === 'deliver_tool_result' ? 'deliver' : 'run';
  return { hook, answer: behavior === 'allow' ? yes : 'skip', ...(message ? { message: bounded(message) } : {}) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
