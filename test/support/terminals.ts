/**
 * The terminals a screen test of the person at the terminal runs on: 100×30 and 60×20, each with a
 * dark and a light theme (`ui.theme`, as a person sets it in the config).
 */
import type { ScreenOptions } from './screen.ts';

export interface TerminalKind {
  columns: number;
  rows: number;
  theme: 'dark' | 'light';
  /** e.g. `100×30 dark`, for test names. */
  name: string;
  /** The `-c ui.theme=…` arguments that select the theme. */
  themeArguments: string[];
  /** The screen's size. */
  size: Pick<ScreenOptions, 'columns' | 'rows'>;
}

export const terminals: readonly TerminalKind[] = [
  [100, 30, 'dark'],
  [100, 30, 'light'],
  [60, 20, 'dark'],
  [60, 20, 'light'],
].map(([columns, rows, theme]) => ({
  columns: columns as number,
  rows: rows as number,
  theme: theme as 'dark' | 'light',
  name: `${columns}×${rows} ${theme}`,
  themeArguments: ['-c', `ui.theme="${theme}"`],
  size: { columns: columns as number, rows: rows as number },
}));
