/**
 * An inquiry's answer, typed (DESIGN §4): one union per inquiry kind, whoever gave it (a human, a
 * policy, the assistant). Answers cross process boundaries and the log in one JSON form, which
 * scripts read (schema/event.schema.json, `inquiry_response.answer`) and old logs hold; it never
 * changes without a reader of the old form:
 * - run_tool: "run" | "run_always" | "skip" | "skip_always" | {"edit": <new arguments>}
 *   | {"approve_always": <rule>} (a rule of approval-rule.ts: run this and what it covers from now on)
 * - escalate: "run" (outside the sandbox) | "skip"
 * - deliver_tool_result: "deliver" | "skip" | {"edit": <new result text>}
 * - tool_question: the answer value (a boolean, an option, a text, or a FormAnswer)
 * - any kind, in the log only: null, settled with no decision.
 * `encodeAnswer` writes that form; `parseAnswer` reads it from outside (a client's message, the
 * log) and returns a typed answer or says what is wrong with it. Plain data, no I/O.
 *
 * A new kind of answer is a new member of its kind's union, with its JSON form in `encodeAnswer`
 * and its parser: every switch over the union then fails to compile until it handles it.
 */
import { parseApprovalRule, type ApprovalRule } from './approval-rule.ts';
import { isValidFormAnswer, type JsonValue } from './form.ts';
import type { Inquiry, InquiryKind, Question } from './types.ts';

/** How far an approval or a refusal reaches: this call, or this tool's later calls in the turn. */
export type Scope = 'once' | 'turn';

export type RunToolAnswer =
  | { decision: 'approve'; scope: Scope }
  /** Run it, and every later call `rule` covers in this workspace, without asking (approval-rule.ts). */
  | { decision: 'approve_always'; rule: ApprovalRule }
  | { decision: 'deny'; scope: Scope }
  /** Run with the arguments the human edited (still to be validated against the tool's schema). */
  | { decision: 'edit'; arguments: JsonValue };

/** Whether the command may run outside the sandbox (denied: it is not run at all). */
export type EscalateAnswer = { decision: 'approve'; scope: 'once' } | { decision: 'deny'; scope: 'once' };

export type DeliverAnswer =
  | { decision: 'deliver' }
  | { decision: 'deny'; scope: 'once' }
  /** Send this text instead of the tool's result. */
  | { decision: 'edit'; result: string };

/** A tool's question answered: a value of the question's answer type. */
export type QuestionAnswer = { decision: 'answer'; value: JsonValue };

/**
 * Settled with no decision: a question nobody could answer, or any inquiry closed because the user
 * interrupted the turn to reply. Never a client's answer; recorded as null.
 */
export type NoAnswer = { decision: 'none' };

interface AnswersByKind {
  run_tool: RunToolAnswer;
  escalate: EscalateAnswer;
  deliver_tool_result: DeliverAnswer;
  tool_question: QuestionAnswer;
}

/** What an inquiry of kind K may be settled with. */
export type AnswerOf<K extends InquiryKind> = AnswersByKind[K] | NoAnswer;

export type InquiryAnswer = AnswerOf<InquiryKind>;

/** An answer as the wire and the log carry it: what `encodeAnswer` writes and `parseAnswer` reads. */
export type EncodedAnswer = JsonValue;

/** Where an answer comes from: a client may only decide; the log may also hold "no decision" (null). */
export type AnswerSource = 'client' | 'log';

export type ParsedAnswer<A> = { ok: true; answer: A } | { ok: false; error: string };

/** Whether a decision of this scope holds for the tool's later calls in this turn. */
export function holdsForTheTurn(scope: Scope): boolean {
  switch (scope) {
    case 'once':
      return false;
    case 'turn':
      return true;
  }
}

/** The JSON word of an approval and of a refusal of this scope. */
function wordsOf(scope: Scope): { approve: string; deny: string } {
  switch (scope) {
    case 'once':
      return { approve: 'run', deny: 'skip' };
    case 'turn':
      return { approve: 'run_always', deny: 'skip_always' };
  }
}

export const approveOnce = { decision: 'approve', scope: 'once' } as const;
export const denyOnce = { decision: 'deny', scope: 'once' } as const;
export const noAnswer: NoAnswer = { decision: 'none' };

export function encodeAnswer(answer: InquiryAnswer): EncodedAnswer {
  switch (answer.decision) {
    case 'approve':
      return wordsOf(answer.scope).approve;
    case 'approve_always':
      return { approve_always: { ...answer.rule } };
    case 'deny':
      return wordsOf(answer.scope).deny;
    case 'deliver':
      return 'deliver';
    case 'edit':
      return { edit: 'arguments' in answer ? answer.arguments : answer.result };
    case 'answer':
      return answer.value;
    case 'none':
      return null;
  }
}

