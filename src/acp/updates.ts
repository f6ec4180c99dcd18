/**
 * What an editor is sent, made from what jp records (DESIGN §14): conversation events become ACP
 * `session/update` notifications, a run's result becomes a stop reason, an inquiry becomes a
 * permission request's options, and a prompt's content blocks become the user's message. Pure: no
 * I/O, types only from the SDK.
 */
import path from 'node:path';
import type {
  ContentBlock,
  CreateElicitationResponse,
  ElicitationPropertySchema,
  ElicitationSchema,
  PermissionOption,
  SessionUpdate,
  StopReason,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from '@agentclientprotocol/sdk';
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
import type { FormField } from '../inquiry/form.ts';
import { approveOnce, denyOnce, type AnswerOf } from '../inquiry/answer.ts';
import type { Inquiry, JsonValue, Question } from '../inquiry/types.ts';
import { visible } from '../output/sanitize.ts';
import type { ResultObject } from '../report/result.ts';

/** The ACP kind of a tool, so an editor can pick its icon and treatment. */
export function toolKindOf(tool: string): ToolKind {
  switch (tool) {
    case 'fs_read_file':
      return 'read';
    case 'fs_list_files':
    case 'fs_search':
      return 'search';
    case 'fs_create_file':
    case 'fs_modify_file':
      return 'edit';
    case 'run_command':
      return 'execute';
    case 'ask_user':
      return 'think';
    default:
      return 'other';
  }
}

function argumentsRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A short, visible title: the tool and what it works on. */
export function toolTitleOf(tool: string, argumentsValue: unknown): string {
  const record = argumentsRecord(argumentsValue);
  const subject =
    typeof record.command === 'string'
      ? record.command
      : typeof record.path === 'string'
        ? record.path
        : typeof record.pattern === 'string'
          ? record.pattern
          : typeof record.question === 'string'
            ? record.question
            : undefined;
  const title =
    subject === undefined ? tool : `${tool}: ${subject.length > 200 ? `${subject.slice(0, 200)}…` : subject}`;
  return visible(title);
}

/** Files a call works on, as absolute paths (an editor follows along); only for file tools. */
export function toolLocationsOf(tool: string, argumentsValue: unknown, workspaceRoot: string): ToolCallLocation[] {
  if (!tool.startsWith('fs_')) return [];
  const requested = argumentsRecord(argumentsValue).path;
  if (tool === 'fs_list_files' || tool === 'fs_search')
    return [{ path: path.resolve(workspaceRoot, typeof requested === 'string' ? requested : '.') }];
  return typeof requested === 'string' ? [{ path: path.resolve(workspaceRoot, requested) }] : [];
}

/** The edit a file tool asks to make, as ACP diffs: a created file whole, a modification as each replaced text. */
export function toolDiffsOf(tool: string, argumentsValue: unknown, workspaceRoot: string): ToolCallContent[] {
  const record = argumentsRecord(argumentsValue);
  if (typeof record.path !== 'string') return [];
  const file = path.resolve(workspaceRoot, record.path);
  if (tool === 'fs_create_file' && typeof record.content === 'string')
    return [{ type: 'diff', path: file, oldText: null, newText: record.content }];
  if (tool !== 'fs_modify_file') return [];
  const edits = Array.isArray(record.edits) ? record.edits.map(argumentsRecord) : [record];
  return edits.flatMap((edit) =>
    typeof edit.old_string === 'string' && typeof edit.new_string === 'string'
      ? [{ type: 'diff' as const, path: file, oldText: edit.old_string, newText: edit.new_string }]
      : [],
  );
}

function textContent(text: string): ToolCallContent {
  return { type: 'content', content: { type: 'text', text } };
}

/**
 * Turns persisted events into updates. Streamed pieces (`delta`) come before the persisted text
 * that repeats them: what was streamed already is not sent twice.
 */
export class UpdateMapper {
  private readonly streamed = { message: '', reasoning: '' };
  private readonly workspaceRoot: string;
  private readonly toolNames = new Map<string, string>();
  private readonly toolArguments = new Map<string, unknown>();

  constructor(workspaceRoot: string) {
    this.workspaceRoot = workspaceRoot;
  }

  /** A piece of text not persisted yet. */
  delta(kind: 'message' | 'reasoning', text: string): SessionUpdate[] {
    if (text === '') return [];
    this.streamed[kind] += text;
    return [chunk(kind, text)];
  }

  /**
   * One persisted event. `replay`: the event is history (session/load), so the user's messages are
   * sent too; live, the editor has them already.
   */
  event(event: ConversationEvent, replay: boolean): SessionUpdate[] {
    switch (event.type) {
      case 'chat_request':
        return replay && event.content !== ''
          ? [{ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: event.content } }]
          : [];
      case 'chat_response': {
        const kind = 'message' in event ? 'message' : 'reasoning';
        const text = 'message' in event ? event.message : event.reasoning;
        const streamed = this.streamed[kind];
        if (streamed.startsWith(text)) {
          this.streamed[kind] = streamed.slice(text.length);
          return [];
        }
        this.streamed[kind] = '';
        const rest = text.startsWith(streamed) ? text.slice(streamed.length) : text;
        return rest === '' ? [] : [chunk(kind, rest)];
      }
      case 'tool_call_request':
        return [this.toolCall(event)];
      case 'tool_call_start':
        return this.toolNames.has(event.id)
          ? [{ sessionUpdate: 'tool_call_update', toolCallId: event.id, status: 'in_progress' }]
          : [];
      case 'tool_call_response':
        return this.toolNames.has(event.id) ? [this.toolResult(event)] : [];
      case 'turn_start':
      case 'system_prompt':
      case 'usage':
      case 'compaction':
      case 'inquiry_request':
      case 'inquiry_response':
      case 'turn_end':
      case 'config_delta':
      case 'checkpoint':
      case 'undo':
        return [];
    }
  }

  private toolCall(event: EventOf<'tool_call_request'>): SessionUpdate {
    this.toolNames.set(event.id, event.name);
    this.toolArguments.set(event.id, event.arguments);
    const locations = toolLocationsOf(event.name, event.arguments, this.workspaceRoot);
    const diffs = toolDiffsOf(event.name, event.arguments, this.workspaceRoot);
    return {
      sessionUpdate: 'tool_call',
      toolCallId: event.id,
      title: toolTitleOf(event.name, event.arguments),
      kind: toolKindOf(event.name),
      status: 'pending',
      rawInput: event.arguments,
      ...(locations.length > 0 ? { locations } : {}),
      ...(diffs.length > 0 ? { content: diffs } : {}),
    };
  }

  private toolResult(event: EventOf<'tool_call_response'>): SessionUpdate {
    const name = this.toolNames.get(event.id)!;
    const diffs = event.is_error ? [] : toolDiffsOf(name, this.toolArguments.get(event.id), this.workspaceRoot);
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: event.id,
      status: event.is_error ? 'failed' : 'completed',
      content: [...diffs, textContent(event.content)],
      rawOutput: { content: event.content, is_error: event.is_error, outcome: event.outcome },
    };
  }

  /** The tool call an inquiry is about, as a permission request shows it. */
  toolCallOf(
    toolCallId: string,
  ):
    | { title: string; kind: ToolKind; rawInput: unknown; locations: ToolCallLocation[]; content: ToolCallContent[] }
    | undefined {
    const name = this.toolNames.get(toolCallId);
    if (name === undefined) return undefined;
    const argumentsValue = this.toolArguments.get(toolCallId);
    return {
      title: toolTitleOf(name, argumentsValue),
      kind: toolKindOf(name),
      rawInput: argumentsValue,
      locations: toolLocationsOf(name, argumentsValue, this.workspaceRoot),
      content: toolDiffsOf(name, argumentsValue, this.workspaceRoot),
    };
  }
}

