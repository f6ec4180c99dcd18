/**
 * The terminal client of a query server, for a foreground `jp query` and for `attach`. It renders
 * the server's events for its own terminal and format, shows forwarded inquiries on /dev/tty, and
 * turns keys into protocol messages: Ctrl+C (SIGINT) asks for the interrupt menu (a second one
 * stops), Ctrl+Z (SIGTSTP) detaches and leaves the run going.
 *
 * History shown before live events: none (a foreground run, whose server waits for this client),
 * the current turn (attach's default) or the last N content events plus the current turn, read from disk up to the
 * server's event count, then the server's buffer of streamed text, then live events: nothing is
 * shown twice or missed at the seams.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { isContentEvent } from '../conversation/events.ts';
import { readEventLog } from '../conversation/reader.ts';
import { encodeAnswer } from '../inquiry/answer.ts';
import type { Inquiry } from '../inquiry/types.ts';
import type { ServerLink } from '../protocol/link.ts';
import { PROTOCOL_VERSION, type InterruptAction, type ServerHello, type ServerMessage } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';
import type { ResultObject } from '../report/result.ts';
import { PromptCancelled, PromptDetached, PromptInterrupted, type TerminalPrompter } from './prompts.ts';
import type { KeyHandlers, TerminalInput } from './terminal-input.ts';
import type { Renderer } from './renderer.ts';

/**
 * What a client shows before live events: nothing (a new turn), the turn it resumes summarised
 * (`resume`: a foreground `--continue`), the current turn, or the last N content events.
 */
/**
 * What a client shows before live events: nothing, the turn being resumed (from the log as the
 * command that started the run read it, under the lock: it is not read again), the current turn,
 * or the last N content events.
 */
export type HistoryMode = 'none' | { resume: readonly ConversationEvent[] } | 'current-turn' | { tail: number };

export interface TerminalClientOptions {
  link: ServerLink<RunPayloads>;
  renderer: Renderer;
  /** Undefined when this client cannot prompt (no /dev/tty, --non-interactive, CI). */
  prompter: TerminalPrompter | undefined;
  readOnly: boolean;
  /**
   * The terminal's keyboard of a client at a terminal that does not prompt (read-only): jp reads
   * the keys itself while the run streams, as a prompting client does (no echo; Ctrl+C leaves).
   */
  keyboard?: TerminalInput;
  /**
   * This client started the run in the foreground and owns it until it detaches (DESIGN §8): if it
   * goes away any other way, the run stops. An attached client never owns the run.
   */
  owner: boolean;
  /** The run's capability, shown in the hello (DESIGN §8 "Capability"). */
  capability: string;
  history: HistoryMode;
  eventsFile: string;
  conversationId: string;
}

export type ClientOutcome =
  | { kind: 'result'; result: ResultObject }
  /** `open`: the inquiry that was open or waiting when this client left, and what becomes of it. */
  | { kind: 'detached'; open?: { tool: string; ifDetached: string | undefined } }
  | { kind: 'refused'; code: string; message: string }
  /** The connection ended without a result: the server died or went away. */
  | { kind: 'lost'; serverPid: number | undefined };

interface QueuedInquiry {
  id: string;
  inquiry: Inquiry;
  controller: AbortController;
  /** What becomes of it if this client detaches (a PromptAction, from the server). */
  ifDetached: string | undefined;
}

/** Chooses the history events a client shows before live ones. */
export function selectHistory(events: readonly ConversationEvent[], mode: HistoryMode): ConversationEvent[] {
  if (mode === 'none' || (typeof mode === 'object' && 'resume' in mode)) return [];
  if (mode === 'current-turn') {
    for (let index = events.length - 1; index >= 0; index--)
      if (events[index]!.type === 'turn_start') return events.slice(index);
    return [];
  }
  const tail = mode.tail;
  if (tail <= 0) return [];
  // RFD 025: the last N content events before the current turn, plus the current turn.
  let currentTurn = events.length;
  for (let index = events.length - 1; index >= 0; index--) {
    if (events[index]!.type === 'turn_start') {
      currentTurn = index;
      break;
    }
  }
  let seen = 0;
  for (let index = currentTurn - 1; index >= 0; index--) {
    if (isContentEvent(events[index]!) && ++seen === tail) return events.slice(index);
  }
  return [...events];
}

export class TerminalClient {
  private readonly options: TerminalClientOptions;
  private settle: (outcome: ClientOutcome) => void = () => {};
  private settled = false;
  private serverPid: number | undefined;
  private readonly inquiries: QueuedInquiry[] = [];
  private prompting = false;
  private menuOpen = false;
  private interruptRequested = false;
  private menuController: AbortController | undefined;
  private detaching = false;

