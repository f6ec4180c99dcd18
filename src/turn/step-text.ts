/**
 * The text of one step (one streamed LLM response): its message and its reasoning, from the
 * pieces the provider streams to the chat_response events that persist them.
 *
 * Every piece is redacted as it arrives (StreamRedactor, src/redact.ts): the end of a piece that
 * could begin a secret is held back until the next piece of the same kind, or the step's end,
 * decides. What is released is shown at once (`sink.show`) and pending until persisted
 * (`sink.persist`, one chat_response per chunk); a chunk is persisted only after every piece of it
 * was shown, so clients and the log hold the same text. Message and reasoning are held apart.
 *
 * States and transitions:
 *   streaming (from construction)
 *     message(piece) / reasoning(piece): redacted, released, shown, pending; marks the step shown.
 *       When a released piece holds a newline or its kind has `flushThreshold` characters pending,
 *       each kind's pending text is persisted up to its last paragraph break ("\n\n"), or whole
 *       once it has `flushThreshold` characters (message first, then reasoning).
 *     reasoningEnd(metadata): the reasoning held back is released; the pending reasoning is
 *       persisted as one chunk carrying the metadata (a chunk with empty text when only metadata).
 *     source(source): kept for the step's last message chunk, once per url (or title and file).
 *     beforeToolCall(by): everything held back is released and everything pending persisted
 *       (reasoning, then message), so the tool call follows the text in the log; no sources, never
 *       `incomplete`. A call the provider runs itself marks the step shown; one jp runs does not.
 *   streaming → ended, by
 *     finish(): the provider finished the step. Everything is released and persisted; the last
 *       message chunk carries the sources, and is written with empty text when only sources remain.
 *     cut(): the step stopped before the provider's finish (an interruption, an error). Everything
 *       is released and persisted; when the step was shown, the last message chunk is marked
 *       `incomplete` (with empty text when no message text was pending), so the partial step is
 *       never sent back to the model. Nothing shown: nothing beyond the pending text is written.
 *   ended
 *     cut() does nothing (an error after the step's end); any other call is an internal error.
 */
import type { EventOf } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import type { ProviderMetadata, Source } from '../llm/types.ts';
import type { Secrets } from '../redact.ts';

/** Streamed text is persisted at a paragraph break, or once this many characters are pending. */
export const flushThreshold = 1000;

export type TextKind = 'message' | 'reasoning';

export interface StepTextSink {
  /** A released (redacted) piece for clients to show now; it is persisted later. */
  show(kind: TextKind, text: string): void;
  /** A chunk of the step's text to persist; every piece of it was shown before. */
  persist(event: EventOf<'chat_response'>): void;
}

export class StepText {
  private readonly redactors;
  private pending = { message: '', reasoning: '' };
  private readonly sources: Source[] = [];
  /** The step has shown something: text, reasoning, or a call the provider ran. */
  private shownAnything = false;
  private ended = false;

  constructor(
    private readonly sink: StepTextSink,
    secrets: Secrets,
  ) {
    this.redactors = { message: secrets.stream(), reasoning: secrets.stream() };
  }

  message(piece: string): void {
    this.streaming('message');
    this.shownAnything = true;
    this.release(this.redactors.message.push(piece), '');
  }

  reasoning(piece: string): void {
    this.streaming('reasoning');
    this.shownAnything = true;
    this.release('', this.redactors.reasoning.push(piece));
  }

  reasoningEnd(metadata?: ProviderMetadata): void {
    this.streaming('reasoningEnd');
    this.release('', this.redactors.reasoning.end());
    this.persistReasoning(this.pending.reasoning, metadata);
    this.pending.reasoning = '';
  }

  source(source: Source): void {
    this.streaming('source');
    if (!this.sources.some((known) => sameSource(known, source))) this.sources.push(source);
  }

  beforeToolCall(by: 'provider' | 'jp'): void {
    this.streaming('beforeToolCall');
    if (by === 'provider') this.shownAnything = true;
    this.persistAll(false, []);
  }

  finish(): void {
    this.streaming('finish');
    this.persistAll(false, this.sources);
    this.end();
  }

  /** Ended, nothing is pending or shown: nothing is written. */
  cut(): void {
    this.persistAll(this.shownAnything, []);
    this.end();
  }

  private end(): void {
    this.ended = true;
    this.shownAnything = false;
  }

  private streaming(call: string): void {
    if (this.ended) throw new Error(`internal error: StepText.${call} after the step ended`);
  }

  private release(message: string, reasoning: string): void {
    if (message) {
      this.pending.message += message;
      this.sink.show('message', message);
    }
    if (reasoning) {
      this.pending.reasoning += reasoning;
      this.sink.show('reasoning', reasoning);
    }
    // A paragraph can only have ended where a newline arrived.
    const due = (text: string, pending: string): boolean =>
      text !== '' && (pending.length >= flushThreshold || text.includes('\n'));
    if (due(message, this.pending.message) || due(reasoning, this.pending.reasoning)) this.persistParagraphs();
  }

  private persistParagraphs(): void {
    for (const kind of ['message', 'reasoning'] as const) {
      const pending = this.pending[kind];
      const cut = pending.length >= flushThreshold ? pending.length : pending.lastIndexOf('\n\n') + 2;
      if (cut < 2) continue;
      if (kind === 'message')
        this.sink.persist({ type: 'chat_response', timestamp: now(), message: pending.slice(0, cut) });
      else this.persistReasoning(pending.slice(0, cut));
      this.pending[kind] = pending.slice(cut);
    }
  }

  /** `incomplete` writes a message chunk even with no pending text; `sources` go on that last chunk. */
  private persistAll(incomplete: boolean, sources: Source[]): void {
    // What the redactors held back as a possible start of a secret is text like any other now.
    this.release(this.redactors.message.end(), this.redactors.reasoning.end());
    if (this.pending.reasoning) this.persistReasoning(this.pending.reasoning);
    if (this.pending.message || incomplete || sources.length > 0) {
      this.sink.persist({
        type: 'chat_response',
        timestamp: now(),
        message: this.pending.message,
        ...(sources.length > 0 ? { sources: [...sources] } : {}),
        ...(incomplete ? { incomplete: true as const } : {}),
      });
    }
    this.pending = { message: '', reasoning: '' };
  }

  private persistReasoning(text: string, metadata?: ProviderMetadata): void {
    if (text === '' && !metadata) return;
    this.sink.persist({
      type: 'chat_response',
      timestamp: now(),
      reasoning: text,
      ...(metadata ? { provider_metadata: metadata } : {}),
    });
  }
}

function sameSource(a: Source, b: Source): boolean {
  return a.url !== undefined ? a.url === b.url : a.title === b.title && a.filename === b.filename;
}
