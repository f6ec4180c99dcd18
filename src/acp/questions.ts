/**
 * A tool's question put to an editor (DESIGN §14): as a form elicitation when the editor offers
 * forms; else, when it has a fixed set of answers, as a permission request whose options are the
 * answers; else it is not put, and the model is told what it needs. Pure: no I/O, types only from
 * the SDK.
 */
import type {
  CreateElicitationResponse,
  ElicitationPropertySchema,
  ElicitationSchema,
  PermissionOption,
} from '@agentclientprotocol/sdk';
import type { FormField } from '../inquiry/form.ts';
import type { JsonValue, Question } from '../inquiry/types.ts';
import { visible } from '../output/sanitize.ts';

/** One option of a question put as a permission request, and the answer it gives. */
export interface AnswerChoice {
  option: PermissionOption;
  answer: JsonValue;
}

/**
 * A question as the options of a permission request, for an editor without forms: a choice's
 * options (and one that does not answer), or yes and no. A question that needs typed input cannot
 * be put so: `unasked` says, for the model, what it needs instead.
 */
export function questionAsChoices(question: Question): { choices: AnswerChoice[] } | { unasked: string } {
  switch (question.answer_type) {
    case 'select':
      return {
        choices: [
          ...(question.options ?? []).map(
            (option, index): AnswerChoice => ({
              option: { optionId: `answer-${index}`, name: visible(option), kind: 'allow_once' },
              answer: option,
            }),
          ),
        ],
      };
    case 'boolean':
      return {
        choices: [
          { option: { optionId: 'yes', name: 'Yes', kind: 'allow_once' }, answer: true },
          { option: { optionId: 'no', name: 'No', kind: 'reject_once' }, answer: false },
        ],
      };
    case 'text':
      return {
        unasked:
          "the user's editor offers choices but no text box. To ask the user, call ask_user again with `options` " +
          'for them to pick from, or end your turn with the question in your message: the user answers in their ' +
          'next prompt.',
      };
    case 'form':
      return {
        unasked:
          "the user's editor has no forms. Ask the user for what the form needs in your message and end your turn: " +
          'the user answers in their next prompt.',
      };
  }
}

/** A question as an ACP form elicitation, and how the editor's reply reads as the question's answer. */
export function elicitationOf(question: Question): {
  requestedSchema: ElicitationSchema;
  answerOf(response: CreateElicitationResponse): JsonValue | undefined;
} {
  const title = visible(question.text);
  const single = (
    property: ElicitationPropertySchema,
  ): { requestedSchema: ElicitationSchema; answerOf(response: CreateElicitationResponse): JsonValue | undefined } => ({
    requestedSchema: { type: 'object', properties: { answer: property }, required: ['answer'] },
    answerOf: (response) =>
      response.action === 'accept' && isRecord(response.content)
        ? ((response.content as Record<string, JsonValue>).answer ?? undefined)
        : undefined,
  });
  switch (question.answer_type) {
    case 'boolean':
      return single({
        type: 'boolean',
        title,
        ...(typeof question.default === 'boolean' ? { default: question.default } : {}),
      });
    case 'select':
      return single({
        type: 'string',
        title,
        enum: question.options ?? [],
        ...(typeof question.default === 'string' ? { default: question.default } : {}),
      });
    case 'text':
      return single({
        type: 'string',
        title,
        ...(typeof question.default === 'string' ? { default: question.default } : {}),
      });
    case 'form': {
      const fields = question.fields ?? [];
      const properties: Record<string, ElicitationPropertySchema> = {};
      for (const field of fields) properties[field.name] = propertyOf(field);
      return {
        requestedSchema: {
          type: 'object',
          title,
          properties,
          required: fields.filter((field) => field.required).map((field) => field.name),
        },
        answerOf: (response): JsonValue | undefined => {
          if (response.action === 'decline' || response.action === 'cancel') return { action: response.action };
          if (response.action === 'accept')
            return {
              action: 'accept',
              content: (isRecord(response.content) ? response.content : {}) as Record<string, JsonValue>,
            };
          return undefined;
        },
      };
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function propertyOf(field: FormField): ElicitationPropertySchema {
  const common = {
    ...(field.title ? { title: visible(field.title) } : {}),
    ...(field.description ? { description: visible(field.description) } : {}),
  };
  const defaultOf = <T>(check: (value: unknown) => value is T): { default?: T } =>
    check(field.default) ? { default: field.default } : {};
  const isString = (value: unknown): value is string => typeof value === 'string';
  const isNumber = (value: unknown): value is number => typeof value === 'number';
  const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
  const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
  const options = (field.options ?? []).map((option) => ({ const: option.value, title: visible(option.label) }));
  switch (field.type) {
    case 'string':
      return {
        type: 'string',
        ...common,
        ...defaultOf(isString),
        ...(field.min_length !== undefined ? { minLength: field.min_length } : {}),
        ...(field.max_length !== undefined ? { maxLength: field.max_length } : {}),
      };
    case 'number':
    case 'integer':
      return {
        type: field.type,
        ...common,
        ...defaultOf(isNumber),
        ...(field.minimum !== undefined ? { minimum: field.minimum } : {}),
        ...(field.maximum !== undefined ? { maximum: field.maximum } : {}),
      };
    case 'boolean':
      return { type: 'boolean', ...common, ...defaultOf(isBoolean) };
    case 'enum':
      return { type: 'string', ...common, oneOf: options, ...defaultOf(isString) };
    case 'multi_enum':
      return { type: 'array', ...common, items: { anyOf: options }, ...defaultOf(isStrings) };
  }
}
