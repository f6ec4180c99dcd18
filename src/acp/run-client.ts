/**
 * The editor's client of one run (one prompt turn): it speaks the query server's protocol like the
 * terminal client does, and turns what the server sends into ACP for the editor: events and
 * streamed text into `session/update`, inquiries into permission requests or elicitations, the
 * result into a stop reason. It owns the run: if the editor goes away, the run stops (saved,
 * resumable), as it does when a foreground `jp query` dies.
 */
import type { ToolCallUpdate } from '@agentclientprotocol/sdk';
import { RunError } from '../errors.ts';
import { encodeAnswer } from '../inquiry/answer.ts';
import type { Inquiry, Question } from '../inquiry/types.ts';
import type { Logger } from '../output/logger.ts';
import { MAX_LINE_BYTES } from '../protocol/framing.ts';
import type { ServerLink } from '../protocol/link.ts';
import { PROTOCOL_VERSION, type ServerMessage } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';
import type { ResultObject } from '../report/result.ts';
import { editorErrorText, type EditorPeer } from './editor-peer.ts';
import { inquiryRequestOf, permissionContentOf, permissionTitleOf, type PermissionChoice } from './permissions.ts';
import { elicitationOf, questionAsChoices } from './questions.ts';
import { TerminalRuns } from './terminal-runs.ts';
import type { UpdateMapper } from './updates.ts';

interface PendingInquiry {
  id: string;
  inquiry: Inquiry;
  controller: AbortController;
}

export class AcpRunClient {
  private readonly link: ServerLink<RunPayloads>;
  private readonly peer: EditorPeer;
  private readonly mapper: UpdateMapper;
  private readonly logger: Logger;
  private readonly conversationId: string;
  private readonly capability: string;
  /** The tool call each inquiry is about, from its inquiry_request event (which comes first). */
  private readonly toolCallOfInquiry = new Map<string, string>();
  private readonly inquiries: PendingInquiry[] = [];
  /** Commands in the editor's terminals, when it offers them. */
  private readonly terminalRuns: TerminalRuns | undefined;
  /** File requests the editor is answering; aborted when the turn is cancelled. */
  private readonly fileRequests = new Set<AbortController>();
  private asking = false;
  /** Answers the user chose "for this turn" that the run does not remember itself, by inquiry kind and tool. */
  private readonly rememberedAnswers = new Map<string, PermissionChoice['answer']>();
  private settle: (outcome: { result: ResultObject } | { error: Error }) => void = () => {};
  private settled = false;

  constructor(options: {
    link: ServerLink<RunPayloads>;
    peer: EditorPeer;
    mapper: UpdateMapper;
    logger: Logger;
    conversationId: string;
    /** The run's capability (DESIGN §8): shown in the hello. */
    capability: string;
  }) {
    this.capability = options.capability;
    this.link = options.link;
    this.peer = options.peer;
    this.mapper = options.mapper;
    this.logger = options.logger;
    this.conversationId = options.conversationId;
    this.terminalRuns = options.peer.terminal
      ? new TerminalRuns(options.peer.terminal, {
          send: (message) => this.link.send(message),
          update: (update) => this.peer.update(update),
          mapper: options.mapper,
          logger: options.logger,
        })
      : undefined;
  }

  /** Resolves with the run's result; rejects when the server refused this client or went away without one. */
  async run(): Promise<ResultObject> {
    const outcome = new Promise<{ result: ResultObject } | { error: Error }>((resolve) => (this.settle = resolve));
    this.link.onMessage((message) => this.receive(message));
    this.link.onClose(() =>
      this.finish({
        error: new RunError('server_lost', `the query server for ${this.conversationId} stopped without a result`, {
          hint: `What it did is saved; send a new prompt, or \`jp query --continue --id=${this.conversationId}\`.`,
        }),
      }),
    );
    const files = { read: this.peer.readTextFile !== undefined, write: this.peer.writeTextFile !== undefined };
    this.link.send({
      type: 'hello',
      version: PROTOCOL_VERSION,
      capability: this.capability,
      can_prompt: true,
      owner: true,
      ...(files.read || files.write ? { editor_files: files } : {}),
      ...(this.terminalRuns ? { editor_terminal: true } : {}),
    });
    const settled = await outcome;
    if ('error' in settled) throw settled.error;
    return settled.result;
  }

  /** session/cancel: stop the turn as Ctrl+C → stop does (saved, resumable). */
  cancel(): void {
    if (this.settled) return;
    for (const pending of this.inquiries) pending.controller.abort();
    for (const controller of this.fileRequests) controller.abort();
    this.terminalRuns?.killAll();
    this.link.send({ type: 'shutdown', reason: 'interrupt' });
  }

