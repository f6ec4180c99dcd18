/**
 * Local command tools from config (DESIGN §9):
 *
 *   [conversation.tools.deploy]
 *   command = "./scripts/deploy.sh"            # or { program = "...", args = [...], shell = false }
 *   description = "Deploy the site"
 *   parameters.target = { type = "string", required = true, enum = ["staging", "production"] }
 *
 * The command runs in the workspace root, in the run's sandbox (DESIGN §10), in its own process group, with the call on
 * stdin as `{"name", "arguments", "answers"}` and in JP_TOOL_NAME / JP_TOOL_ARGUMENTS / JP_TOOL_ANSWERS.
 * Its stdout may be a JSON outcome: {"type":"success","content"}, {"type":"error","message"} or
 * {"type":"needs_input","question":{id,text,answer_type,options?,default?,exclusive?}}; anything else
 * is taken as plain output (success on exit 0, error otherwise).
 */
import * as z from 'zod/mini';
import type { ParameterConfig, ToolConfig } from '../config/schema.ts';
import type { Question } from '../inquiry/types.ts';
import { runConfined } from './confined.ts';
import { describeIssues, validationMessage, type Tool, type ToolResult } from './tool.ts';

function parameterSchema(parameter: ParameterConfig): z.ZodMiniType {
  let schema: z.ZodMiniType;
  switch (parameter.type) {
    case 'string':
      schema = parameter.enum ? z.enum(parameter.enum as [string, ...string[]]) : z.string();
      break;
    case 'number':
      schema = z.number();
      break;
    case 'integer':
      schema = z.int();
      break;
    case 'boolean':
      schema = z.boolean();
      break;
    case 'object':
      schema = z.record(z.string(), z.unknown());
      break;
    case 'array':
      schema = z.array(z.unknown());
      break;
  }
  if (parameter.description) schema = schema.check(z.describe(parameter.description));
  return parameter.required ? schema : z.optional(schema);
}

const questionSchema = z.object({
  id: z.string(),
  text: z.string(),
  answer_type: z.enum(['boolean', 'select', 'text']),
  options: z.optional(z.array(z.string())),
  default: z.optional(z.union([z.string(), z.number(), z.boolean()])),
  exclusive: z.optional(z.boolean()),
});

const outcomeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('success'), content: z.unknown() }),
  z.object({ type: z.literal('error'), message: z.string() }),
  z.object({ type: z.literal('needs_input'), question: questionSchema }),
]);

function parseOutcome(stdout: string): ToolResult | undefined {
  const trimmed = stdout.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  const result = outcomeSchema.safeParse(value);
  if (!result.success) return undefined;
  const outcome = result.data;
  switch (outcome.type) {
    case 'success':
      return {
        kind: 'success',
        content: typeof outcome.content === 'string' ? outcome.content : JSON.stringify(outcome.content),
      };
    case 'error':
      return { kind: 'error', message: outcome.message };
    case 'needs_input': {
      const question: Question = {
        id: outcome.question.id,
        text: outcome.question.text,
        answer_type: outcome.question.answer_type,
        exclusive: outcome.question.exclusive ?? false,
      };
      if (outcome.question.options) question.options = outcome.question.options;
      if (outcome.question.default !== undefined) question.default = outcome.question.default;
      return { kind: 'needs_input', question };
    }
  }
}

export function createLocalTool(name: string, config: ToolConfig): Tool {
  const shape: Record<string, z.ZodMiniType> = {};
  for (const [parameterName, parameter] of Object.entries(config.parameters ?? {}))
    shape[parameterName] = parameterSchema(parameter);
  const schema = z.strictObject(shape);
  const parameters = z.toJSONSchema(schema) as Record<string, unknown>;
  delete parameters.$schema;
  const command = config.command!;
  return {
    name,
    description: config.description ?? `Local command tool ${name}`,
    parameters,
    sideEffects: config.side_effects ?? true,
    confined: true,
    validate(argumentsValue) {
      const result = schema.safeParse(argumentsValue ?? {});
      if (result.success) return { ok: true, value: result.data };
      return { ok: false, message: validationMessage(name, describeIssues(result.error.issues as never), parameters) };
    },
    async execute(argumentsValue, context) {
      const file = typeof command === 'string' || command.shell !== false ? '/bin/sh' : command.program;
      const commandLine =
        typeof command === 'string' ? command : [command.program, ...(command.args ?? [])].map(shellQuote).join(' ');
      const argumentList =
        typeof command === 'string' || command.shell !== false ? ['-c', commandLine] : (command.args ?? []);
      const result = await runConfined(
        context,
        { file, arguments: argumentList, cwd: context.toolRoot },
        {
          environment: {
            ...context.environment,
            JP_TOOL_NAME: name,
            JP_TOOL_ARGUMENTS: JSON.stringify(argumentsValue),
            JP_TOOL_ANSWERS: JSON.stringify(context.answers),
            JP_CONVERSATION_ID: context.conversationId,
            JP_WORKSPACE_ROOT: context.toolRoot,
          },
          stdin: JSON.stringify({ name, arguments: argumentsValue, answers: context.answers }),
        },
      );
      if (result.spawnError) return { kind: 'error', message: `could not start ${name}: ${result.spawnError}` };
      if (result.timedOut)
        return {
          kind: 'error',
          message: `${name} timed out after ${Math.round(context.timeoutMilliseconds / 1000)} s and was killed`,
        };
      if (result.aborted) return { kind: 'error', message: `${name} was stopped: the run was interrupted` };
      const outcome = parseOutcome(result.stdout);
      if (outcome) return outcome;
      const output = [result.stdout, result.stderr].filter(Boolean).join('\n').trimEnd();
      if (result.exitCode === 0) return { kind: 'success', content: output };
      return {
        kind: 'error',
        message: `${name} failed (${result.signal ?? `exit code ${result.exitCode}`})${output ? `\n${output}` : ''}`,
      };
    },
  };
}

function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./=:-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
