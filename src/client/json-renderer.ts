/**
 * `--format json`: NDJSON on both streams (DESIGN §5). Every line has v, type, ts and
 * conversation_id. stdout carries the run's data (assistant text, tool calls and results, inquiry
 * decisions) and always ends with exactly one `result` line; stderr carries chrome (status, warnings,
 * errors). The schemas of every line are in `schema/`.
 */
import { outputLine } from '../report/envelope.ts';
import type { ConversationEvent } from '../conversation/events.ts';
import type { ResultObject } from '../report/result.ts';
import { chatResponseParts, StreamedText, type Renderer } from './renderer.ts';
import { counted } from '../plural.ts';
import type { TerminalOutput } from './terminal-output.ts';

export class JsonRenderer implements Renderer {
  readonly output: TerminalOutput;
  private conversationId: string | null;
  private readonly streamed = new StreamedText();
  private readonly toolNames = new Map<string, string>();
  private finished = false;
  /** The latest `ts` written: no line is stamped earlier than one before it. */
  private lastTimestamp = '';

  constructor(output: TerminalOutput, conversationId: string | null) {
    this.output = output;
    this.conversationId = conversationId;
  }

  private line(target: 'stdout' | 'stderr', type: string, fields: Record<string, unknown>): void {
    this.output.write(target, outputLine(type, fields, this.conversationId, this.timestamp(new Date().toISOString())));
  }

  /** `candidate`, or the last timestamp written when that is later (the server's clock stamps results). */
  private timestamp(candidate: string): string {
    if (candidate > this.lastTimestamp) this.lastTimestamp = candidate;
    return this.lastTimestamp;
  }

  private text(kind: 'message' | 'reasoning', text: string): void {
    if (text === '') return;
    this.line('stdout', kind === 'message' ? 'assistant_text' : 'assistant_reasoning', { text });
  }

  delta(kind: 'message' | 'reasoning', text: string): void {
    this.streamed.streamedPiece(kind, text);
    this.text(kind, text);
  }

  event(event: ConversationEvent, replayed: boolean): void {
    const text = chatResponseParts(event);
    if (text) {
      this.text(text.kind, replayed ? text.text : this.streamed.unseenPart(text.kind, text.text));
      return;
    }
    switch (event.type) {
      case 'chat_request':
        if (replayed) this.line('stdout', 'user_message', { text: event.content });
        break;
      case 'tool_call_request':
        this.toolNames.set(event.id, event.name);
        this.line('stdout', 'tool_call', {
          id: event.id,
          name: event.name,
          arguments: event.arguments,
          ...(event.provider_executed ? { provider_executed: true } : {}),
        });
        break;
      case 'tool_call_response':
        this.line('stdout', 'tool_result', {
          id: event.id,
          name: this.toolNames.get(event.id) ?? null,
          outcome: event.outcome ?? (event.is_error ? 'error' : 'ok'),
          is_error: event.is_error,
          content: event.content,
          ...(event.provider_executed ? { provider_executed: true } : {}),
        });
        break;
      case 'compaction':
        this.line('stdout', 'compaction', { summary: event.summary, replaces: event.replaces, reason: event.reason });
        break;
      case 'inquiry_request':
        this.line('stdout', 'inquiry_request', {
          id: event.id,
          tool_call_id: event.tool_call_id,
          inquiry: event.inquiry,
        });
        break;
      case 'inquiry_response':
        this.line('stdout', 'inquiry_response', {
          id: event.id,
          answer: event.answer,
          by: event.by,
          action: event.action ?? null,
          reason: event.reason ?? null,
          ...(event.hook !== undefined ? { hook: event.hook } : {}),
        });
        break;
      default:
        break;
    }
  }

  /** Tool results of a resumed turn are named after their calls, which came before this run. */
  resuming(events: readonly ConversationEvent[]): void {
    for (const event of events) if (event.type === 'tool_call_request') this.toolNames.set(event.id, event.name);
    this.line('stderr', 'status', {
      message: `resuming the incomplete turn of ${this.conversationId ?? 'the conversation'}`,
    });
  }

  notice(level: 'info' | 'warning', message: string): void {
    this.line('stderr', level === 'warning' ? 'warning' : 'status', { message });
  }

  status(message: string): void {
    this.line('stderr', 'status', { message });
  }

  /** Writes the error on stderr (when there is one) and the result as stdout's last line. */
  finish(result: ResultObject): void {
    if (this.finished) return;
    this.finished = true;
    this.conversationId = result.conversation_id;
    const cid = result.conversation_id ?? '';
    if (result.error && result.status !== 'interrupted')
      this.line('stderr', 'error', { ...result.error, exit_code: result.exit_code });
    else if (result.status === 'deferred') {
      const pending = result.pending_inquiry;
      this.line('stderr', 'status', {
        message:
          `waiting for input${pending ? ` (${pending.tool}: ${pending.kind})` : ''}; resume with: jp query ` +
          `--continue --id=${cid}`,
      });
    } else if (result.status === 'interrupted') {
      this.line('stderr', 'status', {
        message: `interrupted; the turn is saved; resume with: jp query --continue --id=${cid}`,
      });
    } else if (result.status === 'denied') {
      this.line('stderr', 'warning', {
        message:
          `the turn completed, ` +
          `but ${counted(result.permission_denials.length + result.unanswered.length, 'inquiry', 'inquiries')} ` +
          `could not be answered because no user was available`,
      });
    }
    this.output.write('stdout', JSON.stringify({ ...result, ts: this.timestamp(result.ts) }) + '\n');
  }

  /** A line for `--detach` on stdout. */
  detached(conversationId: string, pid: number | null): void {
    this.conversationId = conversationId;
    this.line('stdout', 'detached', { pid });
  }

  flush(): Promise<void> {
    return this.output.flush();
  }
}
