/**
 * Picks and prepares the renderer for a format, with the TerminalOutput that owns this client's
 * terminal. text-pretty loads the markdown modules. A status line ("thinking", the running tool)
 * is shown on stderr only when `interactive` and stderr is a terminal that obeys escape sequences
 * (not TERM=dumb). The colours' theme is chosen only when something is drawn in colour.
 */
import {
  colorEnabled,
  controllingTerminalAvailable,
  isDumbTerminal,
  openControllingTerminal,
  type OutputFormat,
  type SafeWriter,
} from '../output/channels.ts';
import { chooseTheme, palette, type ThemeName } from './theme.ts';
import { JsonRenderer } from './json-renderer.ts';
import { loadMarkdown } from './markdown.ts';
import type { Pricer } from '../llm/prices.ts';
import type { Renderer } from './renderer.ts';
import { TerminalOutput } from './terminal-output.ts';
import { TextRenderer } from './text-renderer.ts';

export interface RendererOptions {
  format: OutputFormat;
  stdout: SafeWriter;
  stderr: SafeWriter;
  environment: NodeJS.ProcessEnv;
  conversationId: string;
  quiet: boolean;
  /**
   * A person watches this run live at this terminal (a foreground query, an attach; not
   * non-interactive, not a background job): a status line may say what the run is doing.
   */
  interactive: boolean;
  /** Say "thinking" until the first output (a foreground query). */
  thinking?: boolean;
  /** What the status line says about Ctrl+C ("Ctrl+C to interrupt" unless given). */
  interruptHint?: string;
  /** `ui.theme` from the config; read only when colour is drawn. */
  configuredTheme?: () => Promise<ThemeName | undefined>;
  /**
   * jp may ask its terminal for the background colour (OSC 11): it runs in the foreground of its
   * terminal and may be interactive there (a background job never touches terminal modes).
   */
  mayQueryTerminal?: boolean;
  /** Prices replayed turns (conversation print): their tokens lines say the cost when known. */
  price?: Pricer;
}

/** The theme of the colours, when colour is drawn: the config's, else what the terminal says, else dark. */
async function theme(options: RendererOptions, drawsColor: boolean): Promise<ThemeName> {
  if (!drawsColor) return 'dark';
  const configured = await options.configuredTheme?.();
  const query =
    options.mayQueryTerminal === true &&
    options.stdout.isTerminal &&
    options.stderr.isTerminal &&
    !isDumbTerminal(options.environment) &&
    controllingTerminalAvailable();
  return chooseTheme({
    configured,
    environment: options.environment,
    openTerminal: query ? openControllingTerminal : undefined,
  });
}

export async function createRenderer(options: RendererOptions): Promise<Renderer> {
  const color = colorEnabled(options.environment, options.stderr.isTerminal);
  const dumb = isDumbTerminal(options.environment);
  if (options.format === 'json') {
    return new JsonRenderer(
      new TerminalOutput({ stdout: options.stdout, stderr: options.stderr, statusLine: false, color: false }),
      options.conversationId,
    );
  }
  const pretty = options.format === 'text-pretty';
  const markdownColor = colorEnabled(options.environment, options.stdout.isTerminal);
  const drawsColor = color || (pretty && markdownColor);
  const [modules, themeName] = await Promise.all([
    pretty ? loadMarkdown(markdownColor) : undefined,
    theme(options, drawsColor),
  ]);
  const chrome = palette(themeName, color);
  const output = new TerminalOutput({
    stdout: options.stdout,
    stderr: options.stderr,
    statusLine: options.interactive && options.stderr.isTerminal && !dumb && !options.quiet,
    color,
    spinnerStyle: chrome.open('name'),
    ...(drawsColor ? { theme: themeName } : {}),
  });
  return new TextRenderer({
    output,
    pretty,
    color,
    conversationId: options.conversationId,
    quiet: options.quiet,
    ...(modules ? { markdown: { modules, color: markdownColor } } : {}),
    thinking: options.thinking ?? false,
    palette: chrome,
    interruptHint: options.interruptHint ?? 'Ctrl+C to interrupt',
    ...(options.price ? { price: options.price } : {}),
  });
}
