/**
 * text and text-pretty: assistant text to stdout as it streams (rendered markdown in text-pretty,
 * committed line by line, see markdown.ts), chrome to stderr: tool calls with their arguments,
 * results named after their tool, policy decisions, retries, and a closing line when the run did not
 * simply succeed. Everything goes through the client's TerminalOutput (one owner of the terminal).
 *
 * At a terminal in the foreground, a status line on stderr says what the run is doing while nothing
 * else is shown: "thinking" while the model is asked, the running tool and its elapsed time.
 *
 * Replays (print, attach) show each turn as a person reads it: the user's message (stderr), the
 * answer (stdout), tool calls and their results (stderr), a blank line between turns.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import type { Source } from '../llm/types.ts';
import { describeTurn, type IncompleteTurn } from '../conversation/turn-state.ts';
import type { ResultObject } from '../server/result.ts';
import { MarkdownStream, type MarkdownModules } from './markdown.ts';
import { chatResponseParts, StreamedText, summarizeArguments, type Renderer } from './renderer.ts';
import type { TerminalOutput } from './terminal-output.ts';

export interface TextRendererOptions {
  output: TerminalOutput;
  /** Rendered markdown and ANSI chrome (text-pretty). */
  pretty: boolean;
  /** ANSI colours on stderr chrome. */
  color: boolean;
  conversationId: string;
  /** -q: no chrome except errors. */
  quiet: boolean;
  /** Present in text-pretty: renders markdown. */
  markdown?: { modules: MarkdownModules; color: boolean };
  /** Say "thinking" on the status line until the first output (a foreground query). */
  thinking: boolean;
}

const dim = (text: string): string => `\u001b[2m${text}\u001b[22m`;
const yellow = (text: string): string => `\u001b[33m${text}\u001b[39m`;
const red = (text: string): string => `\u001b[31m${text}\u001b[39m`;
const cyan = (text: string): string => `\u001b[36m${text}\u001b[39m`;
const green = (text: string): string => `\u001b[32m${text}\u001b[39m`;

/** First line of a user message for a replay, with how much was left out. */
function firstLine(text: string): string {
  const lines = text.split('\n');
  const first = lines[0]!.length > 200 ? lines[0]!.slice(0, 199) + '…' : lines[0]!;
  return lines.length > 1 ? `${first} (+${lines.length - 1} more line${lines.length === 2 ? '' : 's'})` : first;
}

export class TextRenderer implements Renderer {
  readonly output: TerminalOutput;
  private readonly options: TextRendererOptions;
  private readonly streamed = new StreamedText();
  private readonly markdown: MarkdownStream | undefined;
  private readonly toolNames = new Map<string, string>();
  /** Set at a step boundary (a tool call): the next answer text starts on a new line. */
  private stepBoundary = false;
  /** A replayed turn was shown: the next one is set apart by a blank line. */
  private shownTurn = false;
  private lastKind: 'message' | 'reasoning' | undefined;

  constructor(options: TextRendererOptions) {
    this.options = options;
    this.output = options.output;
    this.markdown = options.markdown
      ? new MarkdownStream(options.markdown.modules, (text) => this.output.write('stdout', text), { color: options.markdown.color, columns: () => this.output.columns })
      : undefined;
    if (options.thinking && !options.quiet) this.output.setStatus({ text: 'thinking' });
  }

  private paint(text: string, style: (text: string) => string): string {
    return this.options.color ? style(text) : text;
  }

  /** Ends the answer's unfinished line (if stdout shares the terminal) so chrome starts on its own line. */
  private endAnswerLine(): void {
    this.markdown?.end();
    if (this.output.isTerminal('stdout') && this.output.isTerminal('stderr') && !this.output.streamAtLineStart('stdout')) this.output.write('stdout', '\n');
    if (this.lastKind === 'reasoning' && !this.output.streamAtLineStart('stderr')) this.output.write('stderr', '\n');
    this.lastKind = undefined;
  }

  /** A chrome line on stderr, on a line of its own. */
  private chrome(line: string, always = false): void {
    if (this.options.quiet && !always) return;
    this.endAnswerLine();
    this.output.write('stderr', line + '\n');
  }