/** An untrusted value described for an error message: its JSON, cut short. */
function shown(value: unknown): string {
  const text = value === undefined ? 'nothing' : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function refused<A>(expected: string, value: unknown): ParsedAnswer<A> {
  return { ok: false, error: `an answer ${expected} was expected; got ${shown(value)}` };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The edited value of `{"edit": …}`, when the value has that shape. */
function editOf(value: unknown): { edited: unknown } | undefined {
  return isRecord(value) && 'edit' in value ? { edited: value.edit } : undefined;
}

/** A JSON value read from untrusted input: anything JSON.parse could have made. */
function isJsonValue(value: unknown): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  return isRecord(value) && Object.values(value).every(isJsonValue);
}

export function parseRunToolAnswer(value: unknown, from: AnswerSource): ParsedAnswer<AnswerOf<'run_tool'>> {
  if (value === null && from === 'log') return { ok: true, answer: noAnswer };
  switch (value) {
    case 'run':
      return { ok: true, answer: { decision: 'approve', scope: 'once' } };
    case 'run_always':
      return { ok: true, answer: { decision: 'approve', scope: 'turn' } };
    case 'skip':
      return { ok: true, answer: { decision: 'deny', scope: 'once' } };
    case 'skip_always':
      return { ok: true, answer: { decision: 'deny', scope: 'turn' } };
  }
  const edit = editOf(value);
  // The arguments are an object (or null, or a list: the tool's schema says what it takes).
  if (edit && typeof edit.edited === 'object' && isJsonValue(edit.edited))
    return { ok: true, answer: { decision: 'edit', arguments: edit.edited } };
  const rule = isRecord(value) && 'approve_always' in value ? parseApprovalRule(value.approve_always) : undefined;
  if (rule) return { ok: true, answer: { decision: 'approve_always', rule } };
  return refused(
    'to run a tool ("run", "run_always", "skip", "skip_always", {"edit": <arguments>} or {"approve_always": <rule>})',
    value,
  );
}

export function parseEscalateAnswer(value: unknown, from: AnswerSource): ParsedAnswer<AnswerOf<'escalate'>> {
  if (value === null && from === 'log') return { ok: true, answer: noAnswer };
  if (value === 'run') return { ok: true, answer: approveOnce };
  if (value === 'skip') return { ok: true, answer: denyOnce };
  return refused('to run outside the sandbox ("run" or "skip")', value);
}

export function parseDeliverAnswer(value: unknown, from: AnswerSource): ParsedAnswer<AnswerOf<'deliver_tool_result'>> {
  if (value === null && from === 'log') return { ok: true, answer: noAnswer };
  if (value === 'deliver') return { ok: true, answer: { decision: 'deliver' } };
  if (value === 'skip') return { ok: true, answer: denyOnce };
  const edit = editOf(value);
  if (edit && typeof edit.edited === 'string') return { ok: true, answer: { decision: 'edit', result: edit.edited } };
  return refused('to deliver a result ("deliver", "skip" or {"edit": <text>})', value);
}

/** An answer to `question`: a value of its answer type (an option of a select, a valid form answer). */
export function parseQuestionAnswer(
  question: Question,
  value: unknown,
  from: AnswerSource,
): ParsedAnswer<AnswerOf<'tool_question'>> {
  if (value === null && from === 'log') return { ok: true, answer: noAnswer };
  const answered = (valid: boolean, expected: string): ParsedAnswer<AnswerOf<'tool_question'>> =>
    valid && isJsonValue(value) ? { ok: true, answer: { decision: 'answer', value } } : refused(expected, value);
  switch (question.answer_type) {
    case 'boolean':
      return answered(typeof value === 'boolean', 'to a yes/no question (true or false)');
    case 'select': {
      const options = question.options ?? [];
      return answered(typeof value === 'string' && options.includes(value), `to a choice (one of ${shown(options)})`);
    }
    case 'text':
      return answered(typeof value === 'string', 'to a text question (a string)');
    case 'form':
      return answered(
        isValidFormAnswer(question.fields ?? [], value),
        'to a form ({"action": "accept", "content": {<field>: <value>}} with valid fields, {"action": "decline"} or ' +
          '{"action": "cancel"})',
      );
  }
}

/** Reads an answer to `inquiry` from outside (a client's message, the log). Never throws. */
export function parseAnswer(inquiry: Inquiry, value: unknown, from: AnswerSource): ParsedAnswer<InquiryAnswer> {
  switch (inquiry.kind) {
    case 'run_tool':
      return parseRunToolAnswer(value, from);
    case 'escalate':
      return parseEscalateAnswer(value, from);
    case 'deliver_tool_result':
      return parseDeliverAnswer(value, from);
    case 'tool_question':
      return parseQuestionAnswer(inquiry.question, value, from);
  }
}
