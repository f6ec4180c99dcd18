/**
 * Prompts on the controlling terminal (`/dev/tty`), never on stdin or stdout, so that
 * `echo ctx | jp query x | cat` still asks the human at the terminal. @inquirer is imported only
 * when a prompt is actually shown.
 */
import type { Inquiry, JsonValue } from '../inquiry/types.ts';
import type { InterruptAction } from '../protocol/messages.ts';
import { openControllingTerminal, type TerminalStreams } from '../output/channels.ts';

export class PromptCancelled extends Error {}
/** The human pressed Ctrl+C in a prompt. */
export class PromptInterrupted extends Error {}

type Key = { name: string; ctrl: boolean; shift?: boolean; sequence?: string };

function isAbort(error: unknown): boolean {
  const name = (error as Error | undefined)?.name;
  return name === 'AbortPromptError' || name === 'CancelPromptError';
}

function isExit(error: unknown): boolean {
  return (error as Error | undefined)?.name === 'ExitPromptError';
}

export class TerminalPrompter {
  private terminal: TerminalStreams | undefined;

  private open(): TerminalStreams {
    this.terminal ??= openControllingTerminal();
    if (!this.terminal) throw new PromptCancelled('no controlling terminal');
    return this.terminal;
  }

  close(): void {
    this.terminal?.close();
    this.terminal = undefined;
  }

  /** Writes a line to the terminal (not to stdout or stderr). */
  say(text: string): void {
    try {
      this.open().output.write(text + '\n');
    } catch {
      // no terminal: nothing to say it on
    }
  }