  private writeAnswer(kind: 'message' | 'reasoning', text: string, live: boolean): void {
    if (text === '') return;
    if (live) this.output.setStatus(undefined);
    if (kind === 'reasoning') {
      if (!this.options.pretty || this.options.quiet) return;
      if (this.lastKind === 'message') this.endAnswerLine();
      this.lastKind = 'reasoning';
      this.output.write('stderr', this.paint(text, dim));
      return;
    }
    if (this.lastKind === 'reasoning' || this.stepBoundary) {
      this.stepBoundary = false;
      this.endAnswerLine();
      // The answer of the next step starts on a line of its own, on a pipe too.
      if (this.output.wroteAnything('stdout') && !this.output.streamAtLineStart('stdout')) this.output.write('stdout', '\n');
    }
    this.lastKind = 'message';
    if (this.markdown) this.markdown.push(text);
    else this.output.write('stdout', text);
  }

  delta(kind: 'message' | 'reasoning', text: string): void {
    this.streamed.streamedPiece(kind, text);
    this.writeAnswer(kind, text, true);
  }

  event(event: ConversationEvent, replayed: boolean): void {
    const text = chatResponseParts(event);
    if (text) {
      this.writeAnswer(text.kind, replayed ? text.text : this.streamed.unseenPart(text.kind, text.text), !replayed);
      if (event.type === 'chat_response' && 'message' in event && event.sources && event.sources.length > 0) this.writeSources(event.sources);
      if (replayed && event.type === 'chat_response' && 'message' in event && event.incomplete) this.chrome(this.paint('[incomplete: the answer was cut off here]', dim));
      return;
    }
    switch (event.type) {
      case 'turn_start':
        if (replayed && this.shownTurn) {
          this.endAnswerLine();
          const stream = this.output.wroteAnything('stdout') ? 'stdout' : 'stderr';
          this.output.write(stream, this.output.streamAtLineStart(stream) ? '\n' : '\n\n');
        }
        if (replayed) this.shownTurn = true;
        break;
      case 'chat_request':
        if (replayed) this.chrome(this.paint(`> ${firstLine(event.content)}`, cyan));
        break;
      case 'tool_call_request': {
        // The provider's own tools (hosted web search) run at the provider: no step boundary for jp.
        if (!event.provider_executed) this.stepBoundary = true;
        this.toolNames.set(event.id, event.name);
        const by = event.provider_executed ? ' (run by the provider)' : '';
        this.chrome(this.toolHeader(event.name, event.arguments, by));
        break;
      }
      case 'tool_call_start': {
        if (!replayed && !this.options.quiet) this.output.setStatus({ text: `running ${this.toolNames.get(event.id) ?? 'a tool'}`, since: Date.now() });
        break;
      }
      case 'tool_call_response': {
        const name = this.toolNames.get(event.id) ?? 'tool';
        const first = summarizeArguments(event.content, 200);
        const line = `  ↳ ${name}: ${event.outcome ?? (event.is_error ? 'error' : 'ok')}${first ? ` — ${first}` : ''}`;
        this.chrome(event.is_error ? this.paint(line, yellow) : this.paint(line, dim));
        if (!replayed && !this.options.quiet) this.output.setStatus({ text: 'thinking' });
        break;
      }
      case 'inquiry_response':
        if (event.by !== 'user') this.chrome(this.paint(`jp: ${event.by === 'assistant' ? 'the assistant answered' : 'policy'}: ${event.reason ?? JSON.stringify(event.answer)}`, yellow));
        break;
      case 'turn_end':
        if (replayed && event.status === 'interrupted') this.chrome(this.paint('[interrupted]', dim));
        break;
      default:
        break;
    }
  }

  /** Citations end the answer they belong to, on stdout: they are part of it. */
  private writeSources(sources: Source[]): void {
    const lines = sources.map((source, index) => `${index + 1}. ${[source.title, source.url ?? source.filename].filter(Boolean).join(' — ')}`);
    const separator = this.output.streamAtLineStart('stdout') ? '\n' : '\n\n';
    this.writeAnswer('message', `${separator}Sources:\n\n${lines.join('\n')}\n`, false);
  }

  private toolHeader(name: string, argumentsValue: unknown, suffix = ''): string {
    const summary = summarizeArguments(argumentsValue);
    return this.options.pretty ? this.paint(`⚙ ${name} ${summary}${suffix}`, cyan) : `[tool] ${name} ${summary}${suffix}`;
  }

