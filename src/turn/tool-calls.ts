/**
 * One tool call, from permission to result delivery, as an explicit state (`CallState`):
 *   run permission (config `run`) → leaving the sandbox (an escalation) → execution, re-run after
 *   each question the tool asks → result delivery (config `result`) → tool_call_response.
 * On a resumed turn the same stages run against the call's recorded events (tool-call-replay.ts):
 * recorded answers are reused, a pending inquiry is asked again, a call that may have been running
 * when the process stopped is reported as "outcome unknown" when it has side effects (never
 * silently re-run).
 */
import type { ConversationEvent, EventOf, ToolOutcome } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import type { LoadedConfig } from '../config/load.ts';
import { resolveResultMode, resolveRunMode } from '../config/policy.ts';
import { holdsForTheTurn, type AnswerOf } from '../inquiry/answer.ts';
import type { AnsweredBy, InquiryOf, JsonValue, Question } from '../inquiry/types.ts';
import { notJsonMessage, type Tool, type ToolAnswer, type ToolResult } from '../tools/tool.ts';
import type { CommandSandbox } from '../sandbox/engine.ts';
import { truncateOutput } from '../tools/truncate.ts';
import type { TurnHost } from './host.ts';
import type { InquiryResolver, Resolution } from './inquiries.ts';
import { RecordedCall, unknownOutcome } from './tool-call-replay.ts';
import { ToolOutputRelay } from './tool-output.ts';
import { leavesTheSandbox, settings } from './tool-settings.ts';
import { type ApprovalStore, coveringApproval, keepApproval } from './lasting-approvals.ts';
import { escalationRefusal } from './escalation-words.ts';
import type { HookNote } from './hook-port.ts';
import { afterTool, beforeTool, withHookNotes } from './tool-hooks.ts';

export interface ToolCallContext {
  host: TurnHost;
  config: LoadedConfig;
  tools: Map<string, Tool>;
  resolver: InquiryResolver;
  toolRoot: string;
  toolEnvironment(tool: string): NodeJS.ProcessEnv;
  /** The run's command sandbox, and the one an approved escalation runs in (mode off). */
  sandbox: CommandSandbox;
  unconfined: CommandSandbox;
  /** A warning for the clients' stderr and the result's `warnings`. */
  warn(code: string, message: string): void;
  conversationId: string;
  signal: AbortSignal;
  append(event: ConversationEvent): void;
  /** Run decisions remembered for the rest of the turn (answers Y and N), by tool name. */
  remembered: Map<string, 'run' | 'skip'>;
  /** The user's lasting approvals in this workspace (lasting-approvals.ts). */
  approvals?: ApprovalStore;
  /** Called before a tool that can change anything starts (the batch's checkpoint); none: nothing to do. */
  beforeChange?(): Promise<void>;
}

export type CallOutcome = { kind: 'done' } | { kind: 'deferred'; inquiryId: string };

/**
 * Where a call is in its life. Each stage either ends the call (its response is written, or it is
 * deferred until a human answers) or hands it on: permission to run → permission to leave the
 * sandbox → execution, re-run after each question the tool asks → delivery of the result.
 */
type CallState =
  /** `ask`: a PreToolUse hook asked that a human (or with none, the policy) decide. */
  | { stage: 'permission'; arguments: unknown; ask?: boolean }
  | { stage: 'escalation'; arguments: unknown }
  | { stage: 'execution'; arguments: unknown; sandbox: CommandSandbox }
  | { stage: 'delivery'; content: string; isError: boolean }
  | { stage: 'ended'; outcome: CallOutcome };

type Ended = Extract<CallState, { stage: 'ended' }>;

/** What the stages of one call share. */
interface Call {
  context: ToolCallContext;
  id: string;
  tool: Tool;
  /** The call's recorded events when its turn is resumed (none on a new call). */
  recorded: RecordedCall;
  /** Every decision made without a human, told to the model with the result (DESIGN §4). */
  decidedWithoutHuman: string[];
  /** What the call's hooks said for the model. */
  hookNotes: HookNote[];
  outputLimit: number;
  timeoutMilliseconds: number;
}

/** Writes the call's response: the call is done. */
function ended(context: ToolCallContext, response: EventOf<'tool_call_response'>): Ended {
  context.append(response);
  return { stage: 'ended', outcome: { kind: 'done' } };
}

