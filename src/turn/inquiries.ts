/**
 * Settles inquiries. Every inquiry is persisted before anyone is asked, routed through route(), and
 * its answer persisted with who gave it. A human is asked only through the prompting client; with
 * none, the detached policy decides, and every decision not made by a human is explained in plain
 * words naming the config key that would change it.
 */
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import { canonicalJson, type PlacedSeal } from '../conversation/seal.ts';
import { now } from '../conversation/events.ts';
import type { LoadedConfig } from '../config/load.ts';
import { questionConfigOf, resolveDetachedPolicy, type BuiltinDetachedDefault } from '../config/policy.ts';
import { encodeAnswer, parseQuestionAnswer, type AnswerOf, type InquiryAnswer } from '../inquiry/answer.ts';
import { fieldsWithoutDefault } from '../inquiry/form.ts';
import { route } from '../inquiry/route.ts';
import {
  policyKindOf,
  type AnsweredBy,
  type Inquiry,
  type InquiryOf,
  type JsonValue,
  type PromptAction,
  type Question,
} from '../inquiry/types.ts';
import {
  deliverRules,
  escalateRules,
  inapplicable,
  questionRules,
  runRules,
  type AnswerRules,
} from './answer-rules.ts';
import { changedInputAllowed, firstAnswer, HookAsk, hookReason } from './hook-answers.ts';
import { failureReason, policySentence, settingOf } from './policy-words.ts';
import type { HookAnswer } from './hook-port.ts';
import { type ClientAnswer, StopRequest, type TurnHost } from './host.ts';

export interface RecordedInquiry {
  request: EventOf<'inquiry_request'>;
  response: EventOf<'inquiry_response'> | undefined;
}

export type Resolution<A extends InquiryAnswer = InquiryAnswer> =
  | {
      kind: 'answered';
      id: string;
      answer: A;
      by: AnsweredBy;
      action: PromptAction | undefined;
      reason: string | undefined;
    }
  | { kind: 'deferred'; id: string };

export interface ResolverContext {
  host: TurnHost;
  config: LoadedConfig;
  builtinDetached: () => BuiltinDetachedDefault;
  signal: AbortSignal;
  conversationId: string;
  /** Tells the answers this user's jp recorded, where they are, from any other (conversation/seal.ts). */
  seal: PlacedSeal;
  /** The whole log, which grows as the turn appends: a recorded answer verifies only at its own position in it. */
  log: readonly ConversationEvent[];
  append(event: EventOf<'inquiry_request'> | EventOf<'inquiry_response'>): void;
  /** A structured LLM call answering a question; undefined when the model gave no valid answer. */
  answerWithLlm(tool: string, question: Question): Promise<JsonValue | undefined>;
  /** Runs a settlement once those before it are done: calls that run at the same time still ask one at a time. */
  oneAtATime?<T>(settle: () => Promise<T>): Promise<T>;
}

let inquirySequence = 0;

function newInquiryId(): string {
  inquirySequence++;
  return `inq-${Date.now().toString(36)}-${process.pid.toString(36)}-${inquirySequence}`;
}

