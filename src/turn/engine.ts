/**
 * The agent loop: request → stream → tool calls → inquiries → persist, until the model answers
 * without tool calls. It talks to the outside only through TurnHost (events out, inquiries out,
 * answers in); it never touches a terminal. Every event is made and persisted here (append), as it
 * happens. Its parts: a step's request and stream (step-stream.ts) and text (step-text.ts), the
 * deltas to clients (delta-queue.ts), the context window (context-guard.ts), a step's tool calls
 * (tool-batch.ts), a resumed turn's start (resumed-turn.ts), limits (limits.ts), LlmInquiry
 * (llm-answer.ts).
 */
import type {
  ConversationEvent,
  EventOf,
  ImageAttachment,
  InstructionFileRecord,
  TurnTools,
} from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import type { PlacedSeal } from '../conversation/seal.ts';
import { turnToResume } from '../conversation/turn-state.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { BuiltinDetachedDefault } from '../config/policy.ts';
import { type JpError, RunError, toJpError } from '../errors.ts';
import type { JsonValue, Question } from '../inquiry/types.ts';
import { addUsage, type ChatModel, type FinishReason, type ToolSpec, type Usage } from '../llm/types.ts';
import type { ContextWindow } from '../llm/context-window.ts';
import type { Tool } from '../tools/tool.ts';
import { requestCharacters } from './compaction.ts';
import { ContextGuard } from './context-guard.ts';
import { DeltaQueue } from './delta-queue.ts';
import { buildPrompt } from './history.ts';
import type { HookNote } from './hook-port.ts';
import { StopRequest, type TurnHost } from './host.ts';
import type { ApprovalStore } from './lasting-approvals.ts';
import { InquiryResolver, type ResolverContext } from './inquiries.ts';
import { AnswerWarnings } from './answer-warnings.ts';
import { budgetReached, refusal } from './limits.ts';
import { answerWithLlm } from './llm-answer.ts';
import { closeForReply, ownCalls, rememberedDecisions, type ResumedTurnContext } from './resumed-turn.ts';
import { StepText } from './step-text.ts';
import { streamStep, type StepResult } from './step-stream.ts';
import { processToolCalls } from './tool-batch.ts';
import type { ToolCallContext } from './tool-calls.ts';
import type { CommandSandbox } from '../sandbox/engine.ts';
import type { CheckpointRecorder } from '../checkpoint/recorder.ts';

export interface TurnOptions {
  host: TurnHost;
  /** The user's lasting approvals in this workspace (lasting-approvals.ts). */
  approvals?: ApprovalStore;
  /** The whole log as it is on disk now; the engine appends to it as it persists. */
  events: ConversationEvent[];
  conversationId: string;
  model: ChatModel;
  tools: Map<string, Tool>;
  /** The tools a new turn is started with, as the command line chose them: recorded on its turn_start. */
  turnTools?: TurnTools;
  config: LoadedConfig;
  /** Seals what carries settings or consent as it is recorded, and tells it from what this user's jp did not record. */
  seal: PlacedSeal;
  /** The built-in detached policy, read at each inquiry: it changes when a client detaches. */
  builtinDetached: () => BuiltinDetachedDefault;
  toolRoot: string;
  /** The environment of a tool's subprocesses: jp's own without the provider keys (tools/environment.ts). */
  toolEnvironment(tool: string): NodeJS.ProcessEnv;
  /** The sandbox of the commands tools start (DESIGN §10), and the one an approved escalation uses. */
  sandbox: { confined: CommandSandbox; unconfined: CommandSandbox };
  maxTurns: number;
  /** `--max-tokens` / `assistant.budget.tokens`: input + output tokens this run of the turn may use. */
  maxTokens?: number;
  /** The model's context window; undefined: never compact before a request (the test provider). */
  contextWindow?: ContextWindow;
  /** Share of the window a request may reach before older turns are summarised (assistant.compaction.threshold). */
  compactionThreshold?: number;
  /**
   * The system message for a new turn (src/turn/system-prompt.ts), recorded when it differs from
   * the last one the log holds; a resumed turn keeps the one recorded.
   */
  systemPrompt: SystemPromptRecord;
  /** Records the workspace's state around each tool batch that can change it (DESIGN §10); none: no checkpoints. */
  checkpoints?: CheckpointRecorder;
  /** Aborted to stop the run; its reason is a StopRequest. */
  signal: AbortSignal;
  /** A new user message starts a new turn; undefined with `resume`. */
  message: string | undefined;
  /** Continue the incomplete turn of the conversation. */
  resume: boolean;
  /** With `resume`: the user interrupted to say this; unfinished tool calls are closed first. */
  reply?: string;
  /** What the user's UserPromptSubmit hooks added to the message or the reply, for the model. */
  context?: string;
  /** Images attached to the message or the reply. */
  images?: ImageAttachment[];
  /** `assistant.max_output_tokens`, named in the warning when an answer is cut at the limit. */
  maxOutputTokens?: number;
}

