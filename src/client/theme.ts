/**
 * jp's colours at a terminal, for a dark or a light background (DESIGN §13). Every colour jp draws
 * (markdown, highlighted code, chrome, the status line) is a role of one palette:
 *
 * - `dark` and `light` use fixed xterm-256 colours, each with a contrast of at least 4.5:1 (WCAG AA
 *   for text) against its background: black and a dark gray (#303030) for `dark`, white for
 *   `light`; muted text is a gray, never faint (faint text has no contrast one can count on).
 *
 * Which one: `ui.theme = "dark" | "light"` in the config, else the terminal's background as it
 * answers an OSC 11 query (only at a real terminal, with a short timeout), else `COLORFGBG`, else dark.
 */
import type { TerminalStreams } from '../output/channels.ts';

export type ThemeName = 'dark' | 'light';

export const paletteRoles = [
  /** Inline code. */
  'code',
  /** Keywords in code. */
  'keyword',
  /** Built-ins, types, attributes, properties; tool headers and the user's message in replays. */
  'name',
  /** Strings in code, additions. */
  'string',
  /** Numbers, literals, symbols. */
  'number',
  /** Comments, quote bars, rules, muted chrome. */
  'muted',
  /** Function and class titles, tags, links. */
  'title',
  /** Variables, regular expressions, deletions, errors. */
  'error',
  /** Warnings and questions jp asks. */
  'warning',
] as const;
export type PaletteRole = (typeof paletteRoles)[number];

/** xterm-256 colour indices of the light palette (checked for contrast against white by a test). */
export const lightColors: Record<PaletteRole, number> = {
  code: 94, // #875f00
  keyword: 90, // #870087
  name: 24, // #005f87
  string: 22, // #005f00
  number: 94, // #875f00
  muted: 242, // #6c6c6c
  title: 25, // #005faf
  error: 124, // #af0000
  warning: 94, // #875f00
};

/** xterm-256 colour indices of the dark palette (checked for contrast against black and #303030 by a test). */
export const darkColors: Record<PaletteRole, number> = {
  code: 179, // #d7af5f
  keyword: 176, // #d787d7
  name: 80, // #5fd7d7
  string: 114, // #87d787
  number: 179, // #d7af5f
  muted: 247, // #9e9e9e
  title: 111, // #87afff
  error: 210, // #ff8787
  warning: 179, // #d7af5f
};

export interface Palette {
  readonly name: ThemeName;
  /** The escape sequence that turns a role's colour on ('' without colour). */
  open(role: PaletteRole): string;
  /** `text` in a role's colour, closed with the matching "off" sequence (`text` without colour). */
  paint(role: PaletteRole, text: string): string;
}

export function palette(name: ThemeName, color: boolean): Palette {
  const colors = name === 'light' ? lightColors : darkColors;
  const open = (role: PaletteRole): string => (color ? `\u001b[38;5;${colors[role]}m` : '');
  return {
    name,
    open,
    paint: (role, text) => (color ? `${open(role)}${text}\u001b[39m` : text),
  };
}

/** The RGB of an xterm-256 colour index (the standard table: 16 system colours, a 6×6×6 cube, 24 grays). */
export function xterm256Rgb(index: number): [number, number, number] {
  const system: [number, number, number][] = [
    [0, 0, 0],
    [205, 0, 0],
    [0, 205, 0],
    [205, 205, 0],
    [0, 0, 238],
    [205, 0, 205],
    [0, 205, 205],
    [229, 229, 229],
    [127, 127, 127],
    [255, 0, 0],
    [0, 255, 0],
    [255, 255, 0],
    [92, 92, 255],
    [255, 0, 255],
    [0, 255, 255],
    [255, 255, 255],
  ];
  if (index < 16) return system[index]!;
  if (index >= 232) {
    const gray = 8 + 10 * (index - 232);
    return [gray, gray, gray];
  }
  const levels = [0, 95, 135, 175, 215, 255];
  const cube = index - 16;
  return [levels[Math.floor(cube / 36)]!, levels[Math.floor(cube / 6) % 6]!, levels[cube % 6]!];
}

