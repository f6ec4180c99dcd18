/**
 * The colours of prompts, all from the palette (theme.ts): the parts of the one-key prompt
 * (key-choice.ts) and the theme handed to every @inquirer prompt (the Ctrl+C menu, questions, the
 * reply box, forms), so a prompt is drawn in the colours of the theme in force, and in none
 * without colour (NO_COLOR, TERM=dumb).
 */
import type { Palette, PaletteRole } from './theme.ts';

export interface PromptStyle {
  /** `text` in a role's colour. */
  paint(role: PaletteRole, text: string): string;
  bold(text: string): string;
  /** The theme of @inquirer prompts (a partial theme: what it does not set, @inquirer draws without colour). */
  inquirer: InquirerTheme;
}

export interface InquirerTheme {
  prefix: { idle: string; done: string };
  spinner: { interval: number; frames: string[] };
  icon: { cursor: string; checked: string; unchecked: string };
  style: {
    answer(text: string): string;
    message(text: string): string;
    error(text: string): string;
    defaultAnswer(text: string): string;
    help(text: string): string;
    highlight(text: string): string;
    key(text: string): string;
    description(text: string): string;
    disabled(text: string): string;
    disabledChoice(text: string): string;
    keysHelpTip(keys: [string, string][]): string;
  };
}

export function promptStyle(palette: Palette, color: boolean): PromptStyle {
  const paint = (role: PaletteRole, text: string): string => (color ? palette.paint(role, text) : text);
  const bold = (text: string): string => (color ? `\u001b[1m${text}\u001b[22m` : text);
  const muted = (text: string): string => paint('muted', text);
  return {
    paint,
    bold,
    inquirer: {
      prefix: { idle: paint('name', '?'), done: paint('string', '✔') },
      spinner: {
        interval: 80,
        frames: ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'].map((frame) => paint('name', frame)),
      },
      icon: { cursor: '❯', checked: paint('string', '◉'), unchecked: '◯' },
      style: {
        answer: (text) => paint('name', text),
        message: bold,
        error: (text) => paint('error', `> ${text}`),
        defaultAnswer: (text) => muted(`(${text})`),
        help: muted,
        highlight: (text) => paint('name', text),
        key: (text) => paint('name', bold(`<${text}>`)),
        description: (text) => paint('name', text),
        disabled: (text) => muted(`- ${text}`),
        disabledChoice: (text) => muted(`- ${text}`),
        keysHelpTip: (keys) => keys.map(([key, action]) => `${bold(key)} ${muted(action)}`).join(muted(' • ')),
      },
    },
  };
}