  /**
   * A resumed turn (RFD 024): what it resumes, each tool call of the turn with its arguments, done
   * (✓) or pending (⏸), and what a pending one waits for.
   */
  resuming(events: readonly ConversationEvent[]): void {
    const start = events.map((event) => event.type).lastIndexOf('turn_start');
    if (start === -1) return;
    const turn: IncompleteTurn = describeTurn({ start, events: events.slice(start), final: undefined });
    const responses = new Map<string, ConversationEvent & { type: 'tool_call_response' }>();
    for (const event of turn.turn.events) {
      if (event.type === 'tool_call_request') this.toolNames.set(event.id, event.name);
      if (event.type === 'tool_call_response') responses.set(event.id, event);
    }
    const pendingInquiry = new Map(turn.pendingInquiries.map((event) => [event.tool_call_id, event.inquiry]));
    this.chrome(`Resuming incomplete turn for ${this.options.conversationId}…`, true);
    this.chrome(this.paint(`⏳ Incomplete turn (${turn.resumePoint})`, yellow), true);
    for (const event of turn.turn.events) {
      if (event.type !== 'tool_call_request') continue;
      const header = `${event.name} ${summarizeArguments(event.arguments, 100)}`;
      const response = responses.get(event.id);
      if (response) {
        const outcome = response.outcome === 'ok' || (response.outcome === undefined && !response.is_error) ? 'completed' : (response.outcome ?? 'error');
        this.chrome(`  ${this.paint('✓', green)} ${header} — ${outcome}`, true);
        continue;
      }
      const inquiry = pendingInquiry.get(event.id);
      const waiting =
        inquiry?.kind === 'tool_question'
          ? JSON.stringify(inquiry.question.text)
          : inquiry?.kind === 'deliver_tool_result'
            ? 'send its result?'
            : inquiry?.kind === 'run_tool'
              ? 'run it?'
              : 'not run yet';
      this.chrome(`  ${this.paint('⏸', yellow)} ${header} — ${waiting}`, true);
    }
  }

  notice(level: 'info' | 'warning', message: string): void {
    this.chrome(level === 'warning' ? this.paint(`jp: ${message}`, yellow) : this.paint(`jp: ${message}`, dim), level === 'warning');
  }

  status(message: string): void {
    this.chrome(message, true);
  }

  finish(result: ResultObject): void {
    this.output.setStatus(undefined);
    this.markdown?.end();
    if (this.output.wroteAnything('stdout') && !this.output.streamAtLineStart('stdout')) this.output.write('stdout', '\n');
    const cid = result.conversation_id ?? '';
    switch (result.status) {
      case 'success':
        return;
      case 'denied': {
        const count = result.permission_denials.length + result.unanswered.length;
        this.chrome(this.paint(`jp: the turn completed, but ${count} inquir${count === 1 ? 'y was' : 'ies were'} denied or left unanswered because no user was available (exit 3):`, yellow), true);
        for (const denial of result.permission_denials) this.chrome(`  - ${denial.tool_name}: ${denial.reason}`, true);
        for (const question of result.unanswered) this.chrome(`  - ${question.tool_name}: ${question.reason}`, true);
        return;
      }
      case 'deferred': {
        const pending = result.pending_inquiry;
        this.chrome(
          this.paint(`jp: waiting for input${pending ? ` (${pending.tool}: ${pending.kind.replace(/_/g, ' ')})` : ''}. Resume with: jp query --continue --id=${cid}`, yellow),
          true,
        );
        return;
      }
      case 'interrupted':
        this.chrome(this.paint(`jp: interrupted; the turn is saved. Resume with: jp query --continue --id=${cid}`, yellow), true);
        return;
      default: {
        const error = result.error;
        this.chrome(this.paint(`error: ${error?.message ?? result.status}`, red), true);
        if (error?.hint) for (const line of error.hint.split('\n')) this.chrome(`  ${line}`, true);
        if (result.status === 'retryable' && cid) this.chrome(this.paint(`jp: the turn is saved. Resume with: jp query --continue --id=${cid}`, yellow), true);
      }
    }
  }

  /** Ends the answer's last line, then waits until everything is written. */
  flush(): Promise<void> {
    this.markdown?.end();
    if (this.output.wroteAnything('stdout') && !this.output.streamAtLineStart('stdout')) this.output.write('stdout', '\n');
    return this.output.flush();
  }
}
