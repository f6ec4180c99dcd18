import type { InquirerTheme } from './prompt-theme.ts';

/** What a prompt draws with: the terminal's input, an output of its own, the abort signal, and its colours. */
export interface PromptContext {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  signal: AbortSignal;
  clearPromptOnDone: boolean;
  /** The theme's colours for an @inquirer prompt: given as its config's `theme` (it does not read it here). */
  theme: InquirerTheme;
}