  private context(signal: AbortSignal): { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; signal: AbortSignal; clearPromptOnDone: boolean } {
    const terminal = this.open();
    return { input: terminal.input, output: terminal.output, signal, clearPromptOnDone: false };
  }

  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (isAbort(error)) throw new PromptCancelled('prompt cancelled');
      if (isExit(error)) throw new PromptInterrupted('interrupted');
      throw error;
    } finally {
      this.terminal?.input.pause();
    }
  }

  /** Asks the human to settle an inquiry; the answer has the shape route()'s callers expect. */
  async ask(inquiry: Inquiry, signal: AbortSignal): Promise<JsonValue> {
    switch (inquiry.kind) {
      case 'run_tool':
        return this.guard(() => this.permission(inquiry, signal));
      case 'deliver_tool_result':
        return this.guard(() => this.delivery(inquiry, signal));
      case 'tool_question': {
        const { question } = inquiry;
        const prompts = await import('@inquirer/prompts');
        const message = `${inquiry.tool} asks: ${question.text}`;
        return this.guard(async () => {
          switch (question.answer_type) {
            case 'boolean':
              return prompts.confirm({ message, ...(typeof question.default === 'boolean' ? { default: question.default } : {}) }, this.context(signal));
            case 'select':
              return prompts.select(
                {
                  message,
                  choices: (question.options ?? []).map((option) => ({ name: option, value: option })),
                  ...(typeof question.default === 'string' ? { default: question.default } : {}),
                },
                this.context(signal),
              );
            case 'text':
              return prompts.input({ message, ...(typeof question.default === 'string' ? { default: question.default } : {}) }, this.context(signal));
            case 'form': {
              const { fillInForm } = await import('./elicitation-form.ts');
              return (await fillInForm(inquiry.tool, question, this.context(signal))) as JsonValue;
            }
          }
        });
      }
    }
  }

  /** y run · Y run and remember for this turn · n skip · N skip and remember · p show arguments · e edit. */
  private async permission(inquiry: Extract<Inquiry, { kind: 'run_tool' }>, signal: AbortSignal): Promise<JsonValue> {
    const choice = await this.keyChoice(
      `Run ${inquiry.tool}?`,
      [
        ['y', 'run'],
        ['Y', 'run, and allow it for the rest of this turn'],
        ['n', 'skip'],
        ['N', 'skip, and for the rest of this turn'],
        ['p', 'show the arguments'],
        ['e', 'edit the arguments'],
      ],
      JSON.stringify(inquiry.arguments, null, 2),
      signal,
    );
    switch (choice) {
      case 'y':
        return 'run';
      case 'Y':
        return 'run_always';
      case 'n':
        return 'skip';
      case 'N':
        return 'skip_always';
      default: {
        const edited = await this.editJson(JSON.stringify(inquiry.arguments, null, 2), signal);
        return { edit: edited as JsonValue };
      }
    }
  }

  private async delivery(inquiry: Extract<Inquiry, { kind: 'deliver_tool_result' }>, signal: AbortSignal): Promise<JsonValue> {
    const choice = await this.keyChoice(
      `Send the result of ${inquiry.tool} to the assistant?`,
      [
        ['y', 'send it'],
        ['n', 'withhold it'],
        ['p', 'show the result'],
        ['e', 'edit it first'],
      ],
      inquiry.result,
      signal,
    );
    if (choice === 'y') return 'deliver';
    if (choice === 'n') return 'skip';
    const prompts = await import('@inquirer/prompts');
    const edited = await prompts.editor({ message: 'Edit the result', default: inquiry.result }, this.context(signal));
    return { edit: edited };
  }

  private async editJson(initial: string, signal: AbortSignal): Promise<unknown> {
    const prompts = await import('@inquirer/prompts');
    for (;;) {
      const text = await prompts.editor({ message: 'Edit the arguments (JSON)', default: initial }, this.context(signal));
      try {
        return JSON.parse(text);
      } catch (error) {
        this.say(`not valid JSON: ${(error as Error).message}`);
        initial = text;
      }
    }
  }

  /** A one-key prompt: returns the key pressed (case-sensitive), `p` toggles the details. */
  private async keyChoice(message: string, keys: [string, string][], details: string, signal: AbortSignal): Promise<string> {
    const core = await import('@inquirer/core');
    const prompt = core.createPrompt<string, { message: string }>((config, done) => {
      const [showDetails, setShowDetails] = core.useState(false);
      const [status, setStatus] = core.useState<'idle' | 'done'>('idle');
      const [chosen, setChosen] = core.useState('');
      core.useKeypress((event) => {
        const key = event as Key;
        const pressed = key.sequence && key.sequence.length === 1 ? key.sequence : key.shift ? key.name.toUpperCase() : key.name;
        if (pressed === 'p') {
          setShowDetails(!showDetails);
          return;
        }
        if (keys.some(([candidate]) => candidate === pressed)) {
          setStatus('done');
          setChosen(pressed);
          done(pressed);
        }
      });
      const legend = keys.map(([key, meaning]) => `${key} ${meaning}`).join(' · ');
      if (status === 'done') return `${config.message} ${chosen}`;
      return `${config.message} [${keys.map(([key]) => key).join('/')}]\n  ${legend}${showDetails ? `\n${details}` : ''}`;
    });
    return prompt({ message }, this.context(signal));
  }

  async interruptMenu(options: InterruptAction[], signal: AbortSignal): Promise<InterruptAction> {
    const prompts = await import('@inquirer/prompts');
    const labels: Record<InterruptAction, string> = {
      stop: 'stop: save what was done and end the turn (resumable)',
      abort: 'abort: end the turn and drop it',
      continue: 'continue: keep going',
      reply: 'reply: stop and tell the assistant something',
      detach: 'detach: let it run in the background',
    };
    return this.guard(() =>
      prompts.select({ message: 'Interrupted. What now?', choices: options.map((option) => ({ name: labels[option], value: option })) }, this.context(signal)),
    );
  }

  async text(message: string, signal: AbortSignal): Promise<string> {
    const prompts = await import('@inquirer/prompts');
    return this.guard(() => prompts.input({ message }, this.context(signal)));
  }

  async choose<T extends string>(message: string, choices: { value: T; name: string }[], signal: AbortSignal): Promise<T> {
    const prompts = await import('@inquirer/prompts');
    return this.guard(() => prompts.select({ message, choices }, this.context(signal)));
  }
}
