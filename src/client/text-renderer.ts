/**
 * text and text-pretty: assistant text to stdout as it streams (rendered markdown in text-pretty,
 * committed line by line, see markdown.ts), chrome to stderr: tool calls with their arguments,
 * results named after their tool (a command's folded: command-fold.ts), policy decisions, retries,
 * the turn's tokens and cost at a terminal, and a closing line when the run did not simply succeed.
 * Everything goes through the client's TerminalOutput; what its live region says (the status line,
 * a running command's last lines) is live-status.ts. Replays (print, attach) show each turn as a
 * person reads it: the user's message and the tool calls on stderr, the answer on stdout, a blank
 * line between turns. Chrome's text is chrome-text.ts; what a resumed turn shows, resumed-turn.ts.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { parseRunToolAnswer } from '../inquiry/answer.ts';
import type { InquiryKind } from '../inquiry/types.ts';
import type { Pricer, PricedRequest } from '../llm/prices.ts';
import type { Source } from '../llm/types.ts';
import type { ResultObject } from '../report/result.ts';
import { compactionLine, firstLine, oneLine, tokensLine, turnTokensLine } from './chrome-text.ts';
import { commandBlocks } from './command-fold.ts';
import { fileChangesLine } from './file-changes-line.ts';
import { LiveStatus } from './live-status.ts';
import { MarkdownStream, type MarkdownModules } from './markdown.ts';
import { resumedTurn } from './resumed-turn.ts';
import { chatResponseParts, StreamedText, summarizeArguments, type Renderer } from './renderer.ts';
import type { TerminalOutput } from './terminal-output.ts';
import { palette as makePalette, type Palette, type PaletteRole } from './theme.ts';
import { visible } from '../output/sanitize.ts';
import { wrapLines } from './word-wrap.ts';

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
  /** The colours of chrome (dark unless given). */
  palette?: Palette;
  /** What the status line says about the interrupt key (e.g. "Ctrl+C to interrupt"). */
  interruptHint?: string;
  /** Prices a replayed turn's requests (conversation print): its tokens line says the cost when known. */
  price?: Pricer;
}

export class TextRenderer implements Renderer {
  /** Requests of the turn being replayed, their tokens (and cost) said at its end (print, attach). */
  private turnRequests: PricedRequest[] = [];
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
  /**
   * Live tool calls whose header is not shown yet: each is shown when its call is reached (it
   * starts, or anything else happens), unless this client's permission prompt shows the call
   * instead, so that each call has one header.
   */
  private readonly pendingHeaders = new Map<string, string>();
  /** Inquiries seen, by id: their tool, kind, and the header a prompt was to show in its place. */
  private readonly inquiries = new Map<string, { tool: string; kind: InquiryKind; header?: string }>();
  /** This client draws permission prompts with the call in them (set by a client that prompts). */
  callsShownByPrompts = false;
  /** The sandbox each call runs in, by tool call id (what its header says). */
  private readonly sandboxes = new Map<string, string>();
  /** Tool call id of each inquiry seen. */
  private readonly inquiryCalls = new Map<string, string>();
  /** Calls whose inquiry a policy (or the model) settled, with the reason already shown: said once. */
  private readonly explainedCalls = new Set<string>();
  private readonly palette: Palette;
  /** The status line and a running command's last lines (live-status.ts). */
  private readonly live: LiveStatus;

  constructor(options: TextRendererOptions) {
    this.options = options;
    this.output = options.output;
    this.palette = options.palette ?? makePalette('dark', options.color);
    this.markdown = options.markdown
      ? new MarkdownStream(options.markdown.modules, (text) => this.output.write('stdout', text), {
          color: options.markdown.color,
          columns: () => this.output.columns,
          palette: makePalette(this.palette.name, options.markdown.color),
        })
      : undefined;
    this.live = new LiveStatus(this.output, {
      hint: options.quiet ? undefined : options.interruptHint,
      palette: this.palette,
      color: options.color,
    });
    if (options.thinking && !options.quiet) this.live.start(Date.now());
  }

  private paint(text: string, role: PaletteRole): string {
    return this.options.color ? this.palette.paint(role, text) : text;
  }