function chunk(kind: 'message' | 'reasoning', text: string): SessionUpdate {
  return {
    sessionUpdate: kind === 'message' ? 'agent_message_chunk' : 'agent_thought_chunk',
    content: { type: 'text', text },
  };
}

/** How a run's result reads as an ACP stop reason; undefined when the turn failed (a JSON-RPC error instead). */
export function stopReasonOf(result: ResultObject): StopReason | undefined {
  switch (result.status) {
    case 'interrupted':
      return 'cancelled';
    case 'success':
    case 'denied':
    case 'deferred':
      return result.metadata.finish_reason === 'length' ? 'max_tokens' : 'end_turn';
    case 'error':
      if (result.error?.code === 'max_turns_exceeded') return 'max_turn_requests';
      if (result.error?.code === 'refused') return 'refusal';
      return undefined;
    case 'usage':
    case 'locked':
    case 'retryable':
      return undefined;
  }
}

/** One option of a permission request and the inquiry answer it gives. */
export interface PermissionChoice {
  option: PermissionOption;
  /** The answer sent to the run; `remember`: the editor's client gives it again, without asking, to this tool's later inquiries of the same kind in this turn. */
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

/**
 * A prompt's content as the user's message: text as it is; a resource link and an embedded
 * resource as context after it, named by URI (an embedded text resource with its content; binary
 * content is named, not inlined).
 */
export function messageOfPrompt(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case 'text':
        parts.push(block.text);
        break;
      case 'resource_link':
        parts.push(`[resource: ${block.uri}${block.name && block.name !== block.uri ? ` (${block.name})` : ''}]`);
        break;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource) parts.push(`<resource uri="${resource.uri}">\n${resource.text}\n</resource>`);
        else parts.push(`[binary resource: ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}]`);
        break;
      }
      case 'image':
      case 'audio':
        parts.push(`[${block.type} omitted: jp does not send ${block.type} to the model]`);
        break;
    }
  }
  return parts.join('\n\n');
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