  /** The editor went away: the run stops, as when the client that owns it dies. */
  close(): void {
    for (const pending of this.inquiries) pending.controller.abort();
    this.terminalRuns?.killAll();
    this.link.close();
  }

  private finish(outcome: { result: ResultObject } | { error: Error }): void {
    if (this.settled) return;
    this.settled = true;
    for (const pending of this.inquiries) pending.controller.abort();
    // Every call the editor was shown gets its final status before the prompt is answered.
    const reason =
      'result' in outcome
        ? outcome.result.status === 'interrupted'
          ? 'the turn was cancelled before the call finished'
          : `the turn ended (${outcome.result.status}) before the call finished`
        : `the run ended before the call finished: ${outcome.error.message}`;
    for (const update of this.mapper.closeOpenCalls(reason)) this.peer.update(update);
    this.terminalRuns?.releaseAll();
    this.settle(outcome);
  }

  private receive(message: ServerMessage<RunPayloads>): void {
    if (this.settled) return;
    switch (message.type) {
      case 'hello':
        return;
      case 'event': {
        const event = message.event;
        if (event.type === 'inquiry_request') this.toolCallOfInquiry.set(event.id, event.tool_call_id);
        for (const update of this.mapper.event(event, false)) this.peer.update(update);
        if (event.type === 'tool_call_response') this.terminalRuns?.releaseCall(event.id);
        return;
      }
      case 'delta': {
        const event = message.event as { message?: string; reasoning?: string };
        const updates =
          typeof event.message === 'string'
            ? this.mapper.delta('message', event.message)
            : typeof event.reasoning === 'string'
              ? this.mapper.delta('reasoning', event.reasoning)
              : [];
        for (const update of updates) this.peer.update(update);
        return;
      }
      case 'inquiry':
        this.inquiries.push({ id: message.id, inquiry: message.inquiry, controller: new AbortController() });
        void this.drainInquiries();
        return;
      case 'inquiry_resolved': {
        const pending = this.inquiries.find((entry) => entry.id === message.id);
        pending?.controller.abort();
        return;
      }
      case 'terminal_request':
        if (this.terminalRuns) void this.terminalRuns.run(message);
        else this.link.send({ type: 'terminal_response', id: message.id, error: 'this editor has no terminals' });
        return;
      case 'terminal_kill':
        this.terminalRuns?.kill(message.id);
        return;
      case 'file_request':
        void this.fileRequest(message.id, message.operation, message.path, message.content);
        return;
      case 'interrupt_menu':
        // Never asked for (this client stops with shutdown): stop is what the editor's cancel means.
        this.link.send({ type: 'interrupt_action', action: 'stop' });
        return;
      case 'notice':
        this.peer.notice(message.level, message.message);
        return;
      case 'turn_complete':
        this.finish({ result: message.result });
        return;
      case 'process_exiting':
        return;
      case 'error':
        this.finish({ error: new RunError(message.code, message.message) });
        return;
    }
  }

  /** A file tool reading or writing through the editor; a read too large for one protocol line is left to the disk. */
  private async fileRequest(
    id: string,
    operation: 'read' | 'write',
    file: string,
    content: string | undefined,
  ): Promise<void> {
    const controller = new AbortController();
    this.fileRequests.add(controller);
    try {
      if (operation === 'read') {
        if (!this.peer.readTextFile) return this.link.send({ type: 'file_response', id });
        const text = await this.peer.readTextFile(file, controller.signal);
        const fits = Buffer.byteLength(JSON.stringify(text)) < MAX_LINE_BYTES - 1024;
        this.link.send(fits ? { type: 'file_response', id, content: text } : { type: 'file_response', id });
        return;
      }
      if (!this.peer.writeTextFile)
        return this.link.send({ type: 'file_response', id, error: 'the editor does not write files' });
      await this.peer.writeTextFile(file, content ?? '', controller.signal);
      this.link.send({ type: 'file_response', id });
    } catch (error) {
      const reason = controller.signal.aborted ? 'the turn was cancelled' : editorErrorText(error);
      this.logger.warn('an editor file request failed', { operation, path: file, error: reason });
      this.link.send({ type: 'file_response', id, error: reason });
    } finally {
      this.fileRequests.delete(controller);
    }
  }

  private async drainInquiries(): Promise<void> {
    if (this.asking) return;
    this.asking = true;
    try {
      for (let next = this.inquiries[0]; next; next = this.inquiries[0]) {
        try {
          await this.ask(next);
        } catch (error) {
          // The editor could not answer (it failed the request): the policy decides.
          this.logger.warn('the editor did not answer an inquiry', { id: next.id, error: editorErrorText(error) });
          if (!next.controller.signal.aborted) this.link.send({ type: 'inquiry_declined', id: next.id });
        }
        this.inquiries.shift();
      }
    } finally {
      this.asking = false;
    }
  }

