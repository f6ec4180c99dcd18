/**
 * The live log: the TurnHost of a run. An event is appended to the conversation's log (one write),
 * then sent to every client; a streamed piece goes to the clients and into the partial text a
 * client attaching mid-answer is given, until the event that holds it is appended.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import type { ConversationLog } from '../conversation/log.ts';
import type { Inquiry, PromptAction } from '../inquiry/types.ts';
import type { Logger } from '../output/logger.ts';
import type { Secrets } from '../redact.ts';
import type { EditorFiles, EditorTerminal, ProcessTracker } from '../tools/tool.ts';
import type { TurnHooks } from '../turn/hook-port.ts';
import type { ClientAnswer, ToolOutputPiece, TurnHost } from '../turn/host.ts';
import type { RunClients } from './clients.ts';

export class LiveLog implements TurnHost {
  readonly processes: ProcessTracker;
  readonly secrets: Secrets;
  readonly hooks: TurnHooks | undefined;
  private readonly log: ConversationLog;
  private readonly logger: Logger;
  private readonly clients: RunClients;
  private readonly partialText = { message: '', reasoning: '' };

  constructor(options: {
    log: ConversationLog;
    logger: Logger;
    clients: RunClients;
    processes: ProcessTracker;
    secrets: Secrets;
    hooks?: TurnHooks;
  }) {
    this.secrets = options.secrets;
    this.hooks = options.hooks;
    this.log = options.log;
    this.logger = options.logger;
    this.clients = options.clients;
    this.processes = options.processes;
  }

  get eventCount(): number {
    return this.log.eventCount;
  }

  /** The text streamed and not yet in an appended event. */
  partial(): { message: string; reasoning: string } {
    return { ...this.partialText };
  }

  append(event: ConversationEvent): void {
    const seq = this.log.append(event);
    logEvent(this.logger, seq, event);
    if (event.type === 'chat_response') {
      if ('message' in event) this.partialText.message = this.partialText.message.slice(event.message.length);
      else this.partialText.reasoning = this.partialText.reasoning.slice(event.reasoning.length);
    }
    this.clients.broadcast({ type: 'event', seq, event });
  }

  delta(piece: { kind: 'message' | 'reasoning'; text: string }): void {
    this.partialText[piece.kind] += piece.text;
    const event =
      piece.kind === 'message'
        ? { type: 'chat_response', timestamp: now(), message: piece.text }
        : { type: 'chat_response', timestamp: now(), reasoning: piece.text };
    this.clients.broadcast({ type: 'delta', event });
  }

  notice(level: 'info' | 'warning', text: string): void {
    const message = this.secrets.redact(text);
    this.logger[level === 'info' ? 'info' : 'warn'](message);
    this.clients.broadcast({ type: 'notice', level, message });
  }

  toolOutput(piece: ToolOutputPiece): void {
    this.clients.broadcast({ type: 'tool_output', ...piece });
  }

  activity(text: string): void {
    this.clients.broadcast({ type: 'activity', text: this.secrets.redact(text) });
  }

  sync(): void {
    this.log.sync();
  }

  close(): void {
    this.log.close();
  }

  hasPromptingClient(): boolean {
    return this.clients.hasPromptingClient();
  }

  askClient(id: string, inquiry: Inquiry, signal: AbortSignal, ifDetached?: PromptAction): Promise<ClientAnswer> {
    return this.clients.askClient(id, inquiry, signal, ifDetached);
  }

  inquiryResolved(id: string, by: string): void {
    this.clients.broadcast({ type: 'inquiry_resolved', id, by });
  }

  editorFiles(): EditorFiles | undefined {
    return this.clients.editorFiles();
  }

  editorTerminal(toolCallId: string): EditorTerminal | undefined {
    return this.clients.editorTerminal(toolCallId);
  }
}

/** debug: every persisted event; info: the ones that say what the run did. */
function logEvent(logger: Logger, seq: number, event: ConversationEvent): void {
  switch (event.type) {
    case 'tool_call_request':
      logger.info('tool call', { seq, id: event.id, tool: event.name });
      return;
    case 'tool_call_response':
      logger.info('tool result', { seq, id: event.id, is_error: event.is_error, characters: event.content.length });
      return;
    case 'inquiry_response':
      logger.info('inquiry answered', { seq, id: event.id, by: event.by });
      return;
    case 'turn_end':
      logger.info('turn ended', { seq, status: event.status });
      return;
    default:
      logger.debug('event', { seq, type: event.type });
  }
}