  constructor(options: TerminalClientOptions) {
    this.options = options;
    if (options.prompter && !options.readOnly) options.renderer.callsShownByPrompts = true;
  }

  run(): Promise<ClientOutcome> {
    const { link } = this.options;
    const outcome = new Promise<ClientOutcome>((resolve) => (this.settle = resolve));
    link.onMessage((message) => this.receive(message));
    link.onClose(() =>
      this.finish(this.detaching ? this.detachedOutcome() : { kind: 'lost', serverPid: this.serverPid }),
    );
    link.send({
      type: 'hello',
      version: PROTOCOL_VERSION,
      capability: this.options.capability,
      can_prompt: this.options.prompter !== undefined && !this.options.readOnly,
      read_only: this.options.readOnly,
      ...(this.options.owner ? { owner: true } : {}),
    });
    return outcome;
  }

  private finish(outcome: ClientOutcome): void {
    if (this.settled) return;
    this.settled = true;
    for (const queued of this.inquiries) queued.controller.abort();
    this.menuController?.abort();
    // The terminal closes once the aborted prompts have drawn their last line.
    const prompter = this.options.prompter;
    void this.options.renderer.output.idle().then(() => prompter?.close());
    this.options.keyboard?.close();
    this.settle(outcome);
  }

  private receive(message: ServerMessage<RunPayloads>): void {
    if (this.settled) return;
    const { renderer } = this.options;
    switch (message.type) {
      case 'hello':
        this.greeted(message);
        return;
      case 'event': {
        const event = message.event;
        // The owner typed the message it sent; an attached client shows it as history shows it
        // (attaching right after --detach, the turn may start after the history was read).
        renderer.event(event, !this.options.owner && event.type === 'chat_request');
        return;
      }
      case 'delta': {
        const event = message.event as { message?: string; reasoning?: string };
        if (typeof event.message === 'string') renderer.delta('message', event.message);
        else if (typeof event.reasoning === 'string') renderer.delta('reasoning', event.reasoning);
        return;
      }
      case 'inquiry':
        this.enqueue(message.id, message.inquiry, message.if_detached);
        return;
      case 'inquiry_resolved': {
        const queued = this.inquiries.find((entry) => entry.id === message.id);
        if (queued) {
          queued.controller.abort();
          this.inquiries.splice(this.inquiries.indexOf(queued), 1);
        }
        return;
      }
      case 'interrupt_menu':
        void this.showMenu(message.options);
        return;
      case 'notice':
        renderer.notice(message.level, message.message);
        return;
      case 'tool_output':
        renderer.toolOutput?.(message.id, message.stream, message.text, message.omitted ?? 0);
        return;
      case 'activity':
        renderer.activity?.(message.text);
        return;
      case 'turn_complete':
        this.finish({ kind: 'result', result: message.result });
        return;
      case 'process_exiting':
        return;
      case 'error':
        this.finish({ kind: 'refused', code: message.code, message: message.message });
        return;
    }
  }

  private greeted(hello: ServerHello): void {
    this.serverPid = hello.pid;
    const history = this.options.history;
    if (typeof history === 'object' && 'resume' in history) {
      this.options.renderer.resuming(history.resume.slice(0, hello.event_count));
    } else if (history !== 'none') {
      const parsed = readEventLog(this.options.eventsFile);
      for (const event of selectHistory(parsed.events.slice(0, hello.event_count), history))
        this.options.renderer.event(event, true);
    }
    if (hello.partial.reasoning) this.options.renderer.delta('reasoning', hello.partial.reasoning);
    if (hello.partial.message) this.options.renderer.delta('message', hello.partial.message);
  }

  // ---- inquiries -----------------------------------------------------------------------------

  private enqueue(id: string, inquiry: Inquiry, ifDetached: string | undefined): void {
    this.inquiries.push({ id, inquiry, controller: new AbortController(), ifDetached });
    void this.drainInquiries();
  }

