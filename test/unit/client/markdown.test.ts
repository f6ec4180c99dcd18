import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayWidth } from '../../../src/client/display-width.ts';
import { loadMarkdown, MarkdownStream } from '../../../src/client/markdown.ts';

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
      lines.every((line) => displayWidth(line) <= 60),
      lines.join('\n'),
    );
    assert.ok(!lines.some((line) => line.includes('```')));
    assert.ok(lines.includes('const x: number = 1; // code'));
    assert.ok(lines.includes('│ │ nested'));
  });

  it('measures wide characters as two cells and combining marks as none', () => {
    assert.equal(displayWidth('abc'), 3);
    assert.equal(displayWidth('日本'), 4);
    assert.equal(displayWidth('e\u0301'), 1);
    assert.equal(displayWidth('🙂'), 2);
  });
});
