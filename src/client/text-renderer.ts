/**
 * text and text-pretty: assistant text to stdout as it streams (rendered markdown in text-pretty),
 * chrome to stderr: tool calls, policy decisions, retries, and a closing line when the run did not
 * simply succeed. A spinner runs on stderr until the first output, only when stderr is a terminal.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import type { Inquiry } from '../inquiry/types.ts';
import type { Source } from '../llm/types.ts';
import type { SafeWriter } from '../output/channels.ts';
import type { ResultObject } from '../server/result.ts';
import { MarkdownStream } from './markdown.ts';
import { chatResponseParts, StreamedText, summarizeArguments, type Renderer } from './renderer.ts';

export interface TextRendererOptions {
  stdout: SafeWriter;
  stderr: SafeWriter;
  /** Rendered markdown and ANSI chrome (text-pretty). */
  pretty: boolean;
  /** ANSI colors on stderr chrome. */
  color: boolean;
  conversationId: string;
  /** -q: no chrome except errors. */
  quiet: boolean;
  /** Present in text-pretty: renders markdown. */
  parseMarkdown?: (markdown: string) => string;
  /** A spinner shown until the first output; undefined when stderr is not a terminal. */
  spinner?: { stop(): void };
}

const dim = (text: string): string => `\u001b[2m${text}\u001b[22m`;
const yellow = (text: string): string => `\u001b[33m${text}\u001b[39m`;
const red = (text: string): string => `\u001b[31m${text}\u001b[39m`;
const cyan = (text: string): string => `\u001b[36m${text}\u001b[39m`;

export class TextRenderer implements Renderer {
  private readonly options: TextRendererOptions;
  private readonly streamed = new StreamedText();
  private readonly markdown: MarkdownStream | undefined;
  private readonly toolNames = new Map<string, string>();
  private readonly inquiries = new Map<string, Inquiry>();
  private spinning: boolean;
  /** Set at a step boundary (a tool call): the next answer text starts on a new line. */
  private stepBoundary = false;

  constructor(options: TextRendererOptions) {
    this.options = options;
    this.spinning = options.spinner !== undefined;
    this.markdown =
      options.pretty && options.parseMarkdown
        ? new MarkdownStream(options.parseMarkdown, (text) => options.stdout.write(text), options.stdout.isTerminal ? { previewColumns: options.stdout.columns } : {})
        : undefined;
  }

  private stopSpinner(): void {
    if (!this.spinning) return;
    this.spinning = false;
    this.options.spinner?.stop();
  }

  private paint(text: string, style: (text: string) => string): string {
    return this.options.color ? style(text) : text;
  }

  /** A chrome line on stderr, after finishing any markdown block so the two do not interleave. */
  private chrome(line: string, always = false): void {
    if (this.options.quiet && !always) return;
    this.stopSpinner();
    this.markdown?.end();
    if (this.options.stdout.isTerminal && this.options.stderr.isTerminal && !this.options.stdout.atLineStart) this.options.stdout.write('\n');
    this.options.stderr.write(line + '\n');
  }

  private writeAnswer(kind: 'message' | 'reasoning', text: string): void {
    if (text === '') return;
    this.stopSpinner();
    if (kind === 'reasoning') {
      if (this.options.pretty && !this.options.quiet) this.options.stderr.write(this.paint(text, dim));
      return;
    }
    if (this.stepBoundary) {
      this.stepBoundary = false;
      if (this.markdown) this.markdown.end();
      else if (!this.options.stdout.atLineStart) this.options.stdout.write('\n');
    }
    if (this.markdown) this.markdown.push(text);
    else this.options.stdout.write(text);
  }

  delta(kind: 'message' | 'reasoning', text: string): void {
    this.streamed.streamedPiece(kind, text);
    this.writeAnswer(kind, text);
  }

  event(event: ConversationEvent, replayed: boolean): void {
    const text = chatResponseParts(event);
    if (text) {
      this.writeAnswer(text.kind, replayed ? text.text : this.streamed.unseenPart(text.kind, text.text));
      if (event.type === 'chat_response' && 'message' in event && event.sources && event.sources.length > 0) this.writeSources(event.sources);
      if (replayed && event.type === 'chat_response' && 'message' in event && event.incomplete) this.chrome(this.paint('[incomplete: the answer was cut off here]', dim));
      return;
    }
    switch (event.type) {
      case 'chat_request':
        if (replayed) this.chrome(this.paint(`> ${event.content.split('\n')[0]}`, cyan));
        break;
      case 'tool_call_request': {
        // The provider's own tools (hosted web search) run at the provider: no step boundary for jp.
        if (!event.provider_executed) this.stepBoundary = true;
        this.toolNames.set(event.id, event.name);
        const by = event.provider_executed ? ' (run by the provider)' : '';
        this.chrome(this.options.pretty ? this.paint(`⚙ ${event.name} ${summarizeArguments(event.arguments)}${by}`, cyan) : `[tool] ${event.name} ${summarizeArguments(event.arguments)}${by}`);
        break;
      }
      case 'tool_call_response': {
        const name = this.toolNames.get(event.id) ?? 'tool';
        const first = summarizeArguments(event.content, 200);
        const line = `  ↳ ${name}: ${event.outcome ?? (event.is_error ? 'error' : 'ok')}${first ? ` — ${first}` : ''}`;
        this.chrome(event.is_error ? this.paint(line, yellow) : this.paint(line, dim));
        break;
      }
      case 'inquiry_request':
        this.inquiries.set(event.id, event.inquiry);
        break;
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
    const separator = this.options.stdout.atLineStart ? '\n' : '\n\n';
    this.writeAnswer('message', `${separator}Sources:\n\n${lines.join('\n')}\n`);
  }

  notice(level: 'info' | 'warning', message: string): void {
    this.chrome(level === 'warning' ? this.paint(`jp: ${message}`, yellow) : this.paint(`jp: ${message}`, dim), level === 'warning');
  }

  status(message: string): void {
    this.chrome(message, true);
  }

  finish(result: ResultObject): void {
    this.stopSpinner();
    this.markdown?.end();
    if (this.options.stdout.wroteAnything && !this.options.stdout.atLineStart) this.options.stdout.write('\n');
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

  flush(): Promise<void> {
    this.stopSpinner();
    this.markdown?.end();
    return Promise.all([this.options.stdout.flush(), this.options.stderr.flush()]).then(() => undefined);
  }
}
