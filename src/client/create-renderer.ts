/**
 * Picks and prepares the renderer for a format, with the TerminalOutput that owns this client's
 * terminal. text-pretty loads the markdown modules. A status line ("thinking", the running tool)
 * is shown on stderr only when `interactive` and stderr is a terminal.
 */
import { colorEnabled, type OutputFormat, type SafeWriter } from '../output/channels.ts';
import { JsonRenderer } from './json-renderer.ts';
import { loadMarkdown } from './markdown.ts';
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
}

export async function createRenderer(options: RendererOptions): Promise<Renderer> {
  const color = colorEnabled(options.environment, options.stderr.isTerminal);
  const output = new TerminalOutput({
    stdout: options.stdout,
    stderr: options.stderr,
    statusLine: options.interactive && options.format !== 'json' && options.stderr.isTerminal && !options.quiet,
    color,
  });
  if (options.format === 'json') return new JsonRenderer(output, options.conversationId);
  const pretty = options.format === 'text-pretty';
  const markdownColor = colorEnabled(options.environment, options.stdout.isTerminal);
  const modules = pretty ? await loadMarkdown(markdownColor) : undefined;
  return new TextRenderer({
    output,
    pretty,
    color,
    conversationId: options.conversationId,
    quiet: options.quiet,
    ...(modules ? { markdown: { modules, color: markdownColor } } : {}),
    thinking: options.thinking ?? false,
  });
}