function respond(context: ToolCallContext, id: string, content: string, isError: boolean, outcome: ToolOutcome): Ended {
  return ended(context, { type: 'tool_call_response', timestamp: now(), id, content, is_error: isError, outcome });
}

function deferred(inquiryId: string): Ended {
  return { stage: 'ended', outcome: { kind: 'deferred', inquiryId } };
}

export async function processToolCall(
  context: ToolCallContext,
  request: EventOf<'tool_call_request'>,
  turnEvents: readonly ConversationEvent[],
): Promise<CallOutcome> {
  const tool = context.tools.get(request.name);
  if (!tool) {
    const available = [...context.tools.keys()].join(', ') || 'none';
    return respond(
      context,
      request.id,
      `Unknown tool ${JSON.stringify(request.name)}. Available tools: ${available}.`,
      true,
      'error',
    ).outcome;
  }
  const notJson = notJsonMessage(tool.name, request.arguments, tool.parameters);
  if (notJson) return respond(context, request.id, notJson, true, 'error').outcome;
  const validation = tool.validate(request.arguments);
  if (!validation.ok) return respond(context, request.id, validation.message, true, 'error').outcome;
  const call: Call = {
    context,
    id: request.id,
    tool,
    recorded: new RecordedCall(request.id, turnEvents),
    decidedWithoutHuman: [],
    hookNotes: [],
    ...settings(context.config, tool),
  };
  let state: CallState = { stage: 'permission', arguments: validation.value };
  if (!call.recorded.started()) {
    const before = await beforeTool(context.host, { id: call.id, tool, arguments: validation.value }, context.signal);
    if (before.kind === 'denied') return respond(context, call.id, before.content, true, 'denied').outcome;
    call.hookNotes.push(...before.notes);
    state = { stage: 'permission', arguments: before.arguments, ask: before.ask };
  }
  while (state.stage !== 'ended') state = await advance(call, state);
  return state.outcome;
}

function advance(call: Call, state: Exclude<CallState, { stage: 'ended' }>): Promise<CallState> {
  switch (state.stage) {
    case 'permission':
      return permission(call, state.arguments, state.ask === true);
    case 'escalation':
      return escalation(call, state.arguments);
    case 'execution':
      return execution(call, state.arguments, state.sandbox);
    case 'delivery':
      return delivery(call, state.content, state.isError);
  }
}

/** Permission to run (config `run`): asked, remembered from earlier in the turn, or decided by the config. */
async function permission(call: Call, argumentsValue: unknown, hookAsks: boolean): Promise<CallState> {
  const { context, tool } = call;
  const configured = resolveRunMode(context.config, tool.name, tool.defaultRunMode).value;
  const runMode = hookAsks && configured === 'unattended' ? 'ask' : configured;
  if (runMode === 'skip') {
    return respond(
      context,
      call.id,
      `Not run: conversation.tools.${tool.name}.run = "skip" in the configuration.`,
      true,
      'skipped',
    );
  }
  if (runMode !== 'ask' && runMode !== 'edit') return { stage: 'escalation', arguments: argumentsValue };
  const previous = call.recorded.takeInquiry('run_tool');
  const remembered = previous ? undefined : context.remembered.get(tool.name);
  if (remembered === 'skip')
    return respond(context, call.id, 'The user declined to run this tool (for the rest of this turn).', true, 'denied');
  const approved =
    !hookAsks && !previous && coveringApproval(context.approvals, context.host, tool.name, argumentsValue);
  if ((remembered === 'run' && !hookAsks) || approved) return { stage: 'escalation', arguments: argumentsValue };
  // Leaving the sandbox is asked once: the escalation (why, and the fix) is the permission to run.
  if (runMode === 'ask' && !previous && (await leavesTheSandbox(context, tool, argumentsValue)))
    return { stage: 'escalation', arguments: argumentsValue };
  const resolution = await context.resolver.resolveRun(
    call.id,
    { kind: 'run_tool', tool: tool.name, arguments: argumentsValue, ...(runMode === 'edit' ? { edit: true } : {}) },
    previous,
  );
  if (resolution.kind === 'deferred') return deferred(resolution.id);
  const answer = resolution.answer;
  switch (answer.decision) {
    case 'approve':
      if (holdsForTheTurn(answer.scope)) context.remembered.set(tool.name, 'run');
      if (resolution.by !== 'user' && resolution.reason) call.decidedWithoutHuman.push(resolution.reason);
      return { stage: 'escalation', arguments: argumentsValue };
    case 'approve_always':
      keepApproval(context.approvals, resolution.by, answer.rule, tool.name, argumentsValue);
      return { stage: 'escalation', arguments: argumentsValue };
    case 'deny':
      if (holdsForTheTurn(answer.scope)) context.remembered.set(tool.name, 'skip');
      if (resolution.by !== 'user')
        return respond(context, call.id, `Tool call denied: ${resolution.reason}.`, true, 'denied');
      return respond(context, call.id, 'The user declined to run this tool.', true, 'denied');
    case 'none':
      // Closed with no decision (the user interrupted to reply): not run.
      return respond(context, call.id, `Not run: ${resolution.reason ?? 'nobody decided'}.`, true, 'denied');
    case 'edit': {
      if (resolution.by !== 'user' && resolution.reason) call.decidedWithoutHuman.push(resolution.reason);
      const edited = tool.validate(answer.arguments);
      if (!edited.ok)
        return respond(
          context,
          call.id,
          `The user edited the arguments, but they are invalid: ${edited.message}`,
          true,
          'error',
        );
      return { stage: 'escalation', arguments: edited.value };
    }
  }
}

