/**
 * Picks and prepares the renderer for a format. text-pretty loads the markdown modules; a spinner
 * is shown on stderr until the first output, only when stderr is a terminal.
 */
import { colorEnabled, type OutputFormat, type SafeWriter } from '../output/channels.ts';
import { JsonRenderer } from './json-renderer.ts';
import { loadMarkdown } from './markdown.ts';
import type { Renderer } from './renderer.ts';
import { TextRenderer } from './text-renderer.ts';

export interface RendererOptions {
  format: OutputFormat;
  stdout: SafeWriter;
  stderr: SafeWriter;
  environment: NodeJS.ProcessEnv;
  conversationId: string;
  quiet: boolean;
  /** Show a spinner until the first output (foreground queries). */
  spinner: boolean;
}

export async function createRenderer(options: RendererOptions): Promise<Renderer> {
  if (options.format === 'json') return new JsonRenderer(options.stdout, options.stderr, options.conversationId);
  const pretty = options.format === 'text-pretty';
  const color = colorEnabled(options.environment, options.stderr.isTerminal);
  const parseMarkdown = pretty ? await loadMarkdown(options.stdout.columns, colorEnabled(options.environment, options.stdout.isTerminal)) : undefined;
  let spinner: { stop(): void } | undefined;
  if (options.spinner && options.stderr.isTerminal && !options.quiet) {
    const { default: yoctoSpinner } = await import('yocto-spinner');
    spinner = yoctoSpinner({ text: 'thinking', stream: process.stderr, handleSignals: false }).start();
  }
  return new TextRenderer({
    stdout: options.stdout,
    stderr: options.stderr,
    pretty,
    color,
    conversationId: options.conversationId,
    quiet: options.quiet,
    ...(parseMarkdown ? { parseMarkdown } : {}),
    ...(spinner ? { spinner } : {}),
  });
}
