/**
 * Prompts on the controlling terminal (`/dev/tty`), never on stdin or stdout, so that
 * `echo ctx | jp query x | cat` still asks the human at the terminal. @inquirer is imported only
 * when a prompt is actually shown.
 *
 * Every prompt runs in a session (`session()`): the terminal's only owner while it is open (see
 * TerminalOutput.exclusive: other output is held, the prompt starts on its own line), drawn on a
 * fresh output stream of its own (a finished prompt ends its stream, never the terminal), so each
 * prompt is drawn before it takes a key, however many came before it. A new kind of prompt is a
 * method that opens a session and draws in it. A prompt's output stream is prompt-output.ts; the
 * one-key prompt over a payload (permissions, deliveries, trust) is key-choice.ts.
 */
import type { AnswerOf, InquiryAnswer } from '../inquiry/answer.ts';
import type { Inquiry, InquiryOf, JsonValue } from '../inquiry/types.ts';
import type { InterruptAction } from '../protocol/messages.ts';
import { colorEnabled, isDumbTerminal, openControllingTerminal, type TerminalStreams } from '../output/channels.ts';
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { resetAttributes, visible } from '../output/sanitize.ts';
import { EditorFailed, editInTerminal } from './editor.ts';
import { keyChoice, type Choice } from './key-choice.ts';
import { describeCall } from './permission-view.ts';
import { plainText, promptOutput } from './prompt-output.ts';
import { TerminalInput, type KeyHandlers } from './terminal-input.ts';
import type { PromptContext } from './prompt-context.ts';
import type { TerminalOutput } from './terminal-output.ts';

export class PromptCancelled extends Error {}
/** The human pressed Ctrl+C in a prompt. */
export class PromptInterrupted extends Error {}
/** The human pressed Ctrl+Z in a prompt: leave the run going without this client. */
export class PromptDetached extends Error {}

export interface InterruptChoice {
  action: InterruptAction;
  /** The text of a `reply`. */
  reply?: string;
}

function isAbort(error: unknown): boolean {
  const name = (error as Error | undefined)?.name;
  return name === 'AbortPromptError' || name === 'CancelPromptError';
}

function isExit(error: unknown): boolean {
  return (error as Error | undefined)?.name === 'ExitPromptError';
}

export interface TerminalPrompterOptions {
  /** The owner of this client's output; prompts hold it while they are open. */
  output?: TerminalOutput;
  /** For the editor ($VISUAL, $EDITOR). */
  environment: NodeJS.ProcessEnv;
  /** Where relative paths of file tools start, for previews (the diff of fs_modify_file). */
  workspaceRoot?: string;
}