  /**
   * The answer as drawn: at a terminal (and in text-pretty, which is for one) with every control
   * character shown visibly, so the model cannot move the cursor, set the title or the clipboard,
   * or hide what follows; to a pipe or a file in plain text, exactly as the model wrote it.
   */
  private answerText(text: string): string {
    return this.options.pretty || this.output.isTerminal('stdout') ? visible(text) : text;
  }

  /** Ends the answer's unfinished line (if stdout shares the terminal) so chrome starts on its own line. */
  private endAnswerLine(): void {
    this.markdown?.end();
    if (
      this.output.isTerminal('stdout') &&
      this.output.isTerminal('stderr') &&
      !this.output.streamAtLineStart('stdout')
    )
      this.output.write('stdout', '\n');
    if (this.lastKind === 'reasoning' && !this.output.streamAtLineStart('stderr')) this.output.write('stderr', '\n');
    this.lastKind = undefined;
  }

  /** A chrome line on stderr, on a line of its own; at a terminal wrapped at spaces to its width. */
  private chrome(line: string, always = false): void {
    if (this.options.quiet && !always) return;
    this.endAnswerLine();
    const text = this.output.isTerminal('stderr') ? wrapLines(line, this.output.chromeColumns) : line;
    this.output.write('stderr', text + '\n');
  }

  private writeAnswer(kind: 'message' | 'reasoning', text: string): void {
    if (text === '') return;
    if (kind === 'reasoning') {
      if (!this.options.pretty || this.options.quiet) return;
      if (this.lastKind === 'message') this.endAnswerLine();
      this.lastKind = 'reasoning';
      this.output.write('stderr', this.paint(visible(text), 'muted'));
      return;
    }
    if (this.lastKind === 'reasoning' || this.stepBoundary) {
      this.stepBoundary = false;
      this.endAnswerLine();
      // The answer of the next step starts on a line of its own, on a pipe too.
      if (this.output.wroteAnything('stdout') && !this.output.streamAtLineStart('stdout'))
        this.output.write('stdout', '\n');
    }
    this.lastKind = 'message';
    if (this.markdown) this.markdown.push(this.answerText(text));
    else this.output.write('stdout', this.answerText(text));
  }

  delta(kind: 'message' | 'reasoning', text: string): void {
    if (this.pendingHeaders.size > 0 && text !== '') this.reachCall(undefined);
    this.streamed.streamedPiece(kind, text);
    this.writeAnswer(kind, text);
    if (!this.options.quiet) this.live.delta(text);
  }

  toolOutput(id: string, _stream: 'stdout' | 'stderr', text: string, omitted: number): void {
    if (!this.options.quiet) this.live.toolOutput(id, text, omitted);
  }

  activity(text: string): void {
    if (!this.options.quiet) this.live.activity(text);
  }

  event(event: ConversationEvent, replayed: boolean): void {
    this.draw(event, replayed);
    if (!this.options.quiet) this.live.event(event, replayed);
  }

