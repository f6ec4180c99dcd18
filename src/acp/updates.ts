/**
 * What an editor is sent, made from what jp records (DESIGN §14): conversation events become ACP
 * `session/update` notifications, and a run's result becomes a stop reason. Pure: no I/O, types
 * only from the SDK.
 */
import path from 'node:path';
import type { SessionUpdate, StopReason, ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import type { ConversationEvent, EventOf } from '../conversation/events.ts';
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

export function textContent(text: string): ToolCallContent {
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
  /** Calls sent to the editor that have no final status yet (completed or failed). */
  private readonly openCalls = new Set<string>();
  /** The editor's terminal each call's command runs in (terminal-runs.ts). */
  private readonly terminals = new Map<string, string>();

  /** The model's context window in tokens, when known: each request's usage is sent as `usage_update`. */
  private readonly contextWindowTokens: number | undefined;

  constructor(workspaceRoot: string, contextWindowTokens?: number) {
    this.workspaceRoot = workspaceRoot;
    this.contextWindowTokens = contextWindowTokens;
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
        return replay
          ? [
              ...(event.content !== ''
                ? [
                    {
                      sessionUpdate: 'user_message_chunk' as const,
                      content: { type: 'text' as const, text: event.content },
                    },
                  ]
                : []),
              ...(event.images ?? []).map((image) => ({
                sessionUpdate: 'user_message_chunk' as const,
                content: { type: 'image' as const, mimeType: image.media_type, data: image.data },
              })),
            ]
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
      case 'usage':
        return this.usage(event);
      case 'turn_start':
      case 'system_prompt':
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

  /**
   * A final status for each call that has none: the turn ended (cancelled, stopped, deferred)
   * before the call did, and an editor must not show it pending or running for ever. Its content
   * stays as it was; `reason` goes in its raw output.
   */
  closeOpenCalls(reason: string): SessionUpdate[] {
    const updates: SessionUpdate[] = [...this.openCalls].map((toolCallId) => ({
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status: 'failed',
      rawOutput: { is_error: true, outcome: 'not_finished', reason },
    }));
    this.openCalls.clear();
    return updates;
  }

  /**
   * How full the context is after a request of the agent loop: what it sent and got back, of the
   * model's window (a summary request or an answered question says nothing about the next request).
   */
  private usage(event: EventOf<'usage'>): SessionUpdate[] {
    if (event.purpose !== 'step' || this.contextWindowTokens === undefined) return [];
    const { input_tokens: input, output_tokens: output } = event.usage;
    if (input === null && output === null) return [];
    return [{ sessionUpdate: 'usage_update', used: (input ?? 0) + (output ?? 0), size: this.contextWindowTokens }];
  }

  private toolCall(event: EventOf<'tool_call_request'>): SessionUpdate {
    this.openCalls.add(event.id);
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

  /** The call's command runs in the editor's terminal `terminalId`: the call shows it, live. */
  embedTerminal(toolCallId: string, terminalId: string): SessionUpdate {
    this.terminals.set(toolCallId, terminalId);
    return { sessionUpdate: 'tool_call_update', toolCallId, content: [{ type: 'terminal', terminalId }] };
  }

  private toolResult(event: EventOf<'tool_call_response'>): SessionUpdate {
    this.openCalls.delete(event.id);
    const name = this.toolNames.get(event.id)!;
    const diffs = event.is_error ? [] : toolDiffsOf(name, this.toolArguments.get(event.id), this.workspaceRoot);
    const terminalId = this.terminals.get(event.id);
    const terminal: ToolCallContent[] = terminalId === undefined ? [] : [{ type: 'terminal', terminalId }];
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: event.id,
      status: event.is_error ? 'failed' : 'completed',
      content: [...terminal, ...diffs, textContent(event.content)],
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
