/**
 * What the live region of a terminal client says (TerminalOutput draws it): through every wait of a
 * turn (before the first token, a stall in the middle of an answer, a tool run, a compaction, a
 * retry) the status line says what the run is doing, since when, how many tokens the model has
 * written in this turn so far, and the key to interrupt; above it, the last lines a running command
 * wrote. Nothing here is drawn where the output has no live region (a pipe, TERM=dumb, -q, JSON).
 *
 * The tokens are the output tokens the provider reported for the turn's requests, plus, for the
 * response streaming now, an estimate from its characters (about four a token), marked `~` until
 * the provider's count replaces it.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { visible } from '../output/sanitize.ts';
import type { TerminalOutput } from './terminal-output.ts';
import type { Palette } from './theme.ts';

/** Rows of a running command's output shown above the status line. */
const windowRows = 5;

export class LiveStatus {
  /** What the run is doing between the turn's boundaries (thinking, running a tool), and since when. */
  private base: { text: string; since: number } | undefined;
  /** What the server said the run is busy with (compacting, retrying): shown until the next event or delta. */
  private said: { text: string; since: number } | undefined;
  private reportedTokens = 0;
  private streamedCharacters = 0;
  private readonly toolNames = new Map<string, string>();
  /** The running call whose output is shown, its last lines, and how many lines it wrote. */
  private running: { id: string; lines: string[]; count: number; partial: boolean } | undefined;

  constructor(
    private readonly output: TerminalOutput,
    private readonly options: { hint: string | undefined; palette: Palette; color: boolean },
  ) {}

  /** The run is thinking from `since` on (a foreground query, before its first event). */
  start(since: number): void {
    this.base = { text: 'thinking', since };
    this.show();
  }

  event(event: ConversationEvent, replayed: boolean): void {
    const at = replayed ? Date.parse(event.timestamp) : Date.now();
    switch (event.type) {
      case 'turn_start':
        this.reportedTokens = 0;
        this.streamedCharacters = 0;
        this.said = undefined;
        this.base = { text: 'thinking', since: at };
        break;
      case 'tool_call_request':
        this.toolNames.set(event.id, event.name);
        break;
      case 'tool_call_start':
        this.said = undefined;
        this.base = {
          text: `running ${visible(this.toolNames.get(event.id) ?? 'a tool', { singleLine: true })}`,
          since: at,
        };
        this.running = { id: event.id, lines: [], count: 0, partial: false };
        break;
      case 'tool_call_response':
        this.said = undefined;
        if (this.running?.id === event.id) this.running = undefined;
        this.base = { text: 'thinking', since: at };
        break;
      case 'usage':
        this.reportedTokens += event.usage.output_tokens ?? 0;
        this.streamedCharacters = 0;
        break;
      case 'turn_end':
        if (replayed) {
          this.clear();
          return;
        }
        break;
      default:
        this.said = undefined;
    }
    this.show();
  }

  /** A streamed piece of the answer (or its reasoning): counted as tokens written so far. */
  delta(text: string): void {
    this.streamedCharacters += text.length;
    this.said = undefined;
    this.show();
  }

  /** What the server says the run is busy with. */
  activity(text: string): void {
    this.said = { text: visible(text, { singleLine: true }), since: Date.now() };
    this.show();
  }

  /** Lines a running call wrote (whole lines; `omitted` left out before them). */
  toolOutput(id: string, text: string, omitted: number): void {
    if (!this.output.liveRegion) return;
    if (this.running?.id !== id) this.running = { id, lines: [], count: 0, partial: false };
    const running = this.running;
    const lines = text.split(/\r\n|\n|\r/);
    if (lines[lines.length - 1] === '') lines.pop();
    running.count += omitted + lines.length;
    running.lines = [...running.lines, ...lines].slice(-windowRows);
    this.show();
  }

  clear(): void {
    this.base = undefined;
    this.said = undefined;
    this.running = undefined;
    this.output.setStatus(undefined);
  }

  private show(): void {
    const state = this.said ?? this.base;
    if (!state) return;
    const tokens = this.reportedTokens + Math.round(this.streamedCharacters / 4);
    const details = [
      ...(this.running && this.running.count > 0
        ? [`${this.running.count} line${this.running.count === 1 ? '' : 's'}`]
        : []),
      ...(tokens > 0 ? [`↓ ${this.streamedCharacters > 0 ? '~' : ''}${formatCount(tokens)} tokens`] : []),
    ];
    this.output.setWindow(
      (this.running?.lines ?? []).map((line) =>
        this.paint(`    ${visible(line.replace(/\t/g, '    '), { singleLine: true })}`),
      ),
    );
    this.output.setStatus({
      text: state.text,
      since: state.since,
      details,
      ...(this.options.hint ? { hint: this.options.hint } : {}),
    });
  }

  private paint(text: string): string {
    return this.options.color ? this.options.palette.paint('muted', text) : text;
  }
}

/** 950, 1.2k, 12k, 1.3M. */
export function formatCount(count: number): string {
  if (count < 1000) return String(count);
  if (count < 10_000) return `${(count / 1000).toFixed(1)}k`;
  if (count < 1_000_000) return `${Math.round(count / 1000)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}