  private async ask(pending: PendingInquiry): Promise<void> {
    const { id, inquiry, controller } = pending;
    if (controller.signal.aborted) return;
    const toolCallId = this.toolCallOfInquiry.get(id);
    const call = toolCallId === undefined ? undefined : this.mapper.toolCallOf(toolCallId);
    const request = inquiryRequestOf(inquiry);
    if (request.kind === 'question') {
      if (inquiry.kind !== 'tool_question') {
        this.link.send({ type: 'inquiry_declined', id });
        return;
      }
      if (this.peer.elicit) await this.askWithForm(pending, inquiry.question, toolCallId);
      else await this.askWithChoices(pending, inquiry.question, toolCallId ?? id, call);
      return;
    }
    const rememberedKey = `${inquiry.kind} ${inquiry.tool}`;
    const remembered = this.rememberedAnswers.get(rememberedKey);
    if (remembered !== undefined) {
      this.link.send({ type: 'inquiry_response', id, answer: encodeAnswer(remembered) });
      return;
    }
    // The whole payload the user approves: the call's arguments and diffs, or the result to be sent.
    const content = permissionContentOf(inquiry, call?.content ?? []);
    const toolCall: ToolCallUpdate = {
      toolCallId: toolCallId ?? id,
      title: permissionTitleOf(inquiry, call?.title),
      ...(call ? { kind: call.kind, rawInput: call.rawInput } : {}),
      ...(call && call.locations.length > 0 ? { locations: call.locations } : {}),
      ...(content.length > 0 ? { content } : {}),
    };
    const outcome = await this.peer.requestPermission(
      toolCall,
      request.choices.map((choice) => choice.option),
      controller.signal,
    );
    if (controller.signal.aborted) return;
    const choice =
      outcome.outcome === 'selected'
        ? request.choices.find((entry) => entry.option.optionId === outcome.optionId)
        : undefined;
    if (!choice) {
      // Cancelled (or an option that was not offered): a cancelled inquiry, settled by the policy.
      this.link.send({ type: 'inquiry_declined', id });
      return;
    }
    if (choice.remember) this.rememberedAnswers.set(rememberedKey, choice.answer);
    this.link.send({ type: 'inquiry_response', id, answer: encodeAnswer(choice.answer) });
  }

  /** A question as a form, for an editor that offers them. */
  private async askWithForm(
    pending: PendingInquiry,
    question: Question,
    toolCallId: string | undefined,
  ): Promise<void> {
    const { id, controller } = pending;
    const elicitation = elicitationOf(question);
    const response = await this.peer.elicit!(
      permissionTitleOf(pending.inquiry, undefined),
      elicitation.requestedSchema,
      toolCallId,
      controller.signal,
    );
    if (controller.signal.aborted) return;
    const value = elicitation.answerOf(response);
    this.link.send(
      value === undefined
        ? { type: 'inquiry_declined', id }
        : { type: 'inquiry_response', id, answer: encodeAnswer({ decision: 'answer', value }) },
    );
  }

  /**
   * A question for an editor without forms: its answers as the options of a permission request
   * about the asking call; one that needs typed input is declined with what it needs, for the model.
   */
  private async askWithChoices(
    pending: PendingInquiry,
    question: Question,
    toolCallId: string,
    call: ReturnType<UpdateMapper['toolCallOf']>,
  ): Promise<void> {
    const { id, controller } = pending;
    const put = questionAsChoices(question);
    if ('unasked' in put) {
      this.link.send({ type: 'inquiry_declined', id, reason: put.unasked });
      return;
    }
    const toolCall: ToolCallUpdate = {
      toolCallId,
      title: permissionTitleOf(pending.inquiry, undefined),
      ...(call ? { kind: call.kind, rawInput: call.rawInput } : {}),
    };
    const outcome = await this.peer.requestPermission(
      toolCall,
      put.choices.map((choice) => choice.option),
      controller.signal,
    );
    if (controller.signal.aborted) return;
    const choice =
      outcome.outcome === 'selected'
        ? put.choices.find((entry) => entry.option.optionId === outcome.optionId)
        : undefined;
    this.link.send(
      choice === undefined
        ? { type: 'inquiry_declined', id }
        : { type: 'inquiry_response', id, answer: encodeAnswer({ decision: 'answer', value: choice.answer }) },
    );
  }
}
