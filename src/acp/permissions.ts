/**
 * How an inquiry is put to an editor as a permission request (DESIGN §14): its options and the
 * answer each gives, its title, and the payload the user approves. Pure: no I/O, types only from
 * the SDK.
 */
import type { PermissionOption, ToolCallContent } from '@agentclientprotocol/sdk';
import { approveOnce, denyOnce, type AnswerOf } from '../inquiry/answer.ts';
import type { Inquiry } from '../inquiry/types.ts';
import { visible } from '../output/sanitize.ts';
import { textContent } from './updates.ts';

/** One option of a permission request and the inquiry answer it gives. */
export interface PermissionChoice {
  option: PermissionOption;
  /**
   * The answer sent to the run; `remember`: the editor's client gives it again, without asking, to this tool's later
   * inquiries of the same kind in this turn.
   */
  answer: AnswerOf<'run_tool' | 'escalate' | 'deliver_tool_result'>;
  remember?: boolean;
}

/**
 * How an inquiry is put to an editor: a permission request with its choices (allow once, allow for
 * this turn, reject), or a question (answered through elicitation when the editor has it, else by
 * the detached policy). Total over the Inquiry union: a new kind does not compile until it is put here.
 */
export function inquiryRequestOf(
  inquiry: Inquiry,
): { kind: 'permission'; choices: PermissionChoice[] } | { kind: 'question' } {
  switch (inquiry.kind) {
    case 'run_tool':
      return {
        kind: 'permission',
        choices: [
          { option: { optionId: 'run', name: 'Allow once', kind: 'allow_once' }, answer: approveOnce },
          {
            option: { optionId: 'run_always', name: `Allow ${inquiry.tool} for this turn`, kind: 'allow_always' },
            answer: { decision: 'approve', scope: 'turn' },
          },
          { option: { optionId: 'skip', name: 'Reject', kind: 'reject_once' }, answer: denyOnce },
        ],
      };
    case 'deliver_tool_result':
      return {
        kind: 'permission',
        choices: [
          {
            option: { optionId: 'deliver', name: 'Send the result to the model once', kind: 'allow_once' },
            answer: { decision: 'deliver' },
          },
          {
            option: {
              optionId: 'deliver_always',
              name: `Send ${inquiry.tool} results for this turn`,
              kind: 'allow_always',
            },
            answer: { decision: 'deliver' },
            remember: true,
          },
          { option: { optionId: 'skip', name: 'Reject: do not send it', kind: 'reject_once' }, answer: denyOnce },
        ],
      };
    case 'escalate':
      return {
        kind: 'permission',
        choices: [
          {
            option: { optionId: 'run', name: 'Allow outside the sandbox once', kind: 'allow_once' },
            answer: approveOnce,
          },
          {
            option: {
              optionId: 'run_outside_turn',
              name: `Allow ${inquiry.tool} outside the sandbox for this turn`,
              kind: 'allow_always',
            },
            answer: approveOnce,
            remember: true,
          },
          {
            option: { optionId: 'skip', name: 'Reject: keep it in the sandbox (not run)', kind: 'reject_once' },
            answer: denyOnce,
          },
        ],
      };
    case 'tool_question':
      return { kind: 'question' };
    default:
      return unreachable(inquiry);
  }
}

const escalationNeeds = {
  network: 'it needs the network',
  write: 'it needs to write outside the workspace',
  unconfined: 'it cannot run in the sandbox',
  git: 'it writes inside .git/, where git runs programs from outside the sandbox',
} as const;

function unreachable(value: never): never {
  throw new Error(`unknown inquiry kind ${JSON.stringify(value)}`);
}

/**
 * The whole payload a permission approves, besides the call's arguments (`rawInput`): the result to
 * be sent, or why the command asks to leave the sandbox; else the call's own diffs.
 */
export function permissionContentOf(inquiry: Inquiry, callContent: ToolCallContent[]): ToolCallContent[] {
  switch (inquiry.kind) {
    case 'deliver_tool_result':
      return [textContent(inquiry.result)];
    case 'escalate':
      return [
        textContent(`Outside the sandbox: ${escalationNeeds[inquiry.needs]}. Why: ${inquiry.justification}`),
        ...callContent,
      ];
    case 'run_tool':
    case 'tool_question':
      return callContent;
    default:
      return unreachable(inquiry);
  }
}

/** An inquiry, described for a permission request's title. */
export function permissionTitleOf(inquiry: Inquiry, toolTitle: string | undefined): string {
  switch (inquiry.kind) {
    case 'run_tool':
      return toolTitle ?? visible(inquiry.tool);
    case 'deliver_tool_result':
      return `Send the result of ${toolTitle ?? visible(inquiry.tool)} to the model?`;
    case 'escalate':
      if (inquiry.needs === 'git')
        return `Write inside .git/ (git runs programs from there): ${toolTitle ?? visible(inquiry.tool)}`;
      return `Run outside the sandbox (${escalationNeeds[inquiry.needs]}): ${toolTitle ?? visible(inquiry.tool)}`;
    case 'tool_question':
      return visible(inquiry.question.text);
    default:
      return unreachable(inquiry);
  }
}
