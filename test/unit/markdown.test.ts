import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import stringWidth from 'string-width';
import { loadMarkdown, MarkdownStream } from '../../src/client/markdown.ts';

const require = createRequire(import.meta.url);

const document = [
  '# Heading one',
  '## Heading two',
  '###### Heading six',
  '#hashtag is not a heading',
  '',
  'A paragraph with **bold**, *em*, `code`, a [link](https://example.com) and words enough to wrap twice at sixty columns.',
  '',
  '- an item',
  '  - a nested item that is long enough to wrap under its own text at sixty columns',
  '1. first',
  '10) tenth',
  '',
  '> a quote that is long enough to wrap at sixty columns, with a bar on every row',
  '> > nested',
  '>',
  '',
  '---',
  '',
  '| a | b |',
  '|---|---|',
  '| 1 | 2 |',
  '',
  '```ts',
  'const x: number = 1; // code',
  '```',
  'after',
].join('\n');

async function render(pieces: string[], color: boolean, columns = 60): Promise<string> {
  const modules = await loadMarkdown(color);
  let output = '';
  const stream = new MarkdownStream(modules, (text) => (output += text), { color, columns: () => columns });
  for (const piece of pieces) stream.push(piece);
  stream.end();
  return output;
}

describe('MarkdownStream', () => {
  it('draws the same bytes however the stream is split (every split point of the document, with and without colour)', async () => {
    for (const color of [false, true]) {
      const whole = await render([document], color);
      for (let split = 1; split < document.length; split++) {
        assert.equal(
          await render([document.slice(0, split), document.slice(split)], color),
          whole,
          `split at ${split}: ${JSON.stringify(document.slice(Math.max(0, split - 10), split))}|${JSON.stringify(document.slice(split, split + 10))}`,
        );
      }
      const characters = await render([...document], color);
      assert.equal(characters, whole, 'one character at a time');
    }
  });

  it('keeps heading levels, wraps within the width, draws no fence', async () => {
    const lines = (await render([document], false)).split('\n');
    assert.ok(lines.includes('## Heading two'));
    assert.ok(lines.includes('###### Heading six'));
    assert.ok(lines.includes('#hashtag is not a heading'));
    assert.ok(
      lines.every((line) => stringWidth(line) <= 60),
      lines.join('\n'),
    );
    assert.ok(!lines.some((line) => line.includes('```')));
    assert.ok(lines.includes('const x: number = 1; // code'));
    assert.ok(lines.includes('│ │ nested'));
  });

  it('measures wide characters as two cells and combining marks as none', () => {
    assert.equal(stringWidth('abc'), 3);
    assert.equal(stringWidth('日本'), 4);
    assert.equal(stringWidth('e\u0301'), 1);
    assert.equal(stringWidth('🙂'), 2);
  });
});

/** Rows an @xterm/headless terminal of `columns` shows for `bytes`, each with the text of its bold cells. */
async function drawn(bytes: string, columns: number): Promise<{ text: string; bold: string }[]> {
  const { Terminal } = require('@xterm/headless') as typeof import('@xterm/headless');
  const terminal = new Terminal({ cols: columns, rows: 40, allowProposedApi: true });
  await new Promise<void>((resolve) => terminal.write(bytes.replace(/\n/g, '\r\n'), resolve));
  const buffer = terminal.buffer.active;
  const cell = buffer.getNullCell();
  const rows: { text: string; bold: string }[] = [];
  for (let index = 0; index < buffer.length; index++) {
    const line = buffer.getLine(index)!;
    let bold = '';
    for (let column = 0; column < line.length; column++) {
      line.getCell(column, cell);
      bold += cell.isBold() ? cell.getChars() || ' ' : ' ';
    }
    rows.push({ text: line.translateToString(true), bold: bold.trim().replace(/ +/g, ' ') });
  }
  terminal.dispose();
  return rows.filter((row) => row.text !== '');
}

describe('streamed emphasis', () => {
  // Spans of several words, of each kind: a piece may end inside any of them.
  const line =
    'We fix **the parser** today, *with care* and __two words__, ~~not this~~ or `a code span` [a link text](https://example.com).';

  it('is drawn styled, never as literal marks, wherever a streamed piece ends (every split point, on a rendered screen)', async () => {
    const whole = await render([line], true, 200);
    const rows = await drawn(whole, 200);
    assert.equal(rows.length, 1, JSON.stringify(rows));
    assert.equal(
      rows[0]!.text,
      'We fix the parser today, with care and two words, not this or a code span a link text (https://example.com).',
    );
    assert.equal(rows[0]!.bold, 'the parser two words');
    for (let split = 1; split < line.length; split++) {
      const bytes = await render([line.slice(0, split), line.slice(split)], true, 200);
      const where = `split at ${split}: ${JSON.stringify(line.slice(0, split))} | ${JSON.stringify(line.slice(split))}`;
      assert.deepEqual(await drawn(bytes, 200), rows, where);
    }
    for (let first = 1; first < line.length; first += 7) {
      for (let second = first + 1; second < line.length; second += 5) {
        const pieces = [line.slice(0, first), line.slice(first, second), line.slice(second)];
        assert.equal(await render(pieces, true, 200), whole, `split at ${first} and ${second}`);
      }
    }
  });

  it('wraps the same at sixty columns however the stream is split', async () => {
    const whole = await render([line], true, 60);
    for (let split = 1; split < line.length; split++)
      assert.equal(await render([line.slice(0, split), line.slice(split)], true, 60), whole, `split at ${split}`);
  });
});