export interface SystemPromptRecord {
  text: string;
  files: InstructionFileRecord[];
}

/** The system message the log says the model is told now: the last one recorded. */
export function recordedSystemPrompt(events: readonly ConversationEvent[]): EventOf<'system_prompt'> | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.type === 'system_prompt') return event;
  }
  return undefined;
}

export type TurnStatus = 'completed' | 'deferred' | 'interrupted' | 'error';

export interface TurnOutcome {
  status: TurnStatus;
  error?: JpError;
  stop?: StopRequest;
  /** LLM requests made by this run. */
  iterations: number;
  /** Summed over the run's LLM requests that reported usage; null when none did. */
  usage: Usage | null;
  /** Index in the log of the turn's turn_start. */
  turnStart: number;
  /** Why the model's last response ended, when it ended with the provider's finish. */
  finishReason?: FinishReason | null;
  /** Things the result should say although the turn went on (an answer cut at the output limit). */
  warnings?: { code: string; message: string }[];
  /** The model the provider said answered the last response, when it said. */
  responseModel?: string;
}

export class TurnRun {
  private readonly options: TurnOptions;
  private readonly events: ConversationEvent[];
  private usage: Usage | null = null;
  private iterations = 0;
  private turnStart = -1;
  /** The text of the step being streamed, or of the last one (step-text.ts). */
  private stepText: StepText | undefined;
  private finishReason: FinishReason | null = null;
  private readonly answerWarnings: AnswerWarnings;
  /** Where the step being streamed, or the last one, starts in the log. */
  private stepStart = 0;
  private readonly warnings: { code: string; message: string }[] = [];
  private readonly deltas: DeltaQueue;
  private readonly toolSpecs: ToolSpec[];
  private readonly contextGuard: ContextGuard;
  private readonly toolContext: ToolCallContext;
  private readonly resolverContext: ResolverContext;
  private settling: Promise<unknown> = Promise.resolve();