/** Applies `conversation.tools.<tool>.questions.<id>` to a question a tool asked. */
export function applyQuestionConfig(
  config: LoadedConfig,
  tool: string,
  question: Question,
): {
  question: Question;
  configExclusive: boolean | undefined;
  target: 'user' | 'assistant';
  defaultProblem: string | undefined;
} {
  const entry = questionConfigOf(config, tool, question.id);
  const result: Question = { ...question };
  let defaultProblem: string | undefined;
  if (question.answer_type === 'form') {
    // A form's default is made of its fields' defaults; a scalar from config cannot stand for it.
    const missing = fieldsWithoutDefault(question.fields ?? []);
    if (missing.length > 0)
      defaultProblem =
        `the form's required field${missing.length === 1 ? '' : 's'} ` +
        `${missing.map((name) => JSON.stringify(name)).join(', ')} ${missing.length === 1 ? 'has' : 'have'} no default`;
    if (entry?.default !== undefined || entry?.default_option !== undefined) {
      defaultProblem =
        `questions.${question.id}.default and .default_option do not apply to a form; ` +
        'its default comes from its fields';
    }
    return { question: result, configExclusive: entry?.exclusive, target: entry?.target ?? 'user', defaultProblem };
  }
  if (entry?.default !== undefined) result.default = entry.default;
  if (entry?.default_option !== undefined && question.answer_type === 'select') {
    const options = question.options ?? [];
    const choice = entry.default_option;
    const picked =
      choice === 'first'
        ? options[0]
        : choice === 'last'
          ? options[options.length - 1]
          : options.find((option) => option === choice);
    if (picked !== undefined) result.default = picked;
    else {
      const listed = JSON.stringify(options);
      defaultProblem = `default_option ${JSON.stringify(choice)} matches none of the options ${listed}`;
    }
  }
  if (
    result.answer_type === 'select' &&
    result.default !== undefined &&
    !(result.options ?? []).includes(String(result.default))
  ) {
    defaultProblem ??= `the default ${JSON.stringify(result.default)} is not one of the options`;
    delete result.default;
  }
  return { question: result, configExclusive: entry?.exclusive, target: entry?.target ?? 'user', defaultProblem };
}

const maxInvalidClientAnswers = 3;

export class InquiryResolver {
  private readonly context: ResolverContext;

  constructor(context: ResolverContext) {
    this.context = context;
  }

  /** Whether the call may run (config `run` = "ask" or "edit"). */
  resolveRun(
    toolCallId: string,
    asked: InquiryOf<'run_tool'>,
    recordedEarlier?: RecordedInquiry,
  ): Promise<Resolution<AnswerOf<'run_tool'>>> {
    return this.resolveWith(toolCallId, asked, () => runRules, recordedEarlier);
  }

  /** Whether the command may run outside the sandbox. */
  resolveEscalation(
    toolCallId: string,
    asked: InquiryOf<'escalate'>,
    recordedEarlier?: RecordedInquiry,
  ): Promise<Resolution<AnswerOf<'escalate'>>> {
    return this.resolveWith(toolCallId, asked, () => escalateRules, recordedEarlier);
  }

  /** Whether the result goes to the model (config `result` = "ask" or "edit"). */
  resolveDelivery(
    toolCallId: string,
    asked: InquiryOf<'deliver_tool_result'>,
    recordedEarlier?: RecordedInquiry,
  ): Promise<Resolution<AnswerOf<'deliver_tool_result'>>> {
    return this.resolveWith(toolCallId, asked, () => deliverRules, recordedEarlier);
  }

  /** A tool's question. */
  resolveQuestion(
    toolCallId: string,
    asked: InquiryOf<'tool_question'>,
    recordedEarlier?: RecordedInquiry,
    options: { duringCall?: boolean } = {},
  ): Promise<Resolution<AnswerOf<'tool_question'>>> {
    return this.resolveWith(toolCallId, asked, questionRules, recordedEarlier, options);
  }

  /** An inquiry of any kind (one recorded in the log), settled as its kind is. */
  resolve(
    toolCallId: string,
    asked: Inquiry,
    recordedEarlier?: RecordedInquiry,
    options: { duringCall?: boolean } = {},
  ): Promise<Resolution> {
    switch (asked.kind) {
      case 'run_tool':
        return this.resolveRun(toolCallId, asked, recordedEarlier);
      case 'escalate':
        return this.resolveEscalation(toolCallId, asked, recordedEarlier);
      case 'deliver_tool_result':
        return this.resolveDelivery(toolCallId, asked, recordedEarlier);
      case 'tool_question':
        return this.resolveQuestion(toolCallId, asked, recordedEarlier, options);
    }
  }