/**
 * Leaving the sandbox (DESIGN §10): asked by the call, or because the sandbox cannot start; and a
 * file tool's write inside `.git/` (needs `git`), whatever the sandbox.
 */
async function escalation(call: Call, argumentsValue: unknown): Promise<CallState> {
  const { context, tool } = call;
  const sandbox = context.sandbox;
  const asked = tool.escalation?.(argumentsValue, context.toolRoot);
  // Only a human (or detached.escalate set to allow it) lets a file tool write where git runs programs from.
  const gitWrite = asked?.needs === 'git';
  if (!gitWrite && (!tool.confined || sandbox.settings.mode === 'off'))
    return { stage: 'execution', arguments: argumentsValue, sandbox };
  const availability = asked ? undefined : await sandbox.availability();
  const problem = availability && !availability.ok ? availability : undefined;
  if (!asked && !problem) return { stage: 'execution', arguments: argumentsValue, sandbox };
  const inquiry: InquiryOf<'escalate'> = {
    kind: 'escalate',
    tool: tool.name,
    arguments: argumentsValue,
    needs: asked?.needs ?? 'unconfined',
    justification:
      asked?.justification ?? `the sandbox cannot start on this machine: ${problem!.cause}.\nFix: ${problem!.fix}.`,
  };
  const resolution = await context.resolver.resolveEscalation(call.id, inquiry, call.recorded.takeInquiry('escalate'));
  if (resolution.kind === 'deferred') return deferred(resolution.id);
  if (resolution.answer.decision !== 'approve') {
    if (problem)
      context.warn(
        'sandbox_unavailable',
        `${tool.name} was not run: the sandbox cannot start: ${problem.cause}. ` +
          `Fix: ${problem.fix}. (\`jp sandbox check\` says more.)`,
      );
    return respond(
      context,
      call.id,
      escalationRefusal(asked, problem, resolution, sandbox.description),
      true,
      'denied',
    );
  }
  if (resolution.by !== 'user' && resolution.reason) call.decidedWithoutHuman.push(resolution.reason);
  return { stage: 'execution', arguments: argumentsValue, sandbox: gitWrite ? sandbox : context.unconfined };
}

/**
 * Execution, re-run after each question the tool asks (its answer in `answers`). On a resumed
 * turn, each run first replays what the log recorded of it (tool-call-replay.ts).
 */
