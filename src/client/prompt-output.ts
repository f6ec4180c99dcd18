/**
 * The output stream of one prompt: writes go to the controlling terminal, ending it (as a finished
 * prompt does) leaves the terminal open, and each write tells the keyboard that the prompt is drawn
 * (keys count from then on). On a dumb terminal (TERM=dumb) each drawing is made plain and a redraw
 * writes only what changed.
 */
import type { TerminalStreams } from '../output/channels.ts';
import { Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';

/**
 * An output for one prompt: writes go to the terminal; ending it (as a finished prompt does) leaves
 * the terminal open. Width and TTY-ness are the terminal's, for the prompt's line wrapping.
 */
export function promptOutput(
  terminal: TerminalStreams['output'],
  drawn: () => void,
  plain: boolean,
): NodeJS.WritableStream {
  const redraws = plain ? new PlainRedraws() : undefined;
  const stream = new Writable({
    // The terminal takes each write at once (TTY writes block), so the prompt's last write is on
    // the terminal before its session ends and held output is released.
    write(chunk: Buffer | string, _encoding, callback) {
      // Keys count from the moment the prompt draws: what was typed before is discarded now, just
      // before the prompt shows (once it shows, a key may come at any moment and must count).
      drawn();
      terminal.write(redraws ? redraws.next(chunk.toString()) : chunk);
      callback();
    },
  });
  Object.defineProperties(stream, {
    isTTY: { get: () => true },
    columns: { get: () => terminal.columns },
    rows: { get: () => terminal.rows },
  });
  return stream;
}

/** Text without a single escape sequence or ESC byte (for TERM=dumb). */
export function plainText(text: string): string {
  return stripVTControlCharacters(text).replace(/[\u001b\u009b\r]/g, '');
}

/**
 * A prompt drawn for TERM=dumb, where nothing can be erased or moved over: each write of the
 * prompt is made plain (plainText), and a redraw writes only what changed: what extends the last
 * drawing (typed text) is appended; otherwise the lines from the first changed one are drawn again
 * on a new line. A clear (the prompt erasing itself) becomes a new line.
 */
class PlainRedraws {
  /** What the prompt's last drawing showed ('' when none is on the current line). */
  private shown = '';

  next(chunk: string): string {
    const text = plainText(chunk);
    if (text === '') {
      const cleared = chunk.includes('\u001b[2K') && this.shown !== '';
      if (cleared) this.shown = '';
      return cleared ? '\n' : '';
    }
    if (text === '\n') {
      this.shown = '';
      return text;
    }
    const previous = this.shown;
    this.shown = text;
    if (text.startsWith(previous)) return text.slice(previous.length);
    const before = previous.split('\n');
    const after = text.split('\n');
    let same = 0;
    while (same < before.length && same < after.length && before[same] === after[same]) same++;
    return same === after.length ? '' : `\n${after.slice(same).join('\n')}`;
  }
}