  /**
   * The recorded answer, when it answers `inquiry` (as jp asks it now, redacted) and this user's jp
   * recorded it: the recorded inquiry is exactly this one (tool, arguments, kind...), the answer's
   * seal verifies and it reads as an answer of this kind. Anything else is asked again.
   */
  private reused<A extends InquiryAnswer>(
    inquiry: Inquiry,
    recorded: RecordedInquiry,
    rules: AnswerRules<A>,
  ): Resolution<A> | undefined {
    const response = recorded.response;
    if (!response || canonicalJson(recorded.request.inquiry) !== canonicalJson(inquiry)) return undefined;
    if (!this.context.seal.verifies(response, this.context.log)) return undefined;
    const parsed = rules.parse(response.answer, 'log');
    if (!parsed.ok) return undefined;
    return {
      kind: 'answered',
      id: response.id,
      answer: parsed.answer,
      by: response.by,
      action: response.action,
      reason: response.reason,
    };
  }

  /**
   * Settles one inquiry. `recordedEarlier` is its earlier state in the log (a resumed turn): a
   * recorded answer is reused only when it answers exactly this inquiry and this user's jp recorded
   * it (`reused`); a recorded request for this same inquiry without such an answer is asked again
   * under its id; a recorded request for another inquiry is not this one: it is asked anew.
   */
  private resolveWith<I extends Inquiry, A extends InquiryAnswer>(
    toolCallId: string,
    asked: I,
    rulesOf: (inquiry: I) => AnswerRules<A>,
    recordedEarlier: RecordedInquiry | undefined,
    options: { duringCall?: boolean } = {},
  ): Promise<Resolution<A>> {
    const settle = (): Promise<Resolution<A>> => {
      // An inquiry is made here (a tool's question may quote anything): what is logged, prompted or sent to a client
      // is redacted.
      const inquiry = this.context.host.secrets.redactValue(asked);
      return this.settle(toolCallId, inquiry, rulesOf(inquiry), recordedEarlier, options);
    };
    return this.context.oneAtATime ? this.context.oneAtATime(settle) : settle();
  }

