/**
 * Builtin `ask_user {question, options?, default?, exclusive?}`: lets the model ask the human. The
 * question it puts is itself the inquiry (a ToolQuestion routed like any other), so the tool only
 * turns the answer, or the lack of one, into words for the model.
 */
import * as z from 'zod/mini';
import type { Question } from '../inquiry/types.ts';
import { defineTool, type Tool } from './tool.ts';

/** The question id of ask_user in config: `conversation.tools.ask_user.questions.question`. */
export const askUserQuestionId = 'question';

export const askUserTool: Tool = defineTool({
  name: 'ask_user',
  description:
    'Ask the user a question and wait for the answer. Give options for a choice; set exclusive when only a human may ' +
    'answer (never the assistant).',
  schema: z.strictObject({
    question: z.string().check(z.minLength(1), z.describe('The question, in plain words')),
    options: z.optional(
      z.array(z.string()).check(z.minLength(2), z.describe('Choices, when the answer is one of them')),
    ),
    default: z.optional(
      z.string().check(z.describe('Answer to use when no user is available and defaults are allowed')),
    ),
    exclusive: z.optional(z.boolean().check(z.describe('Only a human may answer'))),
  }),
  sideEffects: false,
  tellsWhoAnswered: true,
  async execute(argumentsValue, context) {
    if (!(askUserQuestionId in context.answers)) {
      const question: Question = {
        id: askUserQuestionId,
        text: argumentsValue.question,
        answer_type: argumentsValue.options ? 'select' : 'text',
        exclusive: argumentsValue.exclusive ?? false,
      };
      if (argumentsValue.options) question.options = argumentsValue.options;
      if (argumentsValue.default !== undefined) question.default = argumentsValue.default;
      return { kind: 'needs_input', question };
    }
    const answer = context.answers[askUserQuestionId];
    const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
    switch (context.answeredBy[askUserQuestionId]) {
      case 'assistant':
        return {
          kind: 'success',
          content: `No user was available; the assistant answered on the user's behalf: ${text}`,
        };
      case 'policy':
        return { kind: 'success', content: `No user was available; the question's default answer was used: ${text}` };
      default:
        return { kind: 'success', content: `The user answered: ${text}` };
    }
  },
});
