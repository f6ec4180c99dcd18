/**
 * Streaming markdown for text-pretty: text is rendered one complete block at a time (a paragraph
 * break outside a code fence), so a block is never rendered twice or half. On a terminal, the
 * block still being written is shown raw as it streams (a live preview) and replaced by its
 * rendering once complete. marked and marked-terminal are imported only here, only for text-pretty.
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

export interface MarkdownStreamOptions {
  /** Terminal width for a live preview of the unfinished block; undefined: no preview (not a terminal). */
  previewColumns?: number;
}

export class MarkdownStream {
  private buffer = '';
  private readonly parse: ParseFunction;
  private readonly write: (text: string) => void;
  private readonly previewColumns: number | undefined;
  /** Terminal rows the current preview occupies (0: none shown). */
  private previewRows = 0;

  constructor(parse: ParseFunction, write: (text: string) => void, options: MarkdownStreamOptions = {}) {
    this.parse = parse;
    this.write = write;
    this.previewColumns = options.previewColumns;
  }

  push(text: string): void {
    this.buffer += text;
    const cut = completeBlocksEnd(this.buffer);
    if (cut > 0) {
      this.clearPreview();
      this.render(this.buffer.slice(0, cut));
      this.buffer = this.buffer.slice(cut);
    }
    this.showPreview();
  }

  /** Renders whatever is left (end of a step, before chrome, at the end of the run). */
  end(): void {
    this.clearPreview();
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

  private showPreview(): void {
    if (this.previewColumns === undefined || this.buffer === '') return;
    this.clearPreview();
    this.write(this.buffer);
    this.previewRows = rowsOf(this.buffer, this.previewColumns);
  }

  /** Moves back over the preview and erases it. */
  private clearPreview(): void {
    if (this.previewRows === 0) return;
    const up = this.previewRows - 1;
    this.write(`${up > 0 ? `\u001b[${up}A` : ''}\r\u001b[J`);
    this.previewRows = 0;
  }
}

/** Terminal rows `text` takes when written from the start of a row, with wrapping at `columns`. */
function rowsOf(text: string, columns: number): number {
  const lines = text.split('\n');
  let rows = 0;
  lines.forEach((line, index) => {
    const width = [...line].length;
    // A trailing newline leaves the cursor at the start of one more row.
    if (index === lines.length - 1) rows += Math.max(1, Math.ceil(width / columns) || 1);
    else rows += Math.max(1, Math.ceil(width / columns));
  });
  return rows;
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