  private async settle<A extends InquiryAnswer>(
    toolCallId: string,
    inquiry: Inquiry,
    rules: AnswerRules<A>,
    recordedEarlier: RecordedInquiry | undefined,
    options: { duringCall?: boolean },
  ): Promise<Resolution<A>> {
    const { host, config, builtinDetached } = this.context;
    const reused = recordedEarlier && this.reused(inquiry, recordedEarlier, rules);
    if (reused) return reused;
    const recorded =
      recordedEarlier && canonicalJson(recordedEarlier.request.inquiry) === canonicalJson(inquiry)
        ? recordedEarlier
        : undefined;
    const id = recorded?.request.id ?? newInquiryId();
    if (!recorded) {
      this.context.append({
        type: 'inquiry_request',
        timestamp: now(),
        id,
        tool_call_id: toolCallId,
        inquiry,
        ...(options.duringCall ? { during_call: true as const } : {}),
      });
    }

    let configExclusive: boolean | undefined;
    let defaultProblem: string | undefined;
    // Routing sees the question with the user's configured default in it (the log keeps the tool's own).
    let routed: Inquiry = inquiry;
    if (inquiry.kind === 'tool_question') {
      const applied = applyQuestionConfig(config, inquiry.tool, inquiry.question);
      configExclusive = applied.configExclusive;
      defaultProblem = applied.defaultProblem;
      routed = { ...inquiry, question: applied.question };
      if (applied.target === 'assistant') {
        return this.askAssistant(
          id,
          inquiry,
          rules,
          'LlmInquiry',
          'answered by the assistant: ' +
            `conversation.tools.${inquiry.tool}.questions.${inquiry.question.id}.target = "assistant"`,
        );
      }
    }
    let invalidAnswers = 0;
    let declined = false;
    let declinedReason: string | undefined;
    const hook = new HookAsk(host.hooks, { id, toolCallId, inquiry: routed }, this.context.signal);
    try {
      for (;;) {
        if (this.context.signal.aborted) throw this.context.signal.reason ?? new StopRequest('shutdown');
        // Resolved on every pass: a client that detaches while a prompt is open changes the built-in default.
        const policy = resolveDetachedPolicy(config, inquiry.tool, policyKindOf(inquiry.kind), builtinDetached());
        const hasClient = host.hasPromptingClient() && invalidAnswers < maxInvalidClientAnswers && !declined;
        const action = route(routed, { hasClient, policy: policy.value, configExclusive });
        // With nobody there, a PermissionRequest hook answers before the policy (DESIGN §4).
        if (action !== 'PromptClient' && hook.asks) {
          const answered = await hook.answer(policy, false);
          if (this.context.signal.aborted) throw this.context.signal.reason ?? new StopRequest('shutdown');
          const settled =
            answered && changedInputAllowed(answered, action) && this.recordHook(id, inquiry, rules, answered);
          if (settled) return settled;
          if (answered?.updatedArguments !== undefined)
            host.notice(
              'warning',
              `ignored the changed input the hook \`${answered.hook}\` gave ${inquiry.tool}: ` +
                `nobody is there to see it, and ${settingOf(policy)}`,
            );
        }
        switch (action) {
          case 'PromptClient': {
            // A client that detaches from the open prompt makes the built-in detached default `defer`.
            const ifDetached = route(routed, {
              hasClient: false,
              policy: resolveDetachedPolicy(config, inquiry.tool, policyKindOf(inquiry.kind), 'defer').value,
              configExclusive,
            });
            hook.notifyPrompt();
            const withdraw = new AbortController();
            const stopWithRun = (): void => withdraw.abort();
            this.context.signal.addEventListener('abort', stopWithRun, { once: true });
            const first = await firstAnswer(
              host.askClient(id, routed, withdraw.signal, ifDetached),
              hook.asks ? hook.answer(policy, true) : undefined,
            ).finally(() => this.context.signal.removeEventListener('abort', stopWithRun));
            let changed: JsonValue | undefined;
            let reply: ClientAnswer;
            if (first.from === 'hook') {
              // The hook answered first: the prompt is withdrawn (its client is told who answered).
              withdraw.abort();
              if (first.answer.updatedArguments === undefined || inquiry.kind !== 'run_tool') {
                const settled = this.recordHook(id, inquiry, rules, first.answer);
                if (settled) return settled;
                continue;
              }
              // A changed input runs only through a prompt that shows it: the prompt of the input the
              // model gave is closed, and the changed input is a prompt of its own.
              changed = first.answer.updatedArguments as JsonValue;
              host.notice(
                'info',
                `the hook \`${first.answer.hook}\` changed the input of ${inquiry.tool}; ` +
                  'the prompt shows the changed input',
              );
              host.inquiryResolved(id, 'hook');
              reply = await host.askClient(
                `${id}.changed`,
                { ...inquiry, arguments: changed },
                this.context.signal,
                ifDetached,
              );
            } else reply = first.reply;
            if (this.context.signal.aborted) throw this.context.signal.reason ?? new StopRequest('shutdown');
            if (!reply.answered) {
              declined = reply.declined === true;
              declinedReason = reply.reason;
              continue;
            }
            let parsed = rules.parse(reply.answer, 'client');
            // A yes to the changed input runs the changed input.
            if (changed !== undefined && parsed.ok && parsed.answer.decision === 'approve')
              parsed = rules.parse({ edit: changed }, 'client');
            if (!parsed.ok) {
              invalidAnswers++;
              host.notice('warning', `ignored an invalid answer to inquiry ${id}: ${parsed.error}`);
              continue;
            }
            return this.record(id, parsed.answer, 'user', undefined, undefined, undefined, reply.client);
          }
          case 'AutoApprove':
          case 'AutoDeliver': {
            if (rules.asks !== 'permission') throw inapplicable(action, inquiry);
            const reason =
              inquiry.kind === 'escalate' && inquiry.needs === 'git'
                ? "written inside .git/ without a user's approval: " +
                  `no user is available, and ${policySentence(inquiry.tool, 'escalate', policy, 'proceeded')}`
                : inquiry.kind === 'escalate'
                  ? "run outside the sandbox without a user's approval: " +
                    `no user is available, and ${policySentence(inquiry.tool, 'escalate', policy, 'proceeded')}`
                  : inquiry.kind === 'deliver_tool_result'
                    ? "result shared without a user's review: " +
                      `no user is available, and ${policySentence(inquiry.tool, 'deliver', policy, 'proceeded')}`
                    : "run without a user's approval: " +
                      `no user is available, and ${policySentence(inquiry.tool, 'run', policy, 'proceeded')}`;
            return this.record(id, rules.letThrough, 'policy', action, reason);
          }
          case 'LlmInquiry':
            if (inquiry.kind !== 'tool_question') throw inapplicable(action, inquiry);
            return this.askAssistant(
              id,
              inquiry,
              rules,
              action,
              'answered by the assistant: ' +
                `no user is available, and ${policySentence(inquiry.tool, 'tool', policy, 'proceeded')}`,
            );
          case 'UseDefault': {
            const question = routed.kind === 'tool_question' ? routed.question : undefined;
            if (rules.asks !== 'question' || question?.default === undefined) throw inapplicable(action, inquiry);
            return this.record(
              id,
              rules.valued(question.default),
              'policy',
              action,
              "answered with the question's default: " +
                `no user is available, and ${policySentence(inquiry.tool, 'tool', policy, 'proceeded')}`,
            );
          }
          case 'Fail': {
            const exclusive = inquiry.kind === 'tool_question' ? (configExclusive ?? inquiry.question.exclusive) : true;
            const reason = failureReason(inquiry, policy, {
              exclusive,
              ...(defaultProblem ? { defaultProblem } : {}),
              ...(declinedReason ? { clientCannotAsk: declinedReason } : {}),
            });
            return this.record(id, rules.refusal, 'policy', action, reason);
          }
          case 'Defer':
            return { kind: 'deferred', id };
        }
      }
    } finally {
      hook.withdraw();
    }
  }