  private async drainInquiries(): Promise<void> {
    const prompter = this.options.prompter;
    if (this.prompting || this.menuOpen || !prompter) return;
    const next = this.inquiries[0];
    if (!next) return;
    this.prompting = true;
    try {
      const sandbox = this.options.renderer.sandboxOfInquiry?.(next.id);
      const answer = await prompter.ask(next.inquiry, next.controller.signal, sandbox === undefined ? {} : { sandbox });
      this.inquiries.shift();
      this.options.link.send({ type: 'inquiry_response', id: next.id, answer: encodeAnswer(answer) });
    } catch (error) {
      if (error instanceof PromptInterrupted) {
        this.prompting = false;
        this.interrupt();
        return;
      }
      if (error instanceof PromptDetached) {
        this.prompting = false;
        this.detach();
        return;
      }
      if (!(error instanceof PromptCancelled)) throw error;
      if (!next.controller.signal.aborted) {
        // The terminal is gone (it could not be opened): let the run go on without this client,
        // under the detached policy, rather than leave the server waiting for an answer.
        this.prompting = false;
        this.detach();
        return;
      }
      // Settled elsewhere (inquiry_resolved) it is gone already: remove it only if it is still queued.
      const index = this.inquiries.indexOf(next);
      if (index !== -1) this.inquiries.splice(index, 1);
    } finally {
      this.prompting = false;
    }
    void this.drainInquiries();
  }

  // ---- keys and signals ----------------------------------------------------------------------

  /**
   * Ctrl+C: the first asks the server for the interrupt menu, a second one stops the run. A client
   * that neither owns the run nor prompts only watches: Ctrl+C leaves it, the run goes on.
   */
  interrupt(): void {
    if (this.settled) return;
    const { link, prompter, readOnly, owner } = this.options;
    if (readOnly || (!prompter && !owner)) {
      this.detach();
      return;
    }
    if (!prompter) {
      link.send({ type: 'shutdown', reason: 'interrupt' });
      return;
    }
    if (this.interruptRequested || this.menuOpen) {
      this.menuController?.abort();
      link.send({ type: 'interrupt_action', action: 'stop' });
      return;
    }
    this.interruptRequested = true;
    link.send({ type: 'signal', kind: 'interrupt' });
  }

  private async showMenu(options: InterruptAction[]): Promise<void> {
    const prompter = this.options.prompter;
    if (!prompter || this.settled) return;
    for (const queued of this.inquiries) queued.controller.abort();
    for (const queued of this.inquiries) queued.controller = new AbortController();
    this.menuOpen = true;
    this.menuController = new AbortController();
    let action: InterruptAction = 'stop';
    let reply: string | undefined;
    try {
      ({ action, reply } = await prompter.interruptMenu(options, this.menuController.signal));
    } catch (error) {
      if (error instanceof PromptDetached) {
        this.menuOpen = false;
        this.detach();
        return;
      }
      if (error instanceof PromptCancelled && this.menuController.signal.aborted) {
        this.menuOpen = false;
        this.interruptRequested = false;
        return;
      }
      action = 'stop';
    }
    this.menuOpen = false;
    this.interruptRequested = false;
    if (action === 'detach') {
      this.detach();
      return;
    }
    this.options.link.send({ type: 'interrupt_action', action, ...(reply !== undefined ? { reply } : {}) });
    // Only `continue` goes back to the open question; the others end what it belongs to.
    if (action === 'continue') void this.drainInquiries();
  }

  /** Reads the terminal's keys while the run streams (a client at a terminal); see TerminalPrompter.watchKeys. */
  watchKeys(handlers: KeyHandlers): void {
    if (this.settled) return;
    this.options.prompter?.watchKeys(handlers);
    this.options.keyboard?.watch(handlers);
  }

  unwatchKeys(): void {
    this.options.prompter?.unwatchKeys();
    this.options.keyboard?.unwatch();
  }

  /** Ctrl+Z: leave the run going without this client. */
  detach(): void {
    if (this.settled) return;
    this.detaching = true;
    const outcome = this.detachedOutcome();
    this.options.link.send({ type: 'disconnect', detach: !this.options.readOnly });
    this.options.link.close();
    this.finish(outcome);
  }

  /** A detach, with the inquiry this client leaves unanswered (the one open or next). */
  private detachedOutcome(): ClientOutcome {
    const open = this.options.readOnly ? undefined : this.inquiries[0];
    return open
      ? { kind: 'detached', open: { tool: open.inquiry.tool, ifDetached: open.ifDetached } }
      : { kind: 'detached' };
  }

  /**
   * SIGTERM to the client, or its stdout closed. The owner stops the run (saved, resumable); an
   * attached client only goes away, and the run goes on.
   */
  shutdown(reason: 'terminate' | 'output_closed'): void {
    if (this.settled) return;
    if (!this.options.owner) {
      this.leave();
      return;
    }
    this.options.link.send({ type: 'shutdown', reason });
  }

  /** An attached client goes away without deciding anything for the run. */
  private leave(): void {
    this.detaching = true;
    this.options.link.send({ type: 'disconnect' });
    this.options.link.close();
    this.finish({ kind: 'detached' });
  }
}
