/**
 * The agent loop: request → stream → tool calls → inquiries → persist, until the model answers
 * without tool calls. It talks to the outside only through TurnHost (events out, inquiries out,
 * answers in); it never touches a terminal. Every event is persisted as it happens; streamed text
 * is persisted in chunks, at every paragraph and before any tool call.
 */
import type { ConversationEvent, EventOf, InstructionFileRecord } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import type { LogSeal } from '../conversation/seal.ts';
import { findIncompleteTurn } from '../conversation/turn-state.ts';
import type { LoadedConfig } from '../config/load.ts';
import type { BuiltinDetachedDefault } from '../config/policy.ts';
import { JpError, ProviderError, RunError, toJpError, UsageError } from '../errors.ts';
import { contentFromModel, formContentSchema } from '../inquiry/form.ts';
import type { JsonValue, Question } from '../inquiry/types.ts';
import {
  addUsage,
  stepOutputLimit,
  type ChatModel,
  type FinishReason,
  type PromptMessage,
  type ProviderMetadata,
  type Source,
  type StreamPart,
  type ToolSpec,
  type Usage,
} from '../llm/types.ts';
import type { ContextWindow } from '../llm/context-window.ts';
import { statedContextLimit } from '../llm/provider-errors.ts';
import { redactValue, StreamRedactor } from '../redact.ts';
import type { Tool } from '../tools/tool.ts';
import { compactHistory } from './compact.ts';
import { defaultThreshold, estimateRequest } from './compaction.ts';
import { buildPrompt } from './history.ts';
import { StopRequest, type TurnHost } from './host.ts';
import { InquiryResolver, type ResolverContext } from './inquiries.ts';
import { processToolCall, type CallOutcome, type ToolCallContext } from './tool-calls.ts';
import { unknownOutcome } from './tool-call-replay.ts';
import { resolveResultMode, resolveRunMode } from '../config/policy.ts';
import type { CommandSandbox } from '../sandbox/engine.ts';

export interface TurnOptions {
  host: TurnHost;
  /** The whole log as it is on disk now; the engine appends to it as it persists. */
  events: ConversationEvent[];
  conversationId: string;
  model: ChatModel;
  tools: Map<string, Tool>;
  config: LoadedConfig;
  /** Seals what carries settings or consent as it is recorded, and tells it from what this user's jp did not record. */
  seal: LogSeal;
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
  /** Aborted to stop the run; its reason is a StopRequest. */
  signal: AbortSignal;
  /** A new user message starts a new turn; undefined with `resume`. */
  message: string | undefined;
  /** Continue the incomplete turn of the conversation. */
  resume: boolean;
  /** With `resume`: the user interrupted to say this; unfinished tool calls are closed first. */
  reply?: string;
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
}

type FinishPart = Extract<StreamPart, { type: 'finish' }>;

/** A request refused as longer than the context window, before anything of its response arrived. */
class ContextLengthRefusal extends Error {
  constructor(readonly error: JpError) {
    super(error.message);
  }
}

/** Streamed text is persisted at a paragraph break, or once this many characters are pending. */
const flushThreshold = 1000;

export class TurnRun {
  private readonly options: TurnOptions;
  private readonly events: ConversationEvent[];
  private usage: Usage | null = null;
  private iterations = 0;
  private turnStart = -1;
  private pendingMessage = '';
  private pendingReasoning = '';
  /** The step being streamed has shown something (text, reasoning, a provider's tool). */
  private stepShown = false;
  /**
   * The step's streamed text is redacted as it arrives, so what clients see streaming is exactly
   * what is persisted; a secret split across pieces is caught (src/redact.ts).
   */
  private streamed = { message: new StreamRedactor(), reasoning: new StreamRedactor() };
  private stepSources: Source[] = [];
  private finishReason: FinishReason | null = null;
  private readonly warnings: { code: string; message: string }[] = [];
  private readonly unsentDeltas: { kind: 'message' | 'reasoning'; text: string }[] = [];
  private deltaTurnScheduled = false;
  private readonly toolSpecs: ToolSpec[];
  /** The assumed context window of a model jp does not know is said once a run. */
  private windowNoticeSaid = false;
  private readonly toolContext: ToolCallContext;
  private readonly resolverContext: ResolverContext;
  private settling: Promise<unknown> = Promise.resolve();

