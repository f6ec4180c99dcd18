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
 * one-key prompt over a payload (permissions, deliveries, trust) is key-choice.ts; the prompts of a
 * tool call are call-prompts.ts.
 */
import type { InquiryAnswer } from '../inquiry/answer.ts';
import type { Inquiry, JsonValue } from '../inquiry/types.ts';
import type { InterruptAction } from '../protocol/messages.ts';
import { colorEnabled, isDumbTerminal, openControllingTerminal, type TerminalStreams } from '../output/channels.ts';
import { resetAttributes, visible } from '../output/sanitize.ts';
import { askDelivery, askEscalation, askPermission, type CallDrawing, keyChoiceIn } from './call-prompts.ts';
import { editInTerminal } from './editor.ts';
import { promptStyle, type PromptStyle } from './prompt-theme.ts';
import { chooseTheme, palette, type ThemeName } from './theme.ts';
import { plainText, promptOutput } from './prompt-output.ts';
import { TerminalInput, type KeyHandlers } from './terminal-input.ts';
import { wrapWords } from './word-wrap.ts';
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
  /**
   * `ui.theme` from the config, for a prompter with no `output` (whose theme is the one its
   * renderer chose); unset, the terminal is asked for its background.
   */
  configuredTheme?: () => Promise<ThemeName | undefined>;
}

export class TerminalPrompter {
  private readonly options: TerminalPrompterOptions;
  private terminal: TerminalStreams | undefined;
  private readonly keyboard = new TerminalInput();
  private chosenStyle: Promise<PromptStyle> | undefined;

  constructor(options: TerminalPrompterOptions) {
    this.options = options;
  }

