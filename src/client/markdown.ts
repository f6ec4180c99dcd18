/**
 * Streaming markdown for text-pretty: text is rendered one complete block at a time (a paragraph
 * break outside a code fence), so a block is never rendered twice or half. marked and
 * marked-terminal are imported only here, only when stdout is a terminal.
 */

type ParseFunction = (markdown: string) => string;

let loaded: Promise<ParseFunction> | undefined;

export function loadMarkdown(width: number, color: boolean): Promise<ParseFunction> {
  loaded ??= (async () => {
    const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
    if (!color) process.env.FORCE_COLOR ??= '0';
    const marked = new Marked();
    marked.use(markedTerminal({ width: Math.max(20, width), reflowText: false, tab: 2 }) as never);
    return (markdown: string) => marked.parse(markdown, { async: false }) as string;
  })();
  return loaded;
}

export class MarkdownStream {
  private buffer = '';
  private readonly parse: ParseFunction;
  private readonly write: (text: string) => void;

  constructor(parse: ParseFunction, write: (text: string) => void) {
    this.parse = parse;
    this.write = write;
  }

  push(text: string): void {
    this.buffer += text;
    const cut = completeBlocksEnd(this.buffer);
    if (cut === 0) return;
    this.render(this.buffer.slice(0, cut));
    this.buffer = this.buffer.slice(cut);
  }

  /** Renders whatever is left (end of a step, before chrome, at the end of the run). */
  end(): void {
    if (this.buffer.trim() !== '') this.render(this.buffer);
    this.buffer = '';
  }

  private render(markdown: string): void {
    let output: string;
    try {
      output = this.parse(markdown);
    } catch {
      output = markdown;
    }
    this.write(output.endsWith('\n') ? output : output + '\n');
  }
}

/** Index just after the last paragraph break that is outside a fenced code block (0 if none). */
export function completeBlocksEnd(text: string): number {
  let inFence = false;
  let end = 0;
  let lineStart = 0;
  while (lineStart < text.length) {
    const newline = text.indexOf('\n', lineStart);
    if (newline === -1) break;
    const line = text.slice(lineStart, newline);
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (!inFence && line.trim() === '' && lineStart > 0) end = newline + 1;
    lineStart = newline + 1;
  }
  return end;
}