/** Reads a file for a preview: a regular file of at most 1 MiB, never blocking on a FIFO or device. */
function readForPreview(root: string | undefined, requested: string): string | undefined {
  if (root === undefined) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(path.resolve(root, requested), constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > 1024 * 1024) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export class TerminalPrompter {
  private readonly options: TerminalPrompterOptions;
  private terminal: TerminalStreams | undefined;
  private readonly keyboard = new TerminalInput();

  constructor(options: TerminalPrompterOptions) {
    this.options = options;
  }

  private open(): TerminalStreams {
    this.terminal ??= openControllingTerminal();
    if (!this.terminal) throw new PromptCancelled('no controlling terminal');
    return this.terminal;
  }

  close(): void {
    this.keyboard.close();
    this.terminal?.close();
    this.terminal = undefined;
  }

  /**
   * Runs `show` as the terminal's only owner. `show` gets `context()` to draw each prompt with
   * (several prompts may follow one another in one session: a menu and its reply box).
   */
  private session<T>(
    show: (context: () => PromptContext, terminal: TerminalStreams) => Promise<T>,
    signal: AbortSignal,
  ): Promise<T> {
    const run = async (): Promise<T> => {
      if (signal.aborted) throw new PromptCancelled('prompt cancelled');
      const terminal = this.open();
      // The prompt starts at the start of a clean row, with every attribute reset: text that set
      // one (conceal, reverse, a colour) cannot hide or disguise the prompt.
      // On a dumb terminal nothing can be reset or cleared: the prompt's own line is all there is.
      if (!this.plain) terminal.output.write(`${resetAttributes}\r\u001b[K`);
      // Ctrl+Z reaches a prompt as a key (the terminal is in raw mode), not as SIGTSTP.
      // Its reason, a PromptDetached, tells a prompt that sees the abort that Ctrl+Z closed it.
      const suspend = new AbortController();
      const keys = this.keyboard.openPrompt(() => suspend.abort(new PromptDetached('detached')));
      const combined = AbortSignal.any([signal, suspend.signal]);
      const context = (): PromptContext => ({
        input: keys.input,
        output: promptOutput(terminal.output, keys.drawn, this.plain),
        signal: combined,
        clearPromptOnDone: false,
      });
      try {
        return await show(context, terminal);
      } catch (error) {
        if (suspend.signal.aborted) throw new PromptDetached('detached');
        if (isAbort(error)) throw new PromptCancelled('prompt cancelled');
        if (isExit(error)) throw new PromptInterrupted('interrupted');
        throw error;
      } finally {
        keys.close();
      }
    };
    return this.options.output ? this.options.output.exclusive(run) : run();
  }

  /**
   * Reads the terminal while a run streams (raw, no echo): Ctrl+C and Ctrl+Z go to `handlers`,
   * other keys are dropped. Prompts opened meanwhile get the keys typed after they are drawn.
   */
  watchKeys(handlers: KeyHandlers): void {
    this.keyboard.watch(handlers);
  }

  unwatchKeys(): void {
    this.keyboard.unwatch();
  }

  /** Asks the human to settle an inquiry. */
  async ask(inquiry: Inquiry, signal: AbortSignal, about: { sandbox?: string } = {}): Promise<InquiryAnswer> {
    switch (inquiry.kind) {
      case 'run_tool':
        return this.session((context, terminal) => this.permission(inquiry, context, terminal, about.sandbox), signal);
      case 'deliver_tool_result':
        return this.session((context, terminal) => this.delivery(inquiry, context, terminal), signal);
      case 'escalate':
        return this.session((context, terminal) => this.escalation(inquiry, context, terminal), signal);
      case 'tool_question': {
        const { question } = inquiry;
        const prompts = await import('@inquirer/prompts');
        // The question and its options come from a tool or the model: shown visibly, answered with the originals.
        const message = `${visible(inquiry.tool, { singleLine: true, invisible: true })} asks: ${visible(question.text, { invisible: true })}`;
        const value = await this.session(async (context): Promise<JsonValue> => {
          switch (question.answer_type) {
            case 'boolean':
              return prompts.confirm(
                { message, ...(typeof question.default === 'boolean' ? { default: question.default } : {}) },
                context(),
              );
            case 'select':
              return prompts.select(
                {
                  message,
                  choices: (question.options ?? []).map((option) => ({
                    name: visible(option, { singleLine: true, invisible: true }),
                    value: option,
                  })),
                  ...(typeof question.default === 'string' ? { default: question.default } : {}),
                },
                context(),
              );
            case 'text':
              return prompts.input(
                {
                  message,
                  ...(typeof question.default === 'string'
                    ? { default: visible(question.default, { singleLine: true, invisible: true }) }
                    : {}),
                },
                context(),
              );
            case 'form': {
              const { fillInForm } = await import('./elicitation-form.ts');
              return fillInForm(inquiry.tool, question, context);
            }
          }
        }, signal);
        return { decision: 'answer', value };
      }
    }
  }

  /** TERM=dumb: prompts write no escape sequence at all (no colour, no cursor movement, no clearing). */
  private get plain(): boolean {
    return isDumbTerminal(this.options.environment);
  }

  /** Writes jp's own text of a prompt to the terminal (plain on a dumb terminal). */
  private print(terminal: TerminalStreams, text: string): void {
    terminal.output.write(this.plain ? plainText(text) : text);
  }

  /** Colour in prompts (on the terminal): NO_COLOR, FORCE_COLOR and TERM=dumb decide, as everywhere. */
  private get color(): boolean {
    return !this.plain && colorEnabled(this.options.environment, true);
  }

  /**
   * y run · Y run and remember for this turn · n skip · N skip and remember · p show all of it ·
   * e edit. The call is shown as it will run (a diff, the content, the command); with `run = "edit"`
   * the editor opens at once.
   */
  private async permission(
    inquiry: InquiryOf<'run_tool'>,
    context: () => PromptContext,
    terminal: TerminalStreams,
    sandbox?: string,
  ): Promise<AnswerOf<'run_tool'>> {
    const argumentsText = JSON.stringify(inquiry.arguments, null, 2) ?? 'null';
    const view = describeCall(inquiry.tool, inquiry.arguments, (file) =>
      readForPreview(this.options.workspaceRoot, file),
    );
    const choice = inquiry.edit
      ? 'e'
      : await this.keyChoice(
          {
            title: `⚙ ${view.title}${sandbox === undefined ? '' : ` [sandbox: ${visible(sandbox, { singleLine: true, invisible: true })}]`}`,
            payload: view.lines,
            question: `Run ${visible(inquiry.tool, { singleLine: true, invisible: true })}?`,
            keys: [
              { key: 'y', meaning: 'run', needsAll: true },
              { key: 'Y', meaning: 'run, and for the rest of this turn', needsAll: true },
              { key: 'n', meaning: 'skip' },
              { key: 'N', meaning: 'skip, and for the rest of this turn' },
              { key: 'p', meaning: 'show all of it' },
              { key: 'e', meaning: 'edit' },
            ],
            enter: 'y',
            escape: 'n',
          },
          context,
          terminal,
        );
    switch (choice) {
      case 'y':
        return { decision: 'approve', scope: 'once' };
      case 'Y':
        return { decision: 'approve', scope: 'turn' };
      case 'n':
        return { decision: 'deny', scope: 'once' };
      case 'N':
        return { decision: 'deny', scope: 'turn' };
      default:
        return {
          decision: 'edit',
          arguments: await this.editJson(`the arguments of ${inquiry.tool}`, argumentsText, terminal),
        };
    }
  }

  /**
   * y run it outside the sandbox · n keep it in (it is not run) · p show all of it. The call is
   * shown as a permission prompt shows it, with why it asks to leave the sandbox. A file tool's
   * write inside `.git/` (needs `git`) is asked the same way, saying what git would run from there.
   */
  private async escalation(
    inquiry: InquiryOf<'escalate'>,
    context: () => PromptContext,
    terminal: TerminalStreams,
  ): Promise<AnswerOf<'escalate'>> {
    const gitWrite = inquiry.needs === 'git';
    const needs = {
      network: ' (it needs the network)',
      write: ' (it needs to write outside the workspace)',
      unconfined: '',
      git: '',
    }[inquiry.needs];
    const view = describeCall(inquiry.tool, inquiry.arguments, (file) =>
      readForPreview(this.options.workspaceRoot, file),
    );
    const why = inquiry.justification.split('\n');
    const choice = await this.keyChoice(
      {
        title: `⚙ ${view.title}`,
        payload: [
          ...view.lines,
          ...why.map((line, index) => ({
            kind: 'note' as const,
            text: `${index === 0 ? 'Why: ' : '     '}${visible(line, { singleLine: true, invisible: true })}`,
          })),
        ],
        question: gitWrite
          ? `Let ${visible(inquiry.tool, { singleLine: true, invisible: true })} write inside .git/, where git runs programs from?`
          : `Run ${visible(inquiry.tool, { singleLine: true, invisible: true })} outside the sandbox${needs}?`,
        keys: [
          { key: 'y', meaning: gitWrite ? 'write it' : 'run it outside the sandbox', needsAll: true },
          { key: 'n', meaning: gitWrite ? 'do not write it' : 'do not run it' },
          { key: 'p', meaning: 'show all of it' },
        ],
        enter: 'n',
        escape: 'n',
      },
      context,
      terminal,
    );
    return { decision: choice === 'y' ? 'approve' : 'deny', scope: 'once' };
  }

  private async delivery(
    inquiry: InquiryOf<'deliver_tool_result'>,
    context: () => PromptContext,
    terminal: TerminalStreams,
  ): Promise<AnswerOf<'deliver_tool_result'>> {
    const choice = inquiry.edit
      ? 'e'
      : await this.keyChoice(
          {
            title: `⚙ ${visible(inquiry.tool, { singleLine: true, invisible: true })} result${inquiry.is_error ? ' (an error)' : ''}`,
            payload: inquiry.result
              .split('\n')
              .map((line) => ({ kind: 'plain' as const, text: visible(line, { singleLine: true, invisible: true }) })),
            question: `Send the result of ${visible(inquiry.tool, { singleLine: true, invisible: true })} to the assistant?`,
            keys: [
              { key: 'y', meaning: 'send it' },
              { key: 'n', meaning: 'withhold it' },
              { key: 'p', meaning: 'show all of it' },
              { key: 'e', meaning: 'edit it first' },
            ],
            enter: 'y',
            escape: 'n',
          },
          context,
          terminal,
        );
    if (choice === 'y') return { decision: 'deliver' };
    if (choice === 'n') return { decision: 'deny', scope: 'once' };
    return {
      decision: 'edit',
      result: await this.edit(`the result of ${inquiry.tool}`, inquiry.result, '.txt', terminal),
    };
  }

  /** Opens the editor at once on `text`; says on the terminal what is being edited. */
  private async edit(what: string, text: string, extension: string, terminal: TerminalStreams): Promise<string> {
    this.print(
      terminal,
      `Editing ${visible(what, { singleLine: true, invisible: true })} in ${this.options.environment.VISUAL?.trim() || this.options.environment.EDITOR?.trim() || 'vi'}…\n`,
    );
    return this.keyboard.released(() => editInTerminal(text, { environment: this.options.environment, extension }));
  }

  /** Edits JSON until it parses (an empty file keeps the original); says what was wrong each time. */
  private async editJson(what: string, initial: string, terminal: TerminalStreams): Promise<JsonValue> {
    let text = initial;
    for (;;) {
      let edited: string;
      try {
        edited = await this.edit(what, text, '.json', terminal);
      } catch (error) {
        if (!(error instanceof EditorFailed)) throw error;
        this.print(terminal, `${error.message}\n`);
        return JSON.parse(initial);
      }
      if (edited.trim() === '') return JSON.parse(initial);
      try {
        return JSON.parse(edited);
      } catch (error) {
        this.print(
          terminal,
          `not valid JSON: ${(error as Error).message}; opening the editor again (empty the file to keep the original)\n`,
        );
        text = edited;
      }
    }
  }

  /** A one-key prompt over a payload (key-choice.ts), in this prompter's colours. */
  private keyChoice(choice: Choice, context: () => PromptContext, terminal: TerminalStreams): Promise<string> {
    return keyChoice(choice, context, terminal, this.color, (text) => this.print(terminal, text));
  }

  /**
   * The Ctrl+C menu, and the reply box when the choice is `reply`, as one session. However it
   * closes, the menu never stays open on the screen: it closes to one line, `✔ Interrupted. What
   * now? <answer>`, naming what happens: the choice, `stop` for a second Ctrl+C (which stops the
   * run), `detach` for Ctrl+Z. A menu closed from outside (the run ended, or the session was
   * cancelled) is erased.
   */
  async interruptMenu(options: InterruptAction[], signal: AbortSignal): Promise<InterruptChoice> {
    const [prompts, core] = await Promise.all([import('@inquirer/prompts'), import('@inquirer/core')]);
    const labels: Record<InterruptAction, string> = {
      stop: 'stop: save what was done and end the turn (resumable)',
      abort: 'abort: end the turn and drop it',
      continue: 'continue: keep going',
      reply: 'reply: stop and tell the assistant something',
      detach: 'detach: let it run in the background',
    };
    const message = 'Interrupted. What now?';
    // The menu's closed line is drawn as the select prompt draws a chosen answer, in its theme.
    const theme = core.makeTheme();
    const prefix = typeof theme.prefix === 'string' ? theme.prefix : theme.prefix.done;
    const closedLine = (action: InterruptAction): string =>
      `${prefix} ${theme.style.message(message, 'done')} ${theme.style.answer(labels[action])}\n`;
    return this.session(async (context, terminal) => {
      // The select prompt erases itself when it ends (clearPromptOnDone), whether it was answered
      // or not, and the closed line is written here: one line in every case.
      const menuContext = { ...context(), clearPromptOnDone: true };
      let action: InterruptAction;
      try {
        action = await prompts.select<InterruptAction>(
          { message, choices: options.map((option) => ({ name: labels[option], value: option })) },
          menuContext,
        );
      } catch (error) {
        if (isExit(error)) this.print(terminal, closedLine('stop'));
        else if (menuContext.signal.reason instanceof PromptDetached) this.print(terminal, closedLine('detach'));
        throw error;
      }
      this.print(terminal, closedLine(action));
      if (action !== 'reply') return { action };
      const reply = await prompts.input({ message: 'Your reply:' }, context());
      return { action, reply };
    }, signal);
  }

  async choose<T extends string>(
    message: string,
    choices: { value: T; name: string }[],
    signal: AbortSignal,
  ): Promise<T> {
    const prompts = await import('@inquirer/prompts');
    return this.session((context) => prompts.select({ message, choices }, context()), signal);
  }

  /**
   * The workspace trust question: `title`, the settings (`lines`, each shown whole: a long list
   * is cut with `+N more lines — press p to see all`, and y is refused until all was seen), then
   * the question; one key answers: `y` trusts, `n` (or Enter, or Esc) does not.
   */
  async trustKey(title: string, lines: readonly string[], question: string, signal: AbortSignal): Promise<boolean> {
    return this.session(
      async (context, terminal) =>
        (await this.keyChoice(
          {
            title,
            payload: lines.map((text) => ({ kind: 'plain' as const, text })),
            question,
            keys: [
              { key: 'y', meaning: 'trust it', needsAll: true },
              { key: 'n', meaning: 'do not trust it (its settings that need trust are ignored)' },
            ],
            enter: 'n',
            escape: 'n',
          },
          context,
          terminal,
        )) === 'y',
      signal,
    );
  }

  /** A yes/no question; Enter gives `fallback`. */
  async confirm(message: string, fallback: boolean, signal: AbortSignal): Promise<boolean> {
    const prompts = await import('@inquirer/prompts');
    return this.session((context) => prompts.confirm({ message, default: fallback }, context()), signal);
  }
}