/** Whether an `rgb:RRRR/GGGG/BBBB` (or `#RRGGBB`) colour is light (relative luminance above one half). */
export function isLightColor(specification: string): boolean | undefined {
  let parts: number[];
  const rgb = /rgba?:([0-9a-f]{1,4})\/([0-9a-f]{1,4})\/([0-9a-f]{1,4})/i.exec(specification);
  if (rgb) parts = rgb.slice(1, 4).map((part) => parseInt(part, 16) / (16 ** part.length - 1));
  else {
    const hash = /#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})/i.exec(specification);
    if (!hash) return undefined;
    parts = hash.slice(1, 4).map((part) => parseInt(part, 16) / 255);
  }
  return relativeLuminance(parts[0]!, parts[1]!, parts[2]!) > 0.5;
}

/** WCAG relative luminance of an sRGB colour with channels in 0..1. */
export function relativeLuminance(red: number, green: number, blue: number): number {
  const linear = (channel: number): number =>
    channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue);
}

/** `COLORFGBG` ("15;0": light text on a dark background) as set by rxvt, Konsole and others. */
function themeFromColorFgBg(value: string | undefined): ThemeName | undefined {
  const background = value?.split(';').pop();
  if (background === undefined || !/^\d+$/.test(background)) return undefined;
  const index = Number(background);
  return index === 7 || index === 15 || (index >= 9 && index <= 14) ? 'light' : 'dark';
}

/**
 * Asks the terminal for its background colour (OSC 11) and waits at most `timeoutMs` for the
 * answer, or until it answers the device-attributes query sent after it (a terminal that does not
 * know OSC 11); undefined when it does not say. The terminal is in raw mode only while waiting, and
 * whatever else arrives meanwhile is dropped (keys typed before jp drew anything).
 */
export async function queryBackground(terminal: TerminalStreams, timeoutMs: number): Promise<ThemeName | undefined> {
  const { input, output } = terminal;
  if (!input.isTTY) return undefined;
  return new Promise((resolve) => {
    let received = '';
    const done = (theme: ThemeName | undefined): void => {
      clearTimeout(timer);
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      resolve(theme);
    };
    const onData = (data: Buffer): void => {
      received += data.toString('latin1');
      const answer = /\u001b\]11;([^\u0007\u001b]*)(\u0007|\u001b\\)/.exec(received);
      if (answer) {
        const light = isLightColor(answer[1]!);
        done(light === undefined ? undefined : light ? 'light' : 'dark');
      } else if (/\u001b\[\?[\d;]*c/.test(received)) {
        // Terminals answer the device-attributes query after the background query: one that
        // answered this but not that does not know OSC 11, and jp need not wait any longer.
        done(undefined);
      }
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    input.setRawMode(true);
    input.on('data', onData);
    input.resume();
    output.write('\u001b]11;?\u0007\u001b[c');
  });
}

export interface ThemeChoice {
  /** `ui.theme` from the config, if set. */
  configured: ThemeName | undefined;
  environment: NodeJS.ProcessEnv;
  /**
   * Opens the controlling terminal for the OSC 11 query; undefined when jp must not query (not a real terminal,
   * TERM=dumb).
   */
  openTerminal: (() => TerminalStreams | undefined) | undefined;
  timeoutMs?: number;
}

/** The theme: the config's, else the terminal's background, else COLORFGBG, else dark. */
export async function chooseTheme(choice: ThemeChoice): Promise<ThemeName> {
  if (choice.configured) return choice.configured;
  const terminal = choice.openTerminal?.();
  if (terminal) {
    try {
      const answered = await queryBackground(terminal, choice.timeoutMs ?? 150);
      if (answered) return answered;
    } finally {
      terminal.close();
    }
  }
  return themeFromColorFgBg(choice.environment.COLORFGBG) ?? 'dark';
}