  constructor(options: TurnOptions) {
    this.options = options;
    this.events = options.events;
    // In a fixed order (by name), whatever order MCP servers started in: part of the cached prefix.
    this.toolSpecs = [...options.tools.values()]
      .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.resolverContext = {
      conversationId: options.conversationId,
      seal: options.seal,
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
    };
  }

  /**
   * Every event of a turn is made here: it is redacted (src/redact.ts) before it is persisted, sent
   * to clients, or kept for the next request to the model, so all of them hold the same text.
   * Returns the event as kept.
   */
  private append<E extends ConversationEvent>(made: E): E {
    this.sendDeltas();
    // Sealed as recorded (conversation/seal.ts): what carries consent is provably this user's jp's.
    const event = this.options.seal.seal(this.options.conversationId, redactValue(made), this.events);
    this.options.host.append(event);
    this.events.push(event);
    return event;
  }

  /**
   * Streamed pieces go to the host together, once per event-loop turn: a provider's burst of
   * one-token events becomes one delta, and a slow stream loses nothing (the turn ends at once).
   * Anything persisted or said sends them first, so order is kept.
   */
  private streamDelta(kind: 'message' | 'reasoning', text: string): void {
    const last = this.unsentDeltas[this.unsentDeltas.length - 1];
    if (last && last.kind === kind) last.text += text;
    else this.unsentDeltas.push({ kind, text });
    if (this.deltaTurnScheduled) return;
    this.deltaTurnScheduled = true;
    setImmediate(() => {
      this.deltaTurnScheduled = false;
      this.sendDeltas();
    });
  }

  private sendDeltas(): void {
    if (this.unsentDeltas.length === 0) return;
    for (const piece of this.unsentDeltas.splice(0)) this.options.host.delta(piece);
  }

  private turnEvents(): ConversationEvent[] {
    return this.events.slice(this.turnStart);
  }

  async run(): Promise<TurnOutcome> {
    let pendingCalls: EventOf<'tool_call_request'>[] = [];
    if (this.options.resume) {
      const incomplete = findIncompleteTurn(this.events);
      if (!incomplete) {
        throw new UsageError('nothing_to_continue', `conversation ${this.options.conversationId} has no incomplete turn to continue`, {
          hint: 'Send a new message instead: jp query "..."',
        });
      }
      this.turnStart = incomplete.turn.start;
      pendingCalls = this.ownCalls(incomplete.pendingToolCalls);
      // A conversation from before system prompts were recorded gets one; any other keeps its own.
      if (!recordedSystemPrompt(this.events)) this.recordSystemPrompt();
      this.rememberDecisions();
      if (this.options.reply !== undefined) {
        this.closeForReply(incomplete.pendingInquiries, pendingCalls);
        pendingCalls = [];
        this.append({ type: 'chat_request', timestamp: now(), content: this.options.reply });
      }
    } else {
      this.turnStart = this.events.length;
      this.append({ type: 'turn_start', timestamp: now() });
      this.recordSystemPrompt();
      this.append({ type: 'chat_request', timestamp: now(), content: this.options.message ?? '' });
    }
    try {
      if (pendingCalls.length > 0 && (await this.processToolCalls(pendingCalls)) === 'deferred') return this.finish('deferred');
      for (;;) {
        this.checkBudgets();
        const { calls, finish } = await this.requestStep();
        if (finish.reason === 'content-filter') throw this.refusal(finish);
        if (calls.length === 0) {
          if (finish.reason === 'length') this.warnCutAtLimit(finish);
          this.append({ type: 'turn_end', timestamp: now(), status: 'completed', finish_reason: finish.reason });
          return this.finish('completed');
        }
        if ((await this.processToolCalls(calls)) === 'deferred') return this.finish('deferred');
      }
    } catch (error) {
      this.flushPending(this.stepShown);
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
      this.append({
        type: 'turn_end',
        timestamp: now(),
        status: 'error',
        error: { code: jpError.code, message: jpError.message },
        exit_code: jpError.exitCode,
        ...(jpError.code === 'refused' ? { finish_reason: 'content-filter' as const } : {}),
      });
      return { ...this.finish('error'), error: jpError };
    }
  }