async function execution(call: Call, argumentsValue: unknown, sandbox: CommandSandbox): Promise<CallState> {
  const { context, tool } = call;
  const given: Given = {
    answers: {},
    answeredBy: {},
    askedBefore: new Map(),
    decided: call.decidedWithoutHuman,
    sandbox,
  };
  for (;;) {
    if (context.signal.aborted) throw context.signal.reason;
    const replayed = call.recorded.replayStart(tool);
    if (replayed.kind === 'unknown') return ended(context, unknownOutcome(call.id, { stopped: tool.name }));
    let result: ToolResult | { kind: 'deferred'; inquiryId: string };
    if (replayed.kind === 'result') {
      result = replayed.result;
    } else {
      for (const entry of replayed.settleFirst ?? []) {
        const inquiry = entry.request.inquiry;
        if (inquiry.kind !== 'tool_question') {
          const resolution = await context.resolver.resolve(call.id, inquiry, entry, { duringCall: true });
          if (resolution.kind === 'deferred') return deferred(resolution.id);
          continue;
        }
        const resolution = await context.resolver.resolveQuestion(call.id, inquiry, entry, { duringCall: true });
        if (resolution.kind === 'deferred') return deferred(resolution.id);
        given.askedBefore.set(inquiry.question.id, resolution);
      }
      result = await execute(call, argumentsValue, given);
    }
    if (result.kind === 'deferred') return deferred(result.inquiryId);
    if (result.kind !== 'needs_input') {
      if (replayed.kind !== 'result') {
        const output = result.kind === 'success' ? result.content : result.message;
        const notes = await afterTool(
          context.host,
          { id: call.id, tool, arguments: argumentsValue },
          { content: output, isError: result.kind === 'error' },
          context.signal,
        );
        call.hookNotes.push(...notes);
      }
      return {
        stage: 'delivery',
        content: truncateOutput(result.kind === 'success' ? result.content : result.message, call.outputLimit),
        isError: result.kind === 'error',
      };
    }
    const question = result.question;
    const resolution = await context.resolver.resolveQuestion(
      call.id,
      { kind: 'tool_question', tool: tool.name, question },
      call.recorded.takeInquiry('tool_question', question.id),
    );
    if (resolution.kind === 'deferred') return deferred(resolution.id);
    const answer = resolution.answer;
    if (answer.decision === 'none') {
      return respond(
        context,
        call.id,
        `${resolution.reason ?? 'unanswered: no user available'}. ` +
          'Choose a safe path, or report that input is required.',
        true,
        'denied',
      );
    }
    given.answers[question.id] = answer.value;
    given.answeredBy[question.id] = resolution.by;
    if (resolution.by !== 'user' && !tool.tellsWhoAnswered && resolution.reason) {
      call.decidedWithoutHuman.push(
        `the question ${JSON.stringify(question.text)} was ${resolution.reason} ` +
          `(answer: ${JSON.stringify(answer.value)})`,
      );
    }
  }
}

/** Delivery of the result to the model (config `result`), with the decisions made without a human. */
async function delivery(call: Call, output: string, isError: boolean): Promise<CallState> {
  const { context, tool } = call;
  const resultMode = resolveResultMode(context.config, tool.name).value;
  if (resultMode === 'skip') {
    return respond(
      context,
      call.id,
      `The tool ran, but its result is withheld: conversation.tools.${tool.name}.result = "skip".`,
      isError,
      isError ? 'error' : 'ok',
    );
  }
  if (resultMode === 'ask' || resultMode === 'edit') return askedDelivery(call, output, isError, resultMode === 'edit');
  return delivered(call, output, isError);
}

/** Delivery asked about (config `result` = "ask" or "edit"): sent as it is, as edited, or withheld. */
async function askedDelivery(call: Call, output: string, isError: boolean, edit: boolean): Promise<CallState> {
  const { context, tool } = call;
  const inquiry: InquiryOf<'deliver_tool_result'> = {
    kind: 'deliver_tool_result',
    tool: tool.name,
    result: output,
    ...(isError ? { is_error: true } : {}),
    ...(edit ? { edit: true } : {}),
  };
  const resolution = await context.resolver.resolveDelivery(
    call.id,
    inquiry,
    call.recorded.takeInquiry('deliver_tool_result'),
  );
  if (resolution.kind === 'deferred') return deferred(resolution.id);
  const answer = resolution.answer;
  switch (answer.decision) {
    case 'deny':
    case 'none': {
      const why =
        resolution.by !== 'user'
          ? `The tool ran, but its ${resolution.reason}.`
          : 'The tool ran, but the user chose not to share its result.';
      return respond(context, call.id, why, isError, 'denied');
    }
    case 'edit':
      return delivered(call, answer.result, isError);
    case 'deliver':
      if (resolution.by !== 'user' && resolution.reason) call.decidedWithoutHuman.push(resolution.reason);
      return delivered(call, output, isError);
  }
}

/** The result goes to the model, with what the call's hooks said and the decisions made without a human. */
function delivered(call: Call, content: string, isError: boolean): Ended {
  const told = withDecisions(withHookNotes(content, call.hookNotes), call.decidedWithoutHuman);
  return respond(call.context, call.id, told, isError, isError ? 'error' : 'ok');
}

/** The tool's output, then one line from jp per decision made without a human. */
function withDecisions(content: string, decisions: readonly string[]): string {
  if (decisions.length === 0) return content;
  const lines = decisions.map(
    (decision) => `[jp: decided without a human] ${decision.charAt(0).toUpperCase()}${decision.slice(1)}.`,
  );
  return `${content}${content.endsWith('\n') || content === '' ? '' : '\n'}\n${lines.join('\n')}`;
}