  private draw(event: ConversationEvent, replayed: boolean): void {
    if (this.pendingHeaders.size > 0) this.reachCall(event);
    const text = chatResponseParts(event);
    if (text) {
      this.writeAnswer(text.kind, replayed ? text.text : this.streamed.unseenPart(text.kind, text.text));
      if (event.type === 'chat_response' && 'message' in event && event.sources && event.sources.length > 0)
        this.writeSources(event.sources);
      if (replayed && event.type === 'chat_response' && 'message' in event && event.incomplete)
        this.chrome(this.paint('[incomplete: the answer was cut off here]', 'muted'));
      return;
    }
    switch (event.type) {
      case 'turn_start':
        if (replayed && (this.shownTurn || this.output.wroteAnything('stdout'))) {
          this.endAnswerLine();
          const stream = this.output.wroteAnything('stdout') ? 'stdout' : 'stderr';
          this.output.write(stream, this.output.streamAtLineStart(stream) ? '\n' : '\n\n');
        }
        if (replayed) this.shownTurn = true;
        break;
      case 'chat_request':
        if (event.hook !== undefined)
          this.chrome(
            this.paint(
              `jp: the Stop hook \`${oneLine(event.hook)}\` keeps the turn going: ${oneLine(event.content)}`,
              'warning',
            ),
          );
        else if (replayed) this.chrome(this.paint(`> ${firstLine(event.content)}`, 'name'));
        else if (this.output.wroteAnything('stdout') || this.lastKind !== undefined) {
          // A reply in the middle of a turn (Ctrl+C, reply): the answer so far ends, a blank line
          // sets the next one apart, and the reply is shown between them.
          this.endAnswerLine();
          if (this.output.wroteAnything('stdout'))
            this.output.write('stdout', this.output.streamAtLineStart('stdout') ? '\n' : '\n\n');
          this.chrome(this.paint(`> ${firstLine(event.content)}`, 'name'));
        }
        break;
      case 'system_prompt':
        // What the model was told besides the built-in prompt: the instruction files, as recorded.
        if (replayed && event.files.length > 0) {
          const files = event.files.map((file) => {
            const cut = file.included < file.bytes ? ` (cut to ${file.included} of ${file.bytes} bytes)` : '';
            return `${oneLine(file.path)}${cut}`;
          });
          this.chrome(this.paint(`[instructions: ${files.join(', ')}]`, 'muted'));
        }
        break;
      case 'tool_call_request': {
        // The provider's own tools (hosted web search) run at the provider: no step boundary for jp.
        if (!event.provider_executed) this.stepBoundary = true;
        this.toolNames.set(event.id, event.name);
        const by = event.provider_executed ? ' (run by the provider)' : '';
        if (event.sandbox !== undefined) this.sandboxes.set(event.id, event.sandbox);
        const header = this.toolHeader(
          event.sandbox === undefined ? event.name : `${event.name} [sandbox: ${event.sandbox}]`,
          event.arguments,
          by,
        );
        if (!replayed && this.callsShownByPrompts && !event.provider_executed && !this.options.quiet)
          this.pendingHeaders.set(event.id, header);
        else this.chrome(header);
        break;
      }
      case 'tool_call_response': {
        this.toolResult(event, replayed);
        break;
      }
      case 'inquiry_request':
        this.inquiryCalls.set(event.id, event.tool_call_id);
        // (reachCall may have recorded it already, with the header its prompt shows.)
        if (!this.inquiries.has(event.id))
          this.inquiries.set(event.id, { tool: event.inquiry.tool, kind: event.inquiry.kind });
        break;
      case 'inquiry_response':
        {
          const inquiry = this.inquiries.get(event.id);
          // A prompt was to show this call, but the inquiry was settled without one: the header now.
          if (inquiry?.header && event.by !== 'user') this.chrome(inquiry.header);
          const parsed = inquiry?.kind === 'run_tool' ? parseRunToolAnswer(event.answer, 'log') : undefined;
          if (inquiry && parsed?.ok && parsed.answer.decision === 'edit') {
            this.chrome(
              this.paint(
                `  ✎ ${oneLine(inquiry.tool)} runs with the arguments you edited: ` +
                  `${summarizeArguments(parsed.answer.arguments)}`,
                'warning',
              ),
              true,
            );
          }
        }
        if (event.by !== 'user') {
          // The reason is said here, once: the call's result line and the final summary refer to it.
          const call = this.inquiryCalls.get(event.id);
          if (call !== undefined && event.reason !== undefined) this.explainedCalls.add(call);
        }
        if (event.by !== 'user')
          this.chrome(
            this.paint(
              `jp: ${event.by === 'assistant' ? 'the assistant answered' : event.by}: ` +
                `${oneLine(event.reason ?? JSON.stringify(event.answer))}`,
              'warning',
            ),
          );
        break;
      case 'usage':
        this.turnRequests.push({ model: event.model, usage: event.usage });
        break;
      case 'compaction':
        this.chrome(this.paint(compactionLine(event), 'muted'));
        break;
      case 'checkpoint':
      case 'undo':
        {
          const line = fileChangesLine(event);
          if (line !== undefined) this.chrome(this.paint(line, 'muted'));
        }
        break;
      case 'turn_end':
        if (replayed && event.status === 'interrupted') this.chrome(this.paint('[interrupted]', 'muted'));
        if (replayed && (event.status === 'completed' || event.status === 'discarded')) {
          const line = turnTokensLine(this.turnRequests, this.options.price);
          if (line !== undefined) this.chrome(this.paint(line, 'muted'));
          this.turnRequests = [];
        }
        break;
      default:
        break;
    }
  }