  constructor(options: TurnOptions) {
    this.options = options;
    this.events = options.events;
    this.deltas = new DeltaQueue((piece) => options.host.delta(piece));
    this.answerWarnings = new AnswerWarnings({
      warnings: this.warnings,
      say: (message) => {
        this.deltas.send();
        options.host.notice('warning', message);
      },
      modelId: options.model.id,
      conversationId: options.conversationId,
      maxOutputTokens: options.maxOutputTokens,
      window: options.contextWindow,
    });
    // In a fixed order (by name), whatever order MCP servers started in: part of the cached prefix.
    this.toolSpecs = [...options.tools.values()]
      .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.resolverContext = {
      conversationId: options.conversationId,
      seal: options.seal,
      log: this.events,
      host: options.host,
      config: options.config,
      builtinDetached: options.builtinDetached,
      signal: options.signal,
      append: (event) => this.append(event),
      answerWithLlm: (tool, question) => this.answerWithLlm(tool, question),
      oneAtATime: (settle) => this.oneAtATime(settle),
    };
    const resolver = new InquiryResolver(this.resolverContext);
    this.toolContext = {
      host: options.host,
      config: options.config,
      tools: options.tools,
      resolver,
      toolRoot: options.toolRoot,
      toolEnvironment: (tool) => options.toolEnvironment(tool),
      sandbox: options.sandbox.confined,
      unconfined: options.sandbox.unconfined,
      warn: (code, message) => {
        this.warnings.push({ code, message });
        options.host.notice('warning', message);
      },
      conversationId: options.conversationId,
      signal: options.signal,
      append: (event) => this.append(event),
      remembered: new Map(),
      ...(options.approvals ? { approvals: options.approvals } : {}),
    };
    this.contextGuard = new ContextGuard({
      compaction: {
        events: this.events,
        model: options.model,
        conversationId: options.conversationId,
        signal: options.signal,
        append: (event) => this.append(event),
        sync: () => options.host.sync(),
        notice: (message) => options.host.notice('info', message),
        activity: (text) => options.host.activity(text),
        usage: (usage) => this.recordUsage('compaction', usage),
        ...(options.host.hooks ? { beforeCompact: () => options.host.hooks!.compacting('auto', options.signal) } : {}),
      },
      window: options.contextWindow,
      threshold: options.compactionThreshold,
      prompt: () => buildPrompt(this.events, this.systemPromptText()),
    });
  }

  /**
   * Every event of a turn is made here: it is redacted (src/redact.ts) before it is persisted, sent
   * to clients, or kept for the next request to the model, so all of them hold the same text.
   * Returns the event as kept.
   */
  private append<E extends ConversationEvent>(made: E): E {
    this.deltas.send();
    // Sealed as recorded (conversation/seal.ts): what carries consent is provably this user's jp's.
    const event = this.options.seal.seal(this.options.host.secrets.redactValue(made), this.events);
    this.options.host.append(event);
    this.events.push(event);
    return event;
  }

  private turnEvents(): ConversationEvent[] {
    return this.events.slice(this.turnStart);
  }

  async run(): Promise<TurnOutcome> {
    let pendingCalls: EventOf<'tool_call_request'>[] = [];
    if (this.options.resume) {
      const incomplete = turnToResume(this.options.conversationId, this.events, false);
      this.turnStart = incomplete.turn.start;
      pendingCalls = ownCalls(this.resumedTurn(), incomplete.pendingToolCalls);
      // A conversation from before system prompts were recorded gets one; any other keeps its own.
      if (!recordedSystemPrompt(this.events)) this.recordSystemPrompt();
      for (const [tool, decision] of rememberedDecisions(this.resumedTurn(), this.turnEvents()))
        this.toolContext.remembered.set(tool, decision);
      if (this.options.reply !== undefined) {
        closeForReply(this.resumedTurn(), this.turnEvents(), incomplete.pendingInquiries, pendingCalls);
        pendingCalls = [];
        this.append({
          type: 'chat_request',
          timestamp: now(),
          content: this.options.reply,
          ...this.contextField(),
          ...this.imagesField(),
        });
      }
    } else {
      this.turnStart = this.events.length;
      this.append({
        type: 'turn_start',
        timestamp: now(),
        ...(this.options.turnTools ? { tools: this.options.turnTools } : {}),
      });
      this.recordSystemPrompt();
      this.append({
        type: 'chat_request',
        timestamp: now(),
        content: this.options.message ?? '',
        ...this.contextField(),
        ...this.imagesField(),
      });
    }
    try {
      if (pendingCalls.length > 0 && (await this.processToolCalls(pendingCalls)) === 'deferred')
        return this.finish('deferred');
      for (;;) {
        this.checkBudgets();
        const { calls, finish } = await this.requestStep();
        if (finish.reason === 'content-filter') throw refusal(this.options.model.id, finish);
        if (calls.length === 0) {
          if (await this.stopHookGoesOn()) continue;
          if (finish.reason === 'length') this.answerWarnings.cutAtLimit(finish);
          this.answerWarnings.reasoningOnly(this.events.slice(this.stepStart));
          this.append({
            type: 'turn_end',
            timestamp: now(),
            status: 'completed',
            finish_reason: finish.reason,
            ...(this.answerWarnings.responseModel ? { response_model: this.answerWarnings.responseModel } : {}),
          });
          return this.finish('completed');
        }
        if ((await this.processToolCalls(calls)) === 'deferred') return this.finish('deferred');
      }
    } catch (error) {
      this.stepText?.cut();
      const stop = this.options.signal.aborted ? (this.options.signal.reason as StopRequest) : undefined;
      if (stop instanceof StopRequest) {
        this.append({
          type: 'turn_end',
          timestamp: now(),
          status: stop.discard ? 'discarded' : 'interrupted',
          signal: stop.signal,
          exit_code: stop.exitCode,
        });
        return { ...this.finish('interrupted'), stop };
      }
      const jpError = toJpError(error);
      // A new turn that does not fit the window never reached the model: it is dropped, so that the
      // same message can be sent again with other settings (--no-tools), not resumed with these.
      const neverSent = jpError.code === 'context_window_too_small' && !this.options.resume && this.iterations === 0;
      this.append({
        type: 'turn_end',
        timestamp: now(),
        status: neverSent ? 'discarded' : 'error',
        error: { code: jpError.code, message: jpError.message },
        exit_code: jpError.exitCode,
        ...(jpError.code === 'refused' ? { finish_reason: 'content-filter' as const } : {}),
      });
      return { ...this.finish('error'), error: jpError };
    }
  }