  /** The colours of prompts: the theme of this client's output, else the config's or the terminal's. */
  private style(): Promise<PromptStyle> {
    this.chosenStyle ??= (async () => {
      const color = this.color;
      const theme =
        this.options.output?.theme ??
        (color
          ? await chooseTheme({
              configured: await this.options.configuredTheme?.(),
              environment: this.options.environment,
              openTerminal: openControllingTerminal,
            })
          : 'dark');
      return promptStyle(palette(theme, color), color);
    })();
    return this.chosenStyle;
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
    show: (context: () => PromptContext, terminal: TerminalStreams, style: PromptStyle) => Promise<T>,
    signal: AbortSignal,
  ): Promise<T> {
    const run = async (): Promise<T> => {
      if (signal.aborted) throw new PromptCancelled('prompt cancelled');
      const style = await this.style();
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
        theme: style.inquirer,
      });
      try {
        return await show(context, terminal, style);
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
        return this.session(
          (context, terminal, style) => askPermission(inquiry, this.drawing(context, terminal, style), about.sandbox),
          signal,
        );
      case 'deliver_tool_result':
        return this.session(
          (context, terminal, style) => askDelivery(inquiry, this.drawing(context, terminal, style)),
          signal,
        );
      case 'escalate':
        return this.session(
          (context, terminal, style) => askEscalation(inquiry, this.drawing(context, terminal, style)),
          signal,
        );
      case 'tool_question': {
        const { question } = inquiry;
        const prompts = await import('@inquirer/prompts');
        // The question and its options come from a tool or the model: shown visibly, answered with the originals.
        const message =
          `${visible(inquiry.tool, { singleLine: true, invisible: true })} ` +
          `asks: ${visible(question.text, { invisible: true })}`;
        const value = await this.session(async (context, _terminal, style): Promise<JsonValue> => {
          const theme = style.inquirer;
          switch (question.answer_type) {
            case 'boolean':
              return prompts.confirm(
                { message, theme, ...(typeof question.default === 'boolean' ? { default: question.default } : {}) },
                context(),
              );
            case 'select':
              return prompts.select(
                {
                  message,
                  theme,
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
                  theme,
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

  /** Opens the editor at once on `text`; says on the terminal what is being edited. */
  private async edit(what: string, text: string, extension: string, terminal: TerminalStreams): Promise<string> {
    this.print(
      terminal,
      `Editing ${visible(what, { singleLine: true, invisible: true })} ` +
        `in ${this.options.environment.VISUAL?.trim() || this.options.environment.EDITOR?.trim() || 'vi'}…\n`,
    );
    return this.keyboard.released(() => editInTerminal(text, { environment: this.options.environment, extension }));
  }

  /** What a call's prompt (call-prompts.ts) draws with in a session. */
  private drawing(context: () => PromptContext, terminal: TerminalStreams, style: PromptStyle): CallDrawing {
    return {
      context,
      terminal,
      style,
      print: (text) => this.print(terminal, text),
      edit: (what, text, extension) => this.edit(what, text, extension, terminal),
      workspaceRoot: this.options.workspaceRoot,
    };
  }

  /**
   * The Ctrl+C menu, and the reply box when the choice is `reply`, as one session. However it
   * closes, the menu never stays open on the screen: it closes to one line, `✔ Interrupted. What
   * now? <answer>`, naming what happens: the choice, `stop` for a second Ctrl+C (which stops the
   * run), `detach` for Ctrl+Z. A menu closed from outside (the run ended, or the session was
   * cancelled) is erased.
   */
  async interruptMenu(options: InterruptAction[], signal: AbortSignal): Promise<InterruptChoice> {
    const prompts = await import('@inquirer/prompts');
    const labels: Record<InterruptAction, string> = {
      stop: 'stop: save what was done and end the turn (resumable)',
      abort: 'abort: end the turn and drop it',
      continue: 'continue: keep going',
      reply: 'reply: stop and tell the assistant something',
      detach: 'detach: let it run in the background',
    };
    const message = 'Interrupted. What now?';
    return this.session(async (context, terminal, style) => {
      // The menu's closed line is drawn as the select prompt draws a chosen answer, in its theme.
      const theme = style.inquirer;
      const closedLine = (action: InterruptAction): string =>
        `${wrapWords(
          `${theme.prefix.done} ${theme.style.message(message)} ${theme.style.answer(labels[action])}`,
          Math.max(20, (terminal.output.columns || 80) - 1),
          '  ',
        ).join('\n')}\n`;
      // The select prompt erases itself when it ends (clearPromptOnDone), whether it was answered
      // or not, and the closed line is written here: one line in every case.
      const menuContext = { ...context(), clearPromptOnDone: true };
      let action: InterruptAction;
      try {
        action = await prompts.select<InterruptAction>(
          { message, theme, choices: options.map((option) => ({ name: labels[option], value: option })) },
          menuContext,
        );
      } catch (error) {
        if (isExit(error)) this.print(terminal, closedLine('stop'));
        else if (menuContext.signal.reason instanceof PromptDetached) this.print(terminal, closedLine('detach'));
        throw error;
      }
      this.print(terminal, closedLine(action));
      if (action !== 'reply') return { action };
      const reply = await prompts.input({ message: 'Your reply:', theme: style.inquirer }, context());
      return { action, reply };
    }, signal);
  }

  async choose<T extends string>(
    message: string,
    choices: { value: T; name: string }[],
    signal: AbortSignal,
  ): Promise<T> {
    const prompts = await import('@inquirer/prompts');
    return this.session(
      (context, _terminal, style) => prompts.select({ message, choices, theme: style.inquirer }, context()),
      signal,
    );
  }

  /**
   * The workspace trust question: `title`, the settings (`lines`, each shown whole: a long list
   * is cut with `+N more lines — press p to see all`, and y is refused until all was seen), then
   * the question; one key answers: `y` trusts, `n` (or Enter, or Esc) does not.
   */
  async trustKey(title: string, lines: readonly string[], question: string, signal: AbortSignal): Promise<boolean> {
    return this.session(
      async (context, terminal, style) =>
        (await keyChoiceIn(
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
          this.drawing(context, terminal, style),
        )) === 'y',
      signal,
    );
  }

  /** A yes/no question; Enter gives `fallback`. */
  async confirm(message: string, fallback: boolean, signal: AbortSignal): Promise<boolean> {
    const prompts = await import('@inquirer/prompts');
    return this.session(
      (context, _terminal, style) => prompts.confirm({ message, default: fallback, theme: style.inquirer }, context()),
      signal,
    );
  }
}