  /**
   * A tool's result: one line (`↳ tool: ok — summary`). A command's output is drawn as its lines
   * under that line, folded live (command-fold.ts: a failure keeps its head and tail, its stderr
   * and jp's notes; each line cut to the terminal's width), all of them in a replay (`print`,
   * `attach`'s history).
   */
  private toolResult(event: ConversationEvent & { type: 'tool_call_response' }, replayed: boolean): void {
    const name = this.toolNames.get(event.id) ?? 'tool';
    const outcome = event.outcome ?? (event.is_error ? 'error' : 'ok');
    const role: PaletteRole = event.is_error ? 'warning' : 'muted';
    if (outcome === 'denied' && this.explainedCalls.has(event.id)) {
      this.chrome(this.paint(`  ↳ ${oneLine(name)}: denied`, role));
      return;
    }
    if (name !== 'run_command' || event.provider_executed) {
      // A file's text, without the line numbers fs_read_file gives the model.
      const first = summarizeArguments(
        name === 'fs_read_file' ? event.content.replace(/^\d+\t/gm, '') : event.content,
        200,
      );
      this.chrome(this.paint(`  ↳ ${oneLine(name)}: ${outcome}${first ? ` — ${first}` : ''}`, role));
      return;
    }
    const width = Math.max(20, this.output.isTerminal('stderr') ? this.output.chromeColumns - 4 : Infinity);
    const blocks = commandBlocks(event, name, outcome, { replayed, quiet: this.options.quiet, width });
    for (const block of blocks) this.chrome(this.paint(block.text, block.role ?? role));
  }

  /** The sandbox the call of inquiry `id` runs in, as its header would say it. */
  sandboxOfInquiry(id: string): string | undefined {
    const call = this.inquiryCalls.get(id);
    return call === undefined ? undefined : this.sandboxes.get(call);
  }

  /**
   * Shows the pending headers of calls reached by `event`: those up to its call, or all of them
   * for an event of no call. A permission prompt's inquiry for a pending call shows that call
   * itself: its header is kept for the case the inquiry is settled without the prompt.
   */
  private reachCall(event: ConversationEvent | undefined): void {
    let upTo: string | undefined;
    let shownByPrompt = false;
    // Only what draws reaches a call (a usage event or checkpoint never draws a prompt's header).
    switch (event?.type) {
      case undefined:
      case 'chat_request':
      case 'chat_response':
      case 'compaction':
      case 'turn_end':
      case 'undo':
        break;
      case 'checkpoint':
        if (fileChangesLine(event) === undefined) return;
        break;
      case 'inquiry_request':
        upTo = event.tool_call_id;
        shownByPrompt =
          (event.inquiry.kind === 'run_tool' || event.inquiry.kind === 'escalate') && this.pendingHeaders.has(upTo);
        break;
      case 'tool_call_start':
      case 'tool_call_response':
        upTo = event.id;
        break;
      default:
        return;
    }
    if (upTo !== undefined && !this.pendingHeaders.has(upTo)) return;
    for (const [id, header] of this.pendingHeaders) {
      this.pendingHeaders.delete(id);
      if (id === upTo && shownByPrompt && event?.type === 'inquiry_request') {
        this.inquiries.set(event.id, { tool: event.inquiry.tool, kind: event.inquiry.kind, header });
        return;
      }
      this.chrome(header);
      if (id === upTo) return;
    }
  }

  /** Citations end the answer they belong to, on stdout: they are part of it. */
  private writeSources(sources: Source[]): void {
    const lines = sources.map(
      (source, index) =>
        `${index + 1}. ${oneLine([source.title, source.url ?? source.filename].filter(Boolean).join(' — '))}`,
    );
    const separator = this.output.streamAtLineStart('stdout') ? '\n' : '\n\n';
    this.writeAnswer('message', `${separator}Sources:\n\n${lines.join('\n')}\n`);
  }

  private toolHeader(name: string, argumentsValue: unknown, suffix = ''): string {
    const summary = summarizeArguments(argumentsValue);
    return this.options.pretty
      ? this.paint(`⚙ ${oneLine(name)} ${summary}${suffix}`, 'name')
      : `[tool] ${oneLine(name)} ${summary}${suffix}`;
  }