  /**
   * The budgets of this run of the turn, checked at each step boundary (before a request). Reaching
   * one ends the turn like an error that `jp query --continue` resumes (limits.ts).
   */
  private checkBudgets(): void {
    const reached = budgetReached(this.iterations, this.usage, this.options.maxTurns, this.options.maxTokens);
    if (reached) throw reached;
    const stop = this.options.host.hooks?.stopRequested();
    if (stop) throw hookStop(stop);
  }

  private imagesField(): { images?: ImageAttachment[] } {
    return this.options.images && this.options.images.length > 0 ? { images: this.options.images } : {};
  }

  private contextField(): { context?: string } {
    return this.options.context === undefined ? {} : { context: this.options.context };
  }

  /**
   * Stop: a hook that blocks the end of the turn keeps it going, its reason the next message
   * (`stop_hook_active` tells it so the next time); max_turns still bounds the turn.
   */
  private async stopHookGoesOn(): Promise<boolean> {
    const hooks = this.options.host.hooks;
    if (!hooks) return false;
    const turn = this.turnEvents();
    const active = turn.some((event) => event.type === 'chat_request' && event.hook !== undefined);
    let lastMessage = '';
    for (const event of turn) {
      if (event.type === 'chat_response' && 'message' in event) lastMessage += event.message;
      else if (event.type === 'chat_request' || event.type === 'tool_call_response') lastMessage = '';
    }
    const note = await hooks.stopping({ lastMessage, active }, this.options.signal);
    if (!note) return false;
    this.append({ type: 'chat_request', timestamp: now(), content: note.text, hook: note.hook });
    return true;
  }

  /** Records the system message of this run unless it is the one the log already ends with. */
  private recordSystemPrompt(): void {
    const { text, files } = this.options.systemPrompt;
    const last = recordedSystemPrompt(this.events);
    if (last && last.text === text && JSON.stringify(last.files) === JSON.stringify(files)) return;
    this.append({ type: 'system_prompt', timestamp: now(), text, files });
  }

  /** What every request of this turn sends as the system message. */
  private systemPromptText(): string | undefined {
    return recordedSystemPrompt(this.events)?.text || undefined;
  }

  private finish(status: TurnStatus): TurnOutcome {
    this.options.host.sync();
    return {
      status,
      iterations: this.iterations,
      usage: this.usage,
      turnStart: this.turnStart,
      finishReason: this.finishReason,
      warnings: this.warnings,
      ...(this.answerWarnings.responseModel ? { responseModel: this.answerWarnings.responseModel } : {}),
    };
  }

