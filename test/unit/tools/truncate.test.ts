/**
 * truncateOutput, the one place tool output is cut: head and tail kept at line boundaries, the
 * number of lines and characters left out said, the limit kept, surrogate pairs never split.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { truncateOutput } from '../../../src/tools/truncate.ts';

describe('truncateOutput', () => {
  it('keeps short text as it is', () => {
    assert.equal(truncateOutput('a\nb\n', 10), 'a\nb\n');
  });

  it('keeps whole lines of the head and the tail and counts the lines left out', () => {
    const text = Array.from({ length: 1000 }, (_, index) => `line ${index + 1}`).join('\n');
    const cut = truncateOutput(text, 2000);
    assert.ok(cut.length <= 2000, `${cut.length}`);
    const lines = cut.split('\n');
    const mark = lines.findIndex((line) => line.startsWith('[… jp omitted'));
    const head = lines.slice(0, mark);
    const tail = lines.slice(mark + 1);
    assert.deepEqual(
      head,
      Array.from({ length: head.length }, (_, index) => `line ${index + 1}`),
      'the head is whole lines from the start',
    );
    assert.deepEqual(
      tail,
      Array.from({ length: tail.length }, (_, index) => `line ${1000 - tail.length + index + 1}`),
      'the tail is whole lines to the end',
    );
    const omitted = 1000 - head.length - tail.length;
    // Kept: the head with its last newline, and the tail.
    const characters = text.length - (head.join('\n').length + 1) - tail.join('\n').length;
    assert.equal(
      lines[mark],
      `[… jp omitted ${omitted} lines (${characters} characters) here: the output is longer than 2000 characters …]`,
    );
  });

  it("the last line (a command's exit code) survives a cut", () => {
    const text = `${'x\n'.repeat(50_000)}exit code 1`;
    assert.ok(truncateOutput(text, 30_000).endsWith('\nexit code 1'));
  });

  it('cuts one long line by characters, never in the middle of a surrogate pair', () => {
    const text = '😀'.repeat(5000);
    const cut = truncateOutput(text, 1000, 'query');
    assert.ok(cut.length <= 1000);
    assert.match(cut, /\n\[… jp omitted \d+ characters here: the query is longer than 1000 characters …\]\n/);
    const [head, , tail] = cut.split('\n');
    assert.equal(head, '😀'.repeat(head!.length / 2));
    assert.equal(tail, '😀'.repeat(tail!.length / 2));
  });
});
