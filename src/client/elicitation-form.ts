/**
 * A form question (an MCP elicitation) at the terminal: first whether to answer at all, then one
 * prompt per field drawn from its schema (text with its format and length, a number with its
 * bounds, yes/no, one choice, several choices), each showing its default, then a last look before
 * the answers are sent. An optional field can be left empty. The answer is a FormAnswer.
 */
import { fieldProblem, type FormAnswer, type FormField } from '../inquiry/form.ts';
import type { JsonValue, Question } from '../inquiry/types.ts';
import { visible } from '../output/sanitize.ts';
import type { PromptContext } from './prompt-context.ts';

type Prompts = typeof import('@inquirer/prompts');

/** A field's line: its title or name, what it is for, and its constraints. */
export function fieldLabel(field: FormField): string {
  // Titles and descriptions come from the server: shown with control characters made visible.
  const parts = [visible(field.title ?? field.name, { singleLine: true, invisible: true })];
  if (field.description) parts.push(`— ${visible(field.description, { singleLine: true, invisible: true })}`);
  const limits: string[] = [];
  if (field.minimum !== undefined || field.maximum !== undefined)
    limits.push(`${field.minimum ?? '…'} to ${field.maximum ?? '…'}`);
  if (field.type === 'integer') limits.push('whole number');
  if (field.format) limits.push(field.format);
  if (field.min_length !== undefined || field.max_length !== undefined)
    limits.push(`${field.min_length ?? 0} to ${field.max_length ?? '…'} characters`);
  if (field.min_items !== undefined || field.max_items !== undefined)
    limits.push(`choose ${field.min_items ?? 0} to ${field.max_items ?? 'any'}`);
  if (limits.length > 0) parts.push(`(${limits.join(', ')})`);
  parts.push(field.required ? '(required)' : '(optional)');
  return parts.join(' ');
}

const leaveEmpty = '\u0000leave-empty';

async function askField(prompts: Prompts, field: FormField, context: PromptContext): Promise<JsonValue | undefined> {
  const message = fieldLabel(field);
  const validate = (value: JsonValue | undefined): true | string => {
    if (value === undefined || value === '') return field.required ? 'This field is required.' : true;
    return fieldProblem(field, value) ?? true;
  };
  switch (field.type) {
    case 'string': {
      const value = await prompts.input(
        {
          message,
          theme: context.theme,
          ...(typeof field.default === 'string' ? { default: field.default } : {}),
          required: field.required,
          validate: (text) => validate(text),
        },
        context,
      );
      return value === '' ? undefined : value;
    }
    case 'number':
    case 'integer':
      return prompts.number(
        {
          message,
          theme: context.theme,
          ...(typeof field.default === 'number' ? { default: field.default } : {}),
          ...(field.minimum !== undefined ? { min: field.minimum } : {}),
          ...(field.maximum !== undefined ? { max: field.maximum } : {}),
          step: field.type === 'integer' ? 1 : 'any',
          required: field.required,
          validate: (value) => validate(value),
        },
        context,
      );
    case 'boolean': {
      if (field.required || typeof field.default === 'boolean') {
        return prompts.confirm(
          { message, theme: context.theme, ...(typeof field.default === 'boolean' ? { default: field.default } : {}) },
          context,
        );
      }
      const choice = await prompts.select(
        {
          message,
          theme: context.theme,
          choices: [
            { name: 'leave empty', value: leaveEmpty },
            { name: 'yes', value: 'yes' },
            { name: 'no', value: 'no' },
          ],
        },
        context,
      );
      return choice === leaveEmpty ? undefined : choice === 'yes';
    }
    case 'enum': {
      const choices = (field.options ?? []).map((option) => ({
        name: visible(option.label === option.value ? option.value : `${option.label} (${option.value})`, {
          singleLine: true,
        }),
        value: option.value,
      }));
      const withEmpty =
        field.required || typeof field.default === 'string'
          ? choices
          : [{ name: 'leave empty', value: leaveEmpty }, ...choices];
      const choice = await prompts.select(
        {
          message,
          theme: context.theme,
          choices: withEmpty,
          ...(typeof field.default === 'string' ? { default: field.default } : {}),
        },
        context,
      );
      return choice === leaveEmpty ? undefined : choice;
    }
    case 'multi_enum': {
      const defaults = Array.isArray(field.default) ? field.default : [];
      const chosen = await prompts.checkbox(
        {
          message,
          theme: context.theme,
          choices: (field.options ?? []).map((option) => ({
            name: visible(option.label, { singleLine: true, invisible: true }),
            value: option.value,
            checked: defaults.includes(option.value),
          })),
          validate: (selected) =>
            validate(selected.length === 0 && !field.required ? undefined : selected.map((choice) => choice.value)),
        },
        context,
      );
      return chosen.length === 0 && !field.required ? undefined : chosen;
    }
  }
}

/**
 * Shows the form for `question` (asked by `tool`) and returns the person's answer. `context` gives
 * each prompt of the form its own context (a finished prompt ends its output, see prompts.ts).
 */
export async function fillInForm(tool: string, question: Question, context: () => PromptContext): Promise<FormAnswer> {
  const prompts = await import('@inquirer/prompts');
  const fields = question.fields ?? [];
  const startContext = context();
  const start = await prompts.select(
    {
      message:
        `${visible(tool, { singleLine: true, invisible: true })} ` +
        `asks: ${visible(question.text, { invisible: true })}`,
      theme: startContext.theme,
      choices: [
        { name: `answer (${fields.length} field${fields.length === 1 ? '' : 's'})`, value: 'answer' },
        { name: 'decline: do not give this information', value: 'decline' },
      ],
    },
    startContext,
  );
  if (start === 'decline') return { action: 'decline' };
  const content: Record<string, JsonValue> = {};
  for (const field of fields) {
    const value = await askField(prompts, field, context());
    if (value !== undefined) content[field.name] = value;
  }
  const sendContext = context();
  const send = await prompts.confirm(
    {
      message: `Send these answers to ${visible(tool, { singleLine: true, invisible: true })}? (no: decline)`,
      default: true,
      theme: sendContext.theme,
    },
    sendContext,
  );
  return send ? { action: 'accept', content } : { action: 'decline' };
}
