/**
 * An MCP elicitation (`elicitation/create`, form mode) as a jp form question, and the question's
 * answer as the elicitation's result. The requested schema is a flat object of primitive fields
 * (the SDK has checked that before it reaches us): text, numbers, booleans, single and multiple
 * choices, titled or not.
 */
import { defaultFormAnswer, parseFormAnswer, type FormField, type FormOption } from '../../inquiry/form.ts';
import type { JsonValue, Question } from '../../inquiry/types.ts';
import type { ToolAnswer } from '../tool.ts';

type Schema = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function number(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Choices from `enum` (+ legacy `enumNames`) or from `oneOf`/`anyOf` of `{const, title}`. */
function optionsOf(schema: Schema): FormOption[] | undefined {
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum.map((value, index) => ({ value: String(value), label: text(names[index]) ?? String(value) }));
  }
  const titled = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (!titled) return undefined;
  return titled.map((entry) => {
    const option = entry as Schema;
    return { value: String(option.const), label: text(option.title) ?? String(option.const) };
  });
}

function fieldOf(name: string, schema: Schema, required: boolean): FormField {
  const field: FormField = { name, type: 'string', required };
  const title = text(schema.title);
  const description = text(schema.description);
  if (title) field.title = title;
  if (description) field.description = description;
  if (schema.default !== undefined) field.default = schema.default as JsonValue;
  switch (schema.type) {
    case 'number':
    case 'integer': {
      field.type = schema.type;
      const minimum = number(schema.minimum);
      const maximum = number(schema.maximum);
      if (minimum !== undefined) field.minimum = minimum;
      if (maximum !== undefined) field.maximum = maximum;
      return field;
    }
    case 'boolean':
      field.type = 'boolean';
      return field;
    case 'array': {
      field.type = 'multi_enum';
      field.options = optionsOf((schema.items ?? {}) as Schema) ?? [];
      const minItems = number(schema.minItems);
      const maxItems = number(schema.maxItems);
      if (minItems !== undefined) field.min_items = minItems;
      if (maxItems !== undefined) field.max_items = maxItems;
      return field;
    }
    default: {
      const options = optionsOf(schema);
      if (options) {
        field.type = 'enum';
        field.options = options;
        return field;
      }
      const minLength = number(schema.minLength);
      const maxLength = number(schema.maxLength);
      const format = text(schema.format);
      if (minLength !== undefined) field.min_length = minLength;
      if (maxLength !== undefined) field.max_length = maxLength;
      if (format) field.format = format;
      return field;
    }
  }
}

export function fieldsOf(requestedSchema: Schema): FormField[] {
  const properties = (requestedSchema.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(requestedSchema.required) ? requestedSchema.required.map(String) : []);
  return Object.entries(properties).map(([name, schema]) => fieldOf(name, schema, required.has(name)));
}

/**
 * The question of the `index`-th elicitation of one call (0-based). Its id is the config key
 * `conversation.tools.<tool>.questions.<id>`: `elicitation`, then `elicitation_2`, ... Elicitations
 * are not exclusive unless the user's config says so; their default is the schema's defaults when
 * every required field has one.
 */
export function elicitationQuestion(index: number, message: string, requestedSchema: Schema): Question {
  const fields = fieldsOf(requestedSchema);
  const question: Question = {
    id: index === 0 ? 'elicitation' : `elicitation_${index + 1}`,
    text: message,
    answer_type: 'form',
    fields,
    exclusive: false,
  };
  const defaults = defaultFormAnswer(fields);
  if (defaults) question.default = defaults;
  return question;
}

export type ElicitationResult =
  | { action: 'accept'; content: Record<string, string | number | boolean | string[]> }
  | { action: 'decline' }
  | { action: 'cancel' };

/**
 * What the server is sent for how jp settled the question: the content (accepted), a decline (the
 * user's, or nobody could answer), or a cancel (the run stops to wait for a user). Who answered is
 * jp's to tell the model, with the tool's result.
 */
export function elicitationResult(answer: ToolAnswer): ElicitationResult {
  switch (answer.kind) {
    case 'deferred':
      return { action: 'cancel' };
    case 'unanswered':
      return { action: 'decline' };
    case 'answered': {
      const form = parseFormAnswer(answer.answer);
      if (!form) return { action: 'decline' };
      if (form.action !== 'accept') return { action: form.action };
      return { action: 'accept', content: form.content as Record<string, string | number | boolean | string[]> };
    }
  }
}
