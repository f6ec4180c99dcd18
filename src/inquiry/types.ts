/**
 * Inquiries: every point where a human might be asked something (DESIGN §4). Plain data, no I/O.
 */

import type { FormField, JsonValue } from './form.ts';

export type { JsonValue } from './form.ts';

/** `form`: several named fields answered together (an MCP elicitation); its answer is a FormAnswer. */
export type AnswerType = 'boolean' | 'select' | 'text' | 'form';

export interface Question {
  /** Stable id, the key of `conversation.tools.<tool>.questions.<id>` in config. */
  id: string;
  text: string;
  answer_type: AnswerType;
  /** Choices of a select question. */
  options?: string[];
  /** The fields of a form question. */
  fields?: FormField[];
  /** The answer `defaults` uses; for select questions one of `options`; for forms a FormAnswer. */
  default?: JsonValue;
  /** Never answered by the LLM (tool author's default; config may override it either way). */
  exclusive: boolean;
}

export type Inquiry =
  /** `edit`: the configured attached policy is `edit` (the human edits the arguments before it runs). */
  | { kind: 'run_tool'; tool: string; arguments: unknown; edit?: boolean }
  /** `edit`: the configured attached policy is `edit` (the human edits the result before it is sent). */
  | { kind: 'deliver_tool_result'; tool: string; result: string; is_error?: boolean; edit?: boolean }
  | { kind: 'tool_question'; tool: string; question: Question }
  /**
   * Run a command outside the sandbox (DESIGN §10): asked by the model (`escalate: true`) or because
   * the sandbox cannot start here. `needs` says what the sandbox withholds, `justification` why.
   */
  | { kind: 'escalate'; tool: string; arguments: unknown; needs: EscalationNeed; justification: string };

/**
 * What a command needs that the sandbox withholds; `unconfined` when it cannot say (or the sandbox
 * cannot start); `git`: a file tool writes inside `.git/`, where git takes programs to run from.
 */
export type EscalationNeed = 'network' | 'write' | 'unconfined' | 'git';

export type InquiryKind = Inquiry['kind'];

export type InquiryOf<K extends InquiryKind> = Extract<Inquiry, { kind: K }>;

/** The config key of each inquiry kind under `detached` (DESIGN §3). */
export type PolicyKind = 'run' | 'deliver' | 'tool' | 'escalate';

export function policyKindOf(kind: InquiryKind): PolicyKind {
  switch (kind) {
    case 'run_tool':
      return 'run';
    case 'deliver_tool_result':
      return 'deliver';
    case 'tool_question':
      return 'tool';
    case 'escalate':
      return 'escalate';
  }
}

export type DetachedPolicy = 'auto' | 'defaults' | 'deny' | 'defer';

export type PromptAction =
  | 'PromptClient'
  | 'AutoApprove'
  | 'AutoDeliver'
  | 'LlmInquiry'
  | 'UseDefault'
  | 'Fail'
  | 'Defer';

/**
 * Who settled an inquiry (recorded as `inquiry_response.by`, schema/event.schema.json; `hook`: a
 * PermissionRequest hook, a program of the user's); what they answered is an InquiryAnswer (answer.ts).
 */
export type AnsweredBy = 'user' | 'policy' | 'assistant' | 'hook';
