/**
 * The payload of a permission prompt (client/permission-view.ts) and attach's history selection:
 * pure functions, tested directly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeCall, diffLines, editsOf, fitPayload } from '../../src/client/permission-view.ts';
import { wrapWords } from '../../src/client/word-wrap.ts';
import { selectHistory } from '../../src/client/terminal-client.ts';
import type { ConversationEvent } from '../../src/conversation/events.ts';

const content = 'alpha\nbeta\ngamma\ndelta\n';
const texts = (lines: { text: string }[]): string[] => lines.map((line) => line.text);

describe('the diff of fs_modify_file', () => {
  it('one edit: a hunk with old and new line numbers and two lines of context', () => {
    assert.deepEqual(texts(diffLines(content, [{ old_string: 'gamma\n', new_string: 'GAMMA\n' }], 'f')), [
      '@@ -1,4 +1,4 @@',
      '1   alpha',
      '2   beta',
      '3 - gamma',
      '3 + GAMMA',
      '4   delta',
    ]);
  });

  it('the list form: each edit in turn, against the content the earlier ones made', () => {
    const edits = editsOf({
      path: 'f',
      edits: [
        { old_string: 'alpha', new_string: 'ALPHA' },
        { old_string: 'ALPHA\nbeta\n', new_string: 'one\n' },
      ],
    })!;
    assert.equal(edits.length, 2);
    assert.deepEqual(texts(diffLines(content, edits, 'f')), [
      '@@ -1,3 +1,3 @@',
      '1 - alpha',
      '1 + ALPHA',
      '2   beta',
      '3   gamma',
      '@@ -1,4 +1,3 @@',
      '1 - ALPHA',
      '2 - beta',
      '1 + one',
      '2   gamma',
      '3   delta',
    ]);
  });

  it('replace_all changes every line that holds the text; a deletion has no added line', () => {
    assert.deepEqual(texts(diffLines('a1\nb\na2\n', [{ old_string: 'a', new_string: 'A', replace_all: true }], 'f')), [
      '@@ -1,3 +1,3 @@',
      '1 - a1',
      '1 + A1',
      '2   b',
      '3 - a2',
      '3 + A2',
    ]);
    assert.deepEqual(texts(diffLines(content, [{ old_string: 'beta\n', new_string: '' }], 'f')), [
      '@@ -1,4 +1,3 @@',
      '1   alpha',
      '2 - beta',
      '2   gamma',
      '3   delta',
    ]);
  });

  it('an edit that does not apply, or a file that cannot be read, is shown as text with a note saying so', () => {
    assert.deepEqual(texts(diffLines(content, [{ old_string: 'zeta', new_string: 'eta' }], 'f')), [
      '(this text is not in f now: the edit will fail)',
      '- zeta',
      '+ eta',
    ]);
    assert.deepEqual(texts(diffLines(undefined, [{ old_string: 'x', new_string: 'y' }], 'f')), [
      '(f cannot be read here: no line numbers)',
      '- x',
      '+ y',
    ]);
  });
});

describe('a call as a prompt shows it', () => {
  it('control characters from the model are shown, never sent to the terminal', () => {
    const view = describeCall('run_command', { command: 'ls\u001b[8m\u001b]52;c;cm0gLXJmIH4=\u0007' }, () => undefined);
    assert.equal(view.title, 'run_command');
    assert.deepEqual(texts(view.lines), ['$ ls^[[8m^[]52;c;cm0gLXJmIH4=^G']);
    assert.ok(!JSON.stringify(view).includes('\\u001b'));
  });

  it('a long line is wrapped whole; what does not fit is cut only at the end, with the count', () => {
    assert.deepEqual(wrapWords('x'.repeat(25), 10, '  '), [
      'x'.repeat(8),
      '  ' + 'x'.repeat(8),
      '  ' + 'x'.repeat(8),
      '  x',
    ]);
    assert.deepEqual(wrapWords('one two three four', 10, '  '), ['one two', '  three', '  four']);
    const lines = Array.from({ length: 10 }, (_, index) => ({ kind: 'plain' as const, text: String(index) }));
    const { shown, hidden } = fitPayload(lines, 4);
    assert.deepEqual(texts(shown), ['0', '1', '2']);
    assert.equal(hidden, 7);
    assert.equal(fitPayload(lines, 10).hidden, 0);
  });

  it('wrapping counts cells as markdown does: any combining mark and zero-width character takes none, wide characters two', () => {
    // U+0951 (a Devanagari combining mark) and U+200B (zero-width space): one cell per pair.
    assert.deepEqual(wrapWords('a\u0951'.repeat(10), 10), ['a\u0951'.repeat(10)]);
    assert.deepEqual(wrapWords('b\u200b'.repeat(10), 10), ['b\u200b'.repeat(10)]);
    assert.deepEqual(wrapWords('漢'.repeat(6), 10), ['漢'.repeat(5), '漢']);
  });
});

describe('attach --tail=N (RFD 025)', () => {
  const event = (type: string, extra: Record<string, unknown> = {}): ConversationEvent =>
    ({ type, timestamp: 't', ...extra }) as unknown as ConversationEvent;
  const log = [
    event('turn_start'),
    event('chat_request', { content: 'q1' }),
    event('chat_response', { message: 'a1' }),
    event('turn_end', { status: 'completed' }),
    event('turn_start'),
    event('chat_request', { content: 'q2' }),
    event('chat_response', { message: 'a2' }),
    event('turn_end', { status: 'completed' }),
    event('turn_start'),
    event('chat_request', { content: 'q3' }),
    event('chat_response', { message: 'a3' }),
  ];

  it('shows the last N content events before the current turn, plus the whole current turn', () => {
    assert.deepEqual(selectHistory(log, { tail: 2 }), log.slice(5));
    assert.deepEqual(selectHistory(log, { tail: 1 }), log.slice(6));
    assert.deepEqual(selectHistory(log, { tail: 100 }), log);
    assert.deepEqual(selectHistory(log, { tail: 0 }), []);
    assert.deepEqual(selectHistory(log, 'current-turn'), log.slice(8));
  });
});
