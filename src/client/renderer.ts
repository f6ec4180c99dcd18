/**
 * Rendering of a run for one terminal and format. A renderer gets raw conversation events (from
 * the server, live or replayed from disk) and writes assistant text to stdout and chrome to stderr.
 * It is the only place that decides what a run looks like.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import type { ResultObject } from '../report/result.ts';
import type { TerminalOutput } from './terminal-output.ts';
import { visible } from '../output/sanitize.ts';

export interface Renderer {
  /** Where everything this renderer shows goes (the one owner of the terminal). */
  readonly output: TerminalOutput;
  /** A persisted event. `replayed` is true for history read from disk when attaching. */
  event(event: ConversationEvent, replayed: boolean): void;
  /** A resumed turn is about to go on: `events` is the log up to now (its last turn is the one resumed). */
  resuming(events: readonly ConversationEvent[]): void;
  /** A streamed piece of assistant output not persisted yet. */
  delta(kind: 'message' | 'reasoning', text: string): void;
  notice(level: 'info' | 'warning', message: string): void;
  /** Lines a running tool call wrote (`tool_output`), for a live view of it; not every renderer shows them. */
  toolOutput?(id: string, stream: 'stdout' | 'stderr', text: string, omitted: number): void;
  /** What the run is busy with (`activity`: compacting, retrying), for a status line. */
  activity?(text: string): void;
  /** Chrome from the client itself (e.g. "Detached: <cid>"). */
  status(message: string): void;
  /** The run ended; the result decides the closing lines. */
  finish(result: ResultObject): void;
  /** Waits until everything is written. */
  flush(): Promise<void>;
  /** Set by a client that prompts: its permission prompts show the call, so its header is not shown twice. */
  callsShownByPrompts?: boolean;
  /** The sandbox the call of inquiry `id` runs in (for its prompt's title), when the renderer knows it. */
  sandboxOfInquiry?(id: string): string | undefined;
}

/**
 * Text streamed as deltas is repeated by the persisted chat_response events that follow; this
 * tracks what was streamed so a persisted chunk is not shown twice.
 */
export class StreamedText {
  private streamed = { message: '', reasoning: '' };

  streamedPiece(kind: 'message' | 'reasoning', text: string): void {
    this.streamed[kind] += text;
  }

  /** Returns the part of a persisted chunk that was not streamed before (usually ''). */
  unseenPart(kind: 'message' | 'reasoning', text: string): string {
    const streamed = this.streamed[kind];
    if (streamed.startsWith(text)) {
      this.streamed[kind] = streamed.slice(text.length);
      return '';
    }
    if (text.startsWith(streamed)) {
      this.streamed[kind] = '';
      return text.slice(streamed.length);
    }
    this.streamed[kind] = '';
    return text;
  }
}

export function chatResponseParts(
  event: ConversationEvent,
): { kind: 'message' | 'reasoning'; text: string } | undefined {
  if (event.type !== 'chat_response') return undefined;
  if ('message' in event) return { kind: 'message', text: event.message };
  return { kind: 'reasoning', text: event.reasoning };
}

/** Short one-line rendering of tool arguments (or a result) for chrome, with every control character shown visibly. */
export function summarizeArguments(value: unknown, limit = 160): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const single = visible((text ?? '').replace(/\s+/g, ' '), { singleLine: true });
  return single.length > limit ? single.slice(0, limit - 1) + '…' : single;
}
