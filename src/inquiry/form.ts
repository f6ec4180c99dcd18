/**
 * Form questions: a question whose answer is a set of named fields, each a string, a number, a
 * boolean, one choice or several (an MCP elicitation, DESIGN §9). Plain data and pure checks, shared
 * by the engine (validating answers from clients and from the model), the terminal form and the
 * `defaults` policy.
 */
/** A value of JSON: what answers, defaults and tool arguments are made of. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type FormFieldType = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi_enum';

export interface FormOption {
  value: string;
  /** What a person reads; the value when the schema gives no title. */
  label: string;
}

export interface FormField {
  name: string;
  type: FormFieldType;
  title?: string;
  description?: string;
  required: boolean;
  default?: JsonValue;
  /** number and integer: inclusive bounds. */
  minimum?: number;
  maximum?: number;
  /** string: length bounds and an optional format (email, uri, date, date-time). */
  min_length?: number;
  max_length?: number;
  format?: string;
  /** enum and multi_enum: the choices. */
  options?: FormOption[];
  /** multi_enum: how many may be chosen. */
  min_items?: number;
  max_items?: number;
}

/**
 * The answer to a form question, shaped as MCP's elicitation result: the fields' values (accept),
 * or a refusal to give them (decline), or a dismissal (cancel).
 */
export type FormAnswer =
  | { action: 'accept'; content: Record<string, JsonValue> }
  | { action: 'decline' }
  | { action: 'cancel' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a form answer from untrusted input (a client, the log); undefined when it is not one. */
export function parseFormAnswer(value: unknown): FormAnswer | undefined {
  if (!isRecord(value)) return undefined;
  if (value.action === 'decline' || value.action === 'cancel') return { action: value.action };
  if (value.action === 'accept' && isRecord(value.content))
    return { action: 'accept', content: value.content as Record<string, JsonValue> };
  return undefined;
}

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

function formatProblem(format: string, value: string): string | undefined {
  switch (format) {
    case 'email':
      return emailPattern.test(value) ? undefined : 'is not an email address';
    case 'uri':
      try {
        new URL(value);
        return undefined;
      } catch {
        return 'is not a URI';
      }
    case 'date': {
      const match = datePattern.exec(value);
      const valid =
        match !== null &&
        !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) &&
        new Date(`${value}T00:00:00Z`).getUTCDate() === Number(match[3]);
      return valid ? undefined : 'is not a date (YYYY-MM-DD)';
    }
    case 'date-time':
      return /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value))
        ? undefined
        : 'is not a date and time (ISO 8601)';
    default:
      return undefined;
  }
}

/** Why `value` is not a valid value of `field`, or undefined when it is. */
export function fieldProblem(field: FormField, value: JsonValue): string | undefined {
  switch (field.type) {
    case 'string': {
      if (typeof value !== 'string') return 'must be text';
      if (field.min_length !== undefined && value.length < field.min_length)
        return `must be at least ${field.min_length} characters`;
      if (field.max_length !== undefined && value.length > field.max_length)
        return `must be at most ${field.max_length} characters`;
      return field.format ? formatProblem(field.format, value) : undefined;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (field.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (field.minimum !== undefined && value < field.minimum) return `must be at least ${field.minimum}`;
      if (field.maximum !== undefined && value > field.maximum) return `must be at most ${field.maximum}`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'enum':
      return typeof value === 'string' && (field.options ?? []).some((option) => option.value === value)
        ? undefined
        : `must be one of ${optionList(field)}`;
    case 'multi_enum': {
      if (
        !Array.isArray(value) ||
        !value.every(
          (item) => typeof item === 'string' && (field.options ?? []).some((option) => option.value === item),
        )
      ) {
        return `must be a list of ${optionList(field)}`;
      }
      if (new Set(value).size !== value.length) return 'must not name a choice twice';
      if (field.min_items !== undefined && value.length < field.min_items)
        return `must have at least ${field.min_items} choice(s)`;
      if (field.max_items !== undefined && value.length > field.max_items)
        return `must have at most ${field.max_items} choice(s)`;
      return undefined;
    }
  }
}

function optionList(field: FormField): string {
  return (field.options ?? []).map((option) => JSON.stringify(option.value)).join(', ');
}

/** Why `content` does not fill in the form, or undefined when it does. */
export function formProblem(fields: readonly FormField[], content: Record<string, JsonValue>): string | undefined {
  for (const name of Object.keys(content)) {
    if (!fields.some((field) => field.name === name)) return `${name}: no such field`;
  }
  for (const field of fields) {
    const value = content[field.name];
    if (value === undefined || value === null) {
      if (field.required) return `${field.name}: required`;
      continue;
    }
    const problem = fieldProblem(field, value);
    if (problem) return `${field.name}: ${problem}`;
  }
  return undefined;
}

/** Whether a value is an acceptable answer to a form of these fields. */
export function isValidFormAnswer(fields: readonly FormField[], value: unknown): boolean {
  const answer = parseFormAnswer(value);
  if (!answer) return false;
  return answer.action !== 'accept' || formProblem(fields, answer.content) === undefined;
}

/** The required fields that have no (valid) default: the form cannot be filled in from defaults. */
export function fieldsWithoutDefault(fields: readonly FormField[]): string[] {
  return fields
    .filter(
      (field) => field.required && (field.default === undefined || fieldProblem(field, field.default) !== undefined),
    )
    .map((field) => field.name);
}

/** The answer made of the schema's defaults, or undefined when a required field has none. */
export function defaultFormAnswer(fields: readonly FormField[]): FormAnswer | undefined {
  if (fieldsWithoutDefault(fields).length > 0) return undefined;
  const content: Record<string, JsonValue> = {};
  for (const field of fields) {
    if (field.default !== undefined && fieldProblem(field, field.default) === undefined)
      content[field.name] = field.default;
  }
  return { action: 'accept', content };
}

/**
 * The JSON Schema of a form's content for a structured LLM call. Every field is listed as required
 * (strict structured-output modes demand it); an optional field may be null, meaning "left empty".
 */
export function formContentSchema(fields: readonly FormField[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const field of fields) {
    let schema: Record<string, unknown>;
    switch (field.type) {
      case 'string':
        schema = { type: 'string', ...(field.format ? { format: field.format } : {}) };
        break;
      case 'number':
      case 'integer':
        schema = {
          type: field.type,
          ...(field.minimum !== undefined ? { minimum: field.minimum } : {}),
          ...(field.maximum !== undefined ? { maximum: field.maximum } : {}),
        };
        break;
      case 'boolean':
        schema = { type: 'boolean' };
        break;
      case 'enum':
        schema = { type: 'string', enum: (field.options ?? []).map((option) => option.value) };
        break;
      case 'multi_enum':
        schema = {
          type: 'array',
          items: { type: 'string', enum: (field.options ?? []).map((option) => option.value) },
        };
        break;
    }
    const description = [field.title, field.description].filter(Boolean).join(': ');
    if (description) schema.description = description;
    properties[field.name] = field.required ? schema : { anyOf: [schema, { type: 'null' }] };
  }
  return { type: 'object', properties, required: fields.map((field) => field.name), additionalProperties: false };
}

/** Content from a structured LLM call: the null values of optional fields dropped. */
export function contentFromModel(value: unknown): Record<string, JsonValue> | undefined {
  if (!isRecord(value)) return undefined;
  const content: Record<string, JsonValue> = {};
  for (const [name, inner] of Object.entries(value))
    if (inner !== null && inner !== undefined) content[name] = inner as JsonValue;
  return content;
}