/** A question's settlement. */
type Answered = Extract<Resolution<AnswerOf<'tool_question'>>, { kind: 'answered' }>;

/** What a question asked while the tool ran came to, in the shape the tool reads. */
function toolAnswer(resolution: Answered): ToolAnswer {
  const answer = resolution.answer;
  if (answer.decision === 'none')
    return { kind: 'unanswered', reason: resolution.reason ?? 'unanswered: no user available' };
  return { kind: 'answered', answer: answer.value, by: resolution.by, reason: resolution.reason };
}

/** The line jp adds to the result for a question asked while the tool ran and settled without a human. */
function duringCallDecision(question: Question, resolution: Answered): string | undefined {
  if (resolution.by === 'user' || !resolution.reason) return undefined;
  const answer = resolution.answer;
  if (answer.decision === 'none') return `${resolution.reason}; the tool was told the user declined`;
  const value = JSON.stringify(answer.value);
  return `the question ${JSON.stringify(question.text)} was ${resolution.reason} (answer: ${value})`;
}

/** What a run of the tool is given, and the decisions it adds to. */
interface Given {
  answers: Record<string, JsonValue>;
  answeredBy: Record<string, AnsweredBy>;
  /** Questions asked while an earlier run of it went on, settled again on resume, by question id. */
  askedBefore: Map<string, Resolution<AnswerOf<'tool_question'>>>;
  /** Decisions made without a human, for the result. */
  decided: string[];
  sandbox: CommandSandbox;
}

/** One run of the tool, after its tool_call_start is recorded; its result is redacted. */
async function execute(
  call: Call,
  argumentsValue: unknown,
  given: Given,
): Promise<ToolResult | { kind: 'deferred'; inquiryId: string }> {
  const { context, tool, id: callId } = call;
  if (tool.sideEffects) await context.beforeChange?.();
  context.append({ type: 'tool_call_start', timestamp: now(), id: callId });
  let deferredInquiry: string | undefined;
  const ask = async (question: Question): Promise<ToolAnswer> => {
    if (deferredInquiry !== undefined) return { kind: 'deferred' };
    const before = given.askedBefore.get(question.id);
    const resolution =
      before ??
      (await context.resolver.resolveQuestion(callId, { kind: 'tool_question', tool: tool.name, question }, undefined, {
        duringCall: true,
      }));
    if (resolution.kind === 'deferred') {
      deferredInquiry = resolution.id;
      return { kind: 'deferred' };
    }
    const decision = duringCallDecision(question, resolution);
    if (decision) given.decided.push(decision);
    return toolAnswer(resolution);
  };
  let result: ToolResult;
  const editorFiles = context.host.editorFiles?.();
  const editorTerminal = context.host.editorTerminal?.(callId);
  const relay = new ToolOutputRelay(callId, (piece) => context.host.toolOutput(piece), context.host.secrets);
  try {
    result = await tool.execute(argumentsValue, {
      ...(editorFiles ? { editorFiles } : {}),
      ...(editorTerminal ? { editorTerminal } : {}),
      signal: context.signal,
      toolRoot: context.toolRoot,
      environment: context.toolEnvironment(tool.name),
      conversationId: context.conversationId,
      answers: { ...given.answers },
      answeredBy: { ...given.answeredBy },
      processes: context.host.processes,
      timeoutMilliseconds: call.timeoutMilliseconds,
      outputLimit: call.outputLimit,
      ask,
      progress: (message) => context.host.notice('info', `${tool.name}: ${message}`),
      output: (stream, text) => relay.write(stream, text),
      sandbox: given.sandbox,
    });
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    if (deferredInquiry !== undefined) return { kind: 'deferred', inquiryId: deferredInquiry };
    result = {
      kind: 'error',
      message: `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  relay.end();
  // Stopped while it ran: no response is written, so a resumed turn reports its outcome as unknown.
  if (context.signal.aborted) throw context.signal.reason;
  // Deferred while it ran: the call was cancelled; it runs again once a human has answered.
  if (deferredInquiry !== undefined) return { kind: 'deferred', inquiryId: deferredInquiry };
  // A tool result is made here: redacted before anything (a prompt, the log, the model) sees it.
  return context.host.secrets.redactValue(result);
}