  private resumedTurn(): ResumedTurnContext {
    const { conversationId, seal, host, tools } = this.options;
    return { conversationId, seal, log: this.events, host, tools, append: (event) => this.append(event) };
  }

  /** A step's tool calls (tool-batch.ts). */
  private processToolCalls(calls: EventOf<'tool_call_request'>[]): Promise<'done' | 'deferred'> {
    return processToolCalls(
      {
        calls: this.toolContext,
        inquiries: this.resolverContext,
        turnEvents: () => this.turnEvents(),
        ...(this.options.checkpoints
          ? {
              checkpoints: {
                recorder: this.options.checkpoints,
                turn: this.events.slice(0, this.turnStart + 1).filter((event) => event.type === 'turn_start').length,
              },
            }
          : {}),
      },
      calls,
    );
  }

  /** Settlements of inquiries, one after another. */
  private oneAtATime<T>(settle: () => Promise<T>): Promise<T> {
    const next = this.settling.then(settle, settle);
    this.settling = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /**
   * One LLM round trip. Returns the tool calls it asked for (already persisted) and the provider's
   * finish; a stream that ends without a finish throws (the model layer guarantees it), leaving the
   * step incomplete.
   */
  private async requestStep(): Promise<StepResult> {
    if (this.options.signal.aborted) throw this.options.signal.reason;
    const tools = this.toolSpecs.filter((spec) => this.options.tools.get(spec.name)?.available?.() !== false);
    await this.contextGuard.beforeRequest(tools);
    this.iterations++;
    return this.contextGuard.request(tools, async (likelyOverflow) => {
      this.finishReason = null;
      this.stepStart = this.events.length;
      this.stepText = new StepText(
        { show: (kind, piece) => this.deltas.push(kind, piece), persist: (event) => this.append(event) },
        this.options.host.secrets,
      );
      const { model, signal, conversationId } = this.options;
      const messages = buildPrompt(this.events, this.systemPromptText());
      const step = await streamStep({
        model,
        messages,
        tools,
        ...(likelyOverflow ? { likelyOverflow } : {}),
        signal,
        cacheKey: conversationId,
        text: this.stepText,
        append: (event) => this.append(event),
        log: this.events,
        runnable: this.options.tools,
        sandboxDescription: this.options.sandbox.confined.description,
        toolRoot: this.options.toolRoot,
      });
      this.finishReason = step.finish.reason;
      if (step.finish.model) this.answerWarnings.answeredBy(step.finish.model);
      this.recordUsage('step', step.finish.usage, requestCharacters(messages, tools));
      return step;
    });
  }

  /** A request's reported usage: added to the run's sum and persisted (per-turn and per-conversation figures). */
  private recordUsage(purpose: EventOf<'usage'>['purpose'], usage: Usage | null, requestCharacters?: number): void {
    if (!usage) return;
    this.usage = addUsage(this.usage, usage);
    this.append({
      type: 'usage',
      timestamp: now(),
      model: this.options.model.id,
      purpose,
      usage,
      ...(requestCharacters !== undefined ? { request_characters: requestCharacters } : {}),
    });
  }

  /** LlmInquiry (llm-answer.ts): counted as a round trip of the run, its usage as the run's. */
  private answerWithLlm(tool: string, question: Question): Promise<JsonValue | undefined> {
    const history = buildPrompt(this.events, this.systemPromptText());
    this.iterations++;
    const { model, signal, conversationId } = this.options;
    return answerWithLlm(
      { model, history, signal, cacheKey: conversationId, usage: (usage) => this.recordUsage('inquiry', usage) },
      tool,
      question,
    );
  }
}

/** A hook answered `continue: false`: the turn ends here, resumable with `jp query --continue`. */
function hookStop(note: HookNote): JpError {
  return new RunError('stopped_by_hook', `the hook \`${note.hook}\` stopped the turn: ${note.text}`, {
    hint: 'Resume it with `jp query --continue` once the hook lets it go on.',
  });
}
