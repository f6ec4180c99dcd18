/**
 * A TurnHost (src/turn/host.ts) for in-process tests of the turn engine: it records what the
 * engine gives it (events, deltas, notices, the inquiries it asks, who settled each one) and
 * plays the human at the prompting client from a script of answers, in order. Without a script
 * no prompting client is attached, so the detached policy settles every inquiry. An inquiry the
 * script has no answer for fails the test at once, naming it (a test never waits on a prompt).
 */
import { Secrets } from '../../src/redact.ts';
import type { ConversationEvent } from '../../src/conversation/events.ts';
import type { Inquiry, JsonValue, PromptAction } from '../../src/inquiry/types.ts';
import type { ClientAnswer, ToolOutputPiece, TurnHost } from '../../src/turn/host.ts';
import type { ProcessTracker } from '../../src/tools/tool.ts';

/** A script entry: the human at the client gives no answer (the detached policy settles it). */
export const declines = Symbol('declines');

export type ScriptedAnswer = JsonValue | typeof declines;

export class RecordingHost implements TurnHost {
  /** Every event the engine persisted, in order. */
  readonly events: ConversationEvent[] = [];
  readonly deltas: { kind: 'message' | 'reasoning'; text: string }[] = [];
  readonly notices: { level: 'info' | 'warning'; message: string }[] = [];
  /** Live output of running tool calls, as sent. */
  readonly toolOutputs: ToolOutputPiece[] = [];
  /** What the run said it was busy with, in order. */
  readonly activities: string[] = [];
  /** The inquiries put to the prompting client, with what becomes of each if the client detaches. */
  readonly asked: { id: string; inquiry: Inquiry; ifDetached: PromptAction | undefined }[] = [];
  /** Settled inquiries, by id, and who settled them. */
  readonly resolved: { id: string; by: string }[] = [];
  syncs = 0;
  readonly processes: ProcessTracker = { nextMarker: () => 'test.1', started: () => {}, ended: () => {} };
  /** No secrets: what the engine redacts is tested in test/unit/step-text.test.ts and the e2e secret tests. */
  readonly secrets = new Secrets();
  private readonly script: ScriptedAnswer[] | undefined;

  /** `answers`: a prompting client is attached, and its human gives these answers, in order. */
  constructor(options: { answers?: ScriptedAnswer[] } = {}) {
    this.script = options.answers ? [...options.answers] : undefined;
  }

  append(event: ConversationEvent): void {
    this.events.push(event);
  }

  delta(piece: { kind: 'message' | 'reasoning'; text: string }): void {
    this.deltas.push({ ...piece });
  }

  notice(level: 'info' | 'warning', message: string): void {
    this.notices.push({ level, message });
  }

  toolOutput(piece: ToolOutputPiece): void {
    this.toolOutputs.push({ ...piece });
  }

  activity(text: string): void {
    this.activities.push(text);
  }

  sync(): void {
    this.syncs++;
  }

  hasPromptingClient(): boolean {
    return this.script !== undefined;
  }

  async askClient(
    id: string,
    inquiry: Inquiry,
    _signal: AbortSignal,
    ifDetached?: PromptAction,
  ): Promise<ClientAnswer> {
    this.asked.push({ id, inquiry, ifDetached });
    if (!this.script || this.script.length === 0) {
      throw new Error(`the test's script has no answer for inquiry ${id}: ${JSON.stringify(inquiry)}`);
    }
    const next = this.script.shift()!;
    return next === declines ? { answered: false, declined: true } : { answered: true, answer: next };
  }

  inquiryResolved(id: string, by: string): void {
    this.resolved.push({ id, by });
  }

  /** The answers of the script not given yet. */
  get unusedAnswers(): number {
    return this.script?.length ?? 0;
  }
}