  /**
   * A PermissionRequest hook's answer, read as a client's is; undefined (and said) when it answers nothing of this
   * kind.
   */
  private recordHook<A extends InquiryAnswer>(
    id: string,
    inquiry: Inquiry,
    rules: AnswerRules<A>,
    answered: HookAnswer,
  ): Resolution<A> | undefined {
    const given =
      answered.updatedArguments === undefined ? answered.answer : { edit: answered.updatedArguments as JsonValue };
    const parsed = rules.parse(given, 'client');
    if (!parsed.ok) {
      this.context.host.notice('warning', `ignored the answer of the hook \`${answered.hook}\`: ${parsed.error}`);
      return undefined;
    }
    return this.record(id, parsed.answer, 'hook', undefined, hookReason(inquiry, answered), answered.hook);
  }

  private async askAssistant<A extends InquiryAnswer>(
    id: string,
    inquiry: InquiryOf<'tool_question'>,
    rules: AnswerRules<A>,
    action: PromptAction,
    reason: string,
  ): Promise<Resolution<A>> {
    if (rules.asks !== 'question') throw inapplicable(action, inquiry);
    const applied = applyQuestionConfig(this.context.config, inquiry.tool, inquiry.question);
    const answer = await this.context.answerWithLlm(inquiry.tool, applied.question);
    // The model's reply is checked as a client's answer is, against the question as asked with the user's config.
    if (answer === undefined || !parseQuestionAnswer(applied.question, answer, 'client').ok) {
      return this.record(
        id,
        rules.refusal,
        'policy',
        'Fail',
        `unanswered: the assistant was asked ${JSON.stringify(inquiry.question.text)} but gave no valid answer`,
      );
    }
    return this.record(id, rules.valued(answer), 'assistant', action, reason);
  }

  private record<A extends InquiryAnswer>(
    id: string,
    answer: A,
    by: AnsweredBy,
    action: PromptAction | undefined,
    reason: string | undefined,
    hook?: string,
    client?: string,
  ): Resolution<A> {
    const event: EventOf<'inquiry_response'> = {
      type: 'inquiry_response',
      timestamp: now(),
      id,
      answer: encodeAnswer(answer),
      by,
    };
    if (action) event.action = action;
    if (reason) event.reason = reason;
    if (hook !== undefined) event.hook = hook;
    if (client !== undefined) event.client = client;
    this.context.append(event);
    this.context.host.inquiryResolved(id, by);
    return { kind: 'answered', id, answer, by, action, reason };
  }
}