  /**
   * The budgets of this run of the turn, checked at each step boundary (before a request): LLM round
   * trips (--max-turns) and input + output tokens (--max-tokens). Reaching one ends the turn like an
   * error that `jp query --continue` resumes; the figures are in the message and the result's usage.
   */
  private checkBudgets(): void {
    const { maxTurns, maxTokens } = this.options;
    if (this.iterations >= maxTurns) {
      throw new RunError('max_turns_exceeded', `stopped after ${this.iterations} LLM round trips (assistant.max_turns = ${maxTurns})`, {
        hint: 'Continue with `jp query --continue`, or raise the cap with --max-turns.',
      });
    }
    const used = (this.usage?.input_tokens ?? 0) + (this.usage?.output_tokens ?? 0);
    if (maxTokens !== undefined && used >= maxTokens) {
      throw new RunError('budget_exceeded', `stopped after ${used} tokens (input + output) of a budget of ${maxTokens} (assistant.budget.tokens), in ${this.iterations} LLM round trips`, {
        hint: 'Continue with `jp query --continue`, or raise the budget with --max-tokens.',
      });
    }
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
    };
  }

  /** A refusal or content filter ends the turn (exit 1) with the provider's reason; the text so far stays. */
  private refusal(finish: FinishPart): JpError {
    const reason = finish.providerReason ?? finish.reason;
    return new ProviderError('refused', `${this.options.model.id}: the model refused to answer (${reason})${finish.detail ? `: ${finish.detail}` : ''}`, {
      hint: 'Rephrase the request, or ask another model with -m.',
    });
  }

  /** How a call's commands will be confined, for its header: undefined for a tool that starts none. */
  private sandboxOfCall(name: string, argumentsValue: unknown): string | undefined {
    const tool = this.options.tools.get(name);
    if (!tool?.confined) return undefined;
    const description = this.options.sandbox.confined.description;
    if (description !== 'off' && tool.escalation?.(argumentsValue)) return `${description}; asks to run outside it`;
    return description;
  }

  private warnCutAtLimit(finish: FinishPart): void {
    const limit = this.options.maxOutputTokens;
    const message =
      finish.providerReason === stepOutputLimit.reason
        ? `the answer was cut at jp's limit of one response (${stepOutputLimit.bytes / 1024 / 1024} MiB or ${stepOutputLimit.pieces} streamed pieces): the provider kept streaming`
        : `the answer was cut at the model's output limit${limit ? ` (${limit} tokens)` : ''}; raise \`assistant.max_output_tokens\``;
    this.warnings.push({ code: 'output_limit', message });
    this.sendDeltas();
    this.options.host.notice('warning', message);
  }

  /** The user interrupted to reply: what was waiting is settled as not done, in words the model can use. */
  private closeForReply(inquiries: EventOf<'inquiry_request'>[], calls: EventOf<'tool_call_request'>[]): void {
    for (const inquiry of inquiries) {
      this.append({ type: 'inquiry_response', timestamp: now(), id: inquiry.id, answer: null, by: 'user', reason: 'the user interrupted the turn to reply' });
    }
    const started = new Set(this.turnEvents().flatMap((event) => (event.type === 'tool_call_start' ? [event.id] : [])));
    for (const call of calls) {
      const unknown = started.has(call.id) && (this.options.tools.get(call.name)?.sideEffects ?? true);
      if (unknown) this.append(unknownOutcome(call.id, 'interrupted'));
      else this.append({ type: 'tool_call_response', timestamp: now(), id: call.id, content: 'Not run: the user interrupted the turn to reply.', is_error: true, outcome: 'skipped' });
    }
  }

  /**
   * The pending calls this user's jp recorded (conversation/seal.ts); any other (a copied, committed
   * or edited log) is answered "not run" and never runs: such a conversation goes on only as new turns.
   */
  private ownCalls(calls: EventOf<'tool_call_request'>[]): EventOf<'tool_call_request'>[] {
    const own = calls.filter((call) => this.options.seal.verifies(this.options.conversationId, call, []));
    for (const call of calls) {
      if (own.includes(call)) continue;
      this.append({
        type: 'tool_call_response',
        timestamp: now(),
        id: call.id,
        content: 'Not run: this call is in the conversation log, but your jp did not record it (the log was copied, committed or edited). Ask for it again if it is needed.',
        is_error: true,
        outcome: 'skipped',
      });
    }
    if (own.length < calls.length) {
      this.options.host.notice('warning', `did not run ${calls.length - own.length === 1 ? 'a tool call' : `${calls.length - own.length} tool calls`} of conversation ${this.options.conversationId} that your jp did not record (a copied, committed or edited log)`);
    }
    return own;
  }

  /** Y and N answers given earlier in this turn (possibly by an earlier process) still hold, when this user's jp recorded them. */
  private rememberDecisions(): void {
    const runInquiries = new Map<string, string>();
    const turnEvents = this.turnEvents();
    for (const event of turnEvents) {
      if (event.type === 'inquiry_request' && event.inquiry.kind === 'run_tool') runInquiries.set(event.id, event.inquiry.tool);
      if (event.type === 'inquiry_response' && runInquiries.has(event.id) && this.options.seal.verifies(this.options.conversationId, event, turnEvents)) {
        const tool = runInquiries.get(event.id)!;
        if (event.answer === 'run_always') this.toolContext.remembered.set(tool, 'run');
        if (event.answer === 'skip_always') this.toolContext.remembered.set(tool, 'skip');
      }
    }
  }

  /**
   * Processes a batch; a deferred call does not stop the others. Consecutive calls that only read
   * and run unattended run at the same time (DESIGN §9); their events still reach the log in call
   * order: the first unfinished call's events as they happen, the others' once those before them
   * are done. Whatever they ask is settled one question at a time.
   */
  private async processToolCalls(calls: EventOf<'tool_call_request'>[]): Promise<'done' | 'deferred'> {
    let deferred = false;
    for (let index = 0; index < calls.length; ) {
      let end = index;
      while (end < calls.length && this.runsAlongside(calls[end]!)) end++;
      const group = end - index >= 2 ? calls.slice(index, end) : [calls[index]!];
      const outcomes = group.length > 1 ? await this.processTogether(group) : [await processToolCall(this.toolContext, group[0]!, this.turnEvents())];
      if (outcomes.some((outcome) => outcome.kind === 'deferred')) deferred = true;
      index += group.length;
    }
    return deferred ? 'deferred' : 'done';
  }

  /** A call that may run alongside others: a read-only tool that runs and delivers unattended, not begun before. */
  private runsAlongside(call: EventOf<'tool_call_request'>): boolean {
    const tool = this.options.tools.get(call.name);
    if (!tool?.readOnly || this.toolContext.remembered.get(tool.name) === 'skip') return false;
    if (resolveRunMode(this.options.config, tool.name, tool.defaultRunMode).value !== 'unattended') return false;
    if (resolveResultMode(this.options.config, tool.name).value !== 'unattended') return false;
    return !this.turnEvents().some(
      (event) => (event.type === 'tool_call_start' && event.id === call.id) || (event.type === 'inquiry_request' && event.tool_call_id === call.id),
    );
  }

  private async processTogether(group: EventOf<'tool_call_request'>[]): Promise<CallOutcome[]> {
    const held: ConversationEvent[][] = group.map(() => []);
    const finished = group.map(() => false);
    let head = 0;
    const advance = (): void => {
      while (head < group.length && finished[head]) {
        head++;
        for (const event of held[head] ?? []) this.append(event);
        if (head < group.length) held[head] = [];
      }
    };
    const settled = await Promise.allSettled(
      group.map(async (call, position) => {
        const append = (event: ConversationEvent): void => {
          if (position === head) this.append(event);
          else held[position]!.push(event);
        };
        const resolver = new InquiryResolver({ ...this.resolverContext, append });
        try {
          return await processToolCall({ ...this.toolContext, append, resolver }, call, this.turnEvents());
        } finally {
          finished[position] = true;
          advance();
        }
      }),
    );
    for (const result of settled) if (result.status === 'rejected') throw result.reason;
    return settled.map((result) => (result as PromiseFulfilledResult<CallOutcome>).value);
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
  private async requestStep(): Promise<{ calls: EventOf<'tool_call_request'>[]; finish: FinishPart }> {
    if (this.options.signal.aborted) throw this.options.signal.reason;
    const tools = this.toolSpecs.filter((spec) => this.options.tools.get(spec.name)?.available?.() !== false);
    await this.compactIfNeeded(tools);
    this.iterations++;
    try {
      return await this.streamStep(tools);
    } catch (error) {
      if (!(error instanceof ContextLengthRefusal)) throw error;
      // The provider counts differently than the estimate: compact to what it said it takes, once.
      const window = this.options.contextWindow?.tokens ?? Number.POSITIVE_INFINITY;
      const estimate = estimateRequest(this.events, buildPrompt(this.events, this.systemPromptText()), tools);
      const limit = Math.min(window, statedContextLimit(error.error) ?? Math.floor(estimate * 0.6));
      this.options.host.notice('info', `${this.options.model.id} refused the request as too long for its context window; compacting the conversation and retrying once`);
      if (!(await this.compact('context_length', limit))) throw error.error;
      try {
        return await this.streamStep(tools);
      } catch (again) {
        throw again instanceof ContextLengthRefusal ? again.error : again;
      }
    }
  }

  /** One request and its streamed response; a context-length refusal before any part is a ContextLengthRefusal. */
  private async streamStep(tools: ToolSpec[]): Promise<{ calls: EventOf<'tool_call_request'>[]; finish: FinishPart }> {
    const messages = buildPrompt(this.events, this.systemPromptText());
    const calls: EventOf<'tool_call_request'>[] = [];
    let finish: FinishPart | undefined;
    this.stepShown = false;
    this.stepSources = [];
    this.finishReason = null;
    this.streamed = { message: new StreamRedactor(), reasoning: new StreamRedactor() };
    let received = false;
    const stream = this.options.model.stream({ messages, tools, signal: this.options.signal, cacheKey: this.options.conversationId });
    const parts = (async function* (): AsyncGenerator<StreamPart> {
      try {
        for await (const part of stream) {
          received = true;
          yield part;
        }
      } catch (error) {
        if (!received && JpError.isInstance(error) && error.code === 'context_length_exceeded') throw new ContextLengthRefusal(error);
        throw error;
      }
    })();
    for await (const part of parts) {
      switch (part.type) {
        case 'text':
          this.stepShown = true;
          this.releaseText(this.streamed.message.push(part.text), '');
          break;
        case 'reasoning':
          this.stepShown = true;
          this.releaseText('', this.streamed.reasoning.push(part.text));
          break;
        case 'reasoning_end':
          this.releaseText('', this.streamed.reasoning.end());
          this.persistReasoning(this.pendingReasoning, part.metadata);
          this.pendingReasoning = '';
          break;
        case 'source':
          if (!this.stepSources.some((known) => sameSource(known, part.source))) this.stepSources.push(part.source);
          break;
        case 'provider_tool_call':
          this.stepShown = true;
          this.flushPending(false);
          this.append({ type: 'tool_call_request', timestamp: now(), id: part.id, name: part.name, arguments: part.input, provider_executed: true });
          break;
        case 'provider_tool_result':
          this.append({
            type: 'tool_call_response',
            timestamp: now(),
            id: part.id,
            content: typeof part.result === 'string' ? part.result : JSON.stringify(part.result),
            is_error: part.isError,
            outcome: part.isError ? 'error' : 'ok',
            provider_executed: true,
          });
          break;
        case 'tool_call': {
          this.flushPending(false);
          // Recorded (and shown) redacted; run with the arguments the model gave: redaction hides
          // secrets from what jp records and shows, it never rewrites what a tool is asked to do.
          const requested = parseArguments(part.input);
          const sandbox = this.sandboxOfCall(part.name, requested);
          calls.push({ ...this.append({ type: 'tool_call_request', timestamp: now(), id: part.id, name: part.name, arguments: requested, ...(sandbox ? { sandbox } : {}) }), arguments: requested });
          break;
        }
        case 'finish':
          finish = part;
          break;
      }
    }
    if (!finish) throw new RunError('internal_error', 'internal error: the model stream ended without a finish');
    this.flushPending(false, this.stepSources);
    this.stepShown = false;
    this.finishReason = finish.reason;
    this.recordUsage('step', finish.usage);
    return { calls, finish };
  }

  /** A request's reported usage: added to the run's sum and persisted (per-turn and per-conversation figures). */
  private recordUsage(purpose: EventOf<'usage'>['purpose'], usage: Usage | null): void {
    if (!usage) return;
    this.usage = addUsage(this.usage, usage);
    this.append({ type: 'usage', timestamp: now(), model: this.options.model.id, purpose, usage });
  }

  /** Compacts first when the next request is estimated to pass the threshold of the context window. */
  private async compactIfNeeded(tools: ToolSpec[]): Promise<void> {
    const window = this.options.contextWindow;
    if (!window) return;
    const estimate = estimateRequest(this.events, buildPrompt(this.events, this.systemPromptText()), tools);
    if (window.source === 'default' && !this.windowNoticeSaid && estimate > window.tokens / 2) {
      this.windowNoticeSaid = true;
      this.options.host.notice(
        'info',
        `the context window of ${this.options.model.id} is not known to jp; assuming ${window.tokens} tokens (set assistant.context_window to its real size)`,
      );
    }
    if (estimate <= window.tokens * (this.options.compactionThreshold ?? defaultThreshold)) return;
    await this.compact('threshold', window.tokens);
  }

  /** Compacts the history (see compact.ts), counting the summary requests' tokens as the run's. */
  private compact(reason: EventOf<'compaction'>['reason'], windowTokens: number): Promise<boolean> {
    return compactHistory(
      {
        events: this.events,
        model: this.options.model,
        conversationId: this.options.conversationId,
        signal: this.options.signal,
        append: (event) => this.append(event),
        sync: () => this.options.host.sync(),
        notice: (message) => this.options.host.notice('info', message),
        usage: (usage) => this.recordUsage('compaction', usage),
      },
      reason,
      windowTokens,
    );
  }

  /** Streamed text, redacted (see `streamed`): forwarded to clients and queued for persisting. */
  private releaseText(message: string, reasoning: string): void {
    if (message) {
      this.pendingMessage += message;
      this.streamDelta('message', message);
    }
    if (reasoning) {
      this.pendingReasoning += reasoning;
      this.streamDelta('reasoning', reasoning);
    }
    // A paragraph can only have ended where a newline arrived.
    const check = (text: string, pending: string): boolean => text !== '' && (pending.length >= flushThreshold || text.includes('\n'));
    if (check(message, this.pendingMessage) || check(reasoning, this.pendingReasoning)) this.flushAtParagraph();
  }

  private flushAtParagraph(): void {
    for (const kind of ['message', 'reasoning'] as const) {
      const pending = kind === 'message' ? this.pendingMessage : this.pendingReasoning;
      const cut = pending.length >= flushThreshold ? pending.length : pending.lastIndexOf('\n\n') + 2;
      if (cut < 2) continue;
      if (kind === 'message') this.append({ type: 'chat_response', timestamp: now(), message: pending.slice(0, cut) });
      else this.persistReasoning(pending.slice(0, cut));
      if (kind === 'message') this.pendingMessage = pending.slice(cut);
      else this.pendingReasoning = pending.slice(cut);
    }
  }

  /**
   * Persists what is pending. `incomplete` marks the step as cut off (an event is written even with
   * no pending text); `sources` go on the step's last text chunk.
   */
  private flushPending(incomplete: boolean, sources: Source[] = []): void {
    // What the redactors held back as a possible start of a secret is text like any other now.
    this.releaseText(this.streamed.message.end(), this.streamed.reasoning.end());
    if (this.pendingReasoning) this.persistReasoning(this.pendingReasoning);
    if (this.pendingMessage || incomplete || sources.length > 0) {
      this.append({
        type: 'chat_response',
        timestamp: now(),
        message: this.pendingMessage,
        ...(sources.length > 0 ? { sources } : {}),
        ...(incomplete ? { incomplete: true as const } : {}),
      });
    }
    this.pendingReasoning = '';
    this.pendingMessage = '';
  }

  private persistReasoning(text: string, metadata?: ProviderMetadata): void {
    if (text === '' && !metadata) return;
    this.append({ type: 'chat_response', timestamp: now(), reasoning: text, ...(metadata ? { provider_metadata: metadata } : {}) });
  }

  /** LlmInquiry: a structured call that answers a tool's question from the conversation so far. */
  private async answerWithLlm(tool: string, question: Question): Promise<JsonValue | undefined> {
    const history = buildPrompt(this.events, this.systemPromptText());
    // The pending step's tool calls have no results yet; providers refuse that, so leave them out.
    while (history.length > 0) {
      const last = history[history.length - 1]!;
      if (last.role === 'tool' || (last.role === 'assistant' && last.toolCalls.length > 0)) history.pop();
      else break;
    }
    const form = question.answer_type === 'form' ? (question.fields ?? []) : undefined;
    const answerSchema: Record<string, unknown> = form
      ? formContentSchema(form)
      : question.answer_type === 'boolean'
        ? { type: 'boolean' }
        : question.answer_type === 'select'
          ? { type: 'string', enum: question.options ?? [] }
          : { type: 'string' };
    const expected = form
      ? `{"answer": <an object with one entry per field, matching this JSON Schema: ${JSON.stringify(answerSchema)}>}`
      : `{"answer": <${question.answer_type === 'boolean' ? 'true or false' : 'string'}>}`;
    const messages: PromptMessage[] = [
      ...history,
      {
        role: 'user',
        content:
          `The tool "${tool}" needs an answer before it can continue, and no human is available to give it.\n` +
          `Question: ${question.text}\n` +
          (question.answer_type === 'select' ? `Choose exactly one of: ${JSON.stringify(question.options ?? [])}\n` : '') +
          `Reply with only a JSON object of the form ${expected}.`,
      },
    ];
    let text = '';
    this.iterations++;
    for await (const part of this.options.model.stream({
      messages,
      tools: [],
      signal: this.options.signal,
      cacheKey: this.options.conversationId,
      responseFormat: {
        type: 'json',
        name: 'inquiry_answer',
        schema: { type: 'object', properties: { answer: answerSchema }, required: ['answer'], additionalProperties: false },
      },
    })) {
      if (part.type === 'text') text += part.text;
      else if (part.type === 'finish') this.recordUsage('inquiry', part.usage);
    }
    try {
      const parsed = JSON.parse(text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '')) as { answer?: JsonValue };
      if (form) {
        const content = contentFromModel(parsed.answer);
        return content ? { action: 'accept', content } : undefined;
      }
      return parsed.answer ?? undefined;
    } catch {
      return undefined;
    }
  }
}

function sameSource(a: Source, b: Source): boolean {
  return a.url !== undefined ? a.url === b.url : a.title === b.title && a.filename === b.filename;
}

function parseArguments(input: string): unknown {
  try {
    return JSON.parse(input === '' ? '{}' : input);
  } catch {
    return input;
  }
}