  /** A resumed turn: what it resumes and the state of each of its tool calls (resumed-turn.ts). */
  resuming(events: readonly ConversationEvent[]): void {
    const resumed = resumedTurn(events, this.options.conversationId, (text, role) => this.paint(text, role));
    if (!resumed) return;
    for (const [id, name] of resumed.toolNames) this.toolNames.set(id, name);
    // Its inquiries are answered live: what an answer says (an edit) needs the inquiry it answers.
    for (const event of events) {
      if (event.type === 'tool_call_request' && event.sandbox !== undefined)
        this.sandboxes.set(event.id, event.sandbox);
      if (event.type !== 'inquiry_request') continue;
      this.inquiryCalls.set(event.id, event.tool_call_id);
      this.inquiries.set(event.id, { tool: event.inquiry.tool, kind: event.inquiry.kind });
    }
    for (const line of resumed.lines) this.chrome(line, true);
  }

  notice(level: 'info' | 'warning', message: string): void {
    this.chrome(this.paint(`jp: ${visible(message)}`, level === 'warning' ? 'warning' : 'muted'), level === 'warning');
  }

  status(message: string): void {
    this.chrome(visible(message), true);
  }

  finish(result: ResultObject): void {
    this.live.clear();
    if (this.pendingHeaders.size > 0) this.reachCall(undefined);
    this.markdown?.end();
    if (this.output.wroteAnything('stdout') && !this.output.streamAtLineStart('stdout'))
      this.output.write('stdout', '\n');
    const { usage, cost_usd: cost } = result.metadata;
    if (usage && this.output.isTerminal('stderr')) this.chrome(this.paint(tokensLine(usage, cost), 'muted'));
    const cid = result.conversation_id ?? '';
    switch (result.status) {
      case 'success':
        return;
      case 'denied': {
        const count = result.permission_denials.length + result.unanswered.length;
        this.chrome(
          this.paint(
            `jp: the turn completed, but ${count} inquir${count === 1 ? 'y was' : 'ies were'} denied ` +
              'or left unanswered because no user was available (exit 3):',
            'warning',
          ),
          true,
        );
        const said = (call: string, reason: string): string =>
          this.explainedCalls.has(call) ? 'why: the policy line above' : oneLine(reason);
        for (const denial of result.permission_denials)
          this.chrome(`  - ${oneLine(denial.tool_name)}: ${said(denial.tool_call_id, denial.reason)}`, true);
        for (const question of result.unanswered)
          this.chrome(`  - ${oneLine(question.tool_name)}: ${said(question.tool_call_id, question.reason)}`, true);
        return;
      }
      case 'deferred': {
        const pending = result.pending_inquiry;
        const waitingFor = pending ? ` (${oneLine(pending.tool)}: ${pending.kind.replace(/_/g, ' ')})` : '';
        this.chrome(
          this.paint(`jp: waiting for input${waitingFor}. Resume with: jp query --continue --id=${cid}`, 'warning'),
          true,
        );
        return;
      }
      case 'interrupted':
        if (result.error?.code === 'aborted')
          this.chrome(
            this.paint('jp: aborted; the turn was dropped (it stays in the log, marked discarded).', 'warning'),
            true,
          );
        else
          this.chrome(
            this.paint(`jp: interrupted; the turn is saved. Resume with: jp query --continue --id=${cid}`, 'warning'),
            true,
          );
        return;
      default: {
        const error = result.error;
        this.chrome(this.paint(`error: ${visible(error?.message ?? result.status)}`, 'error'), true);
        if (error?.hint) for (const line of error.hint.split('\n')) this.chrome(`  ${oneLine(line)}`, true);
        if (result.status === 'retryable' && cid)
          this.chrome(
            this.paint(`jp: the turn is saved. Resume with: jp query --continue --id=${cid}`, 'warning'),
            true,
          );
      }
    }
  }

  /** Ends the answer's last line, then waits until everything is written. */
  flush(): Promise<void> {
    this.markdown?.end();
    if (this.output.wroteAnything('stdout') && !this.output.streamAtLineStart('stdout'))
      this.output.write('stdout', '\n');
    return this.output.flush();
  }
}
