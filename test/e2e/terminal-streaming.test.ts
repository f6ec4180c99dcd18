/**
 * An answer as it streams, on the rendered screen at 100×30 and 60×20, dark and light: markup is
 * drawn styled wherever the provider's pieces end (a piece may end inside a bold span).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gate } from '../support/fake-provider.ts';
import { fakeModel, useCleanup } from '../support/jp.ts';
import { jpScreens } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

const jp = jpScreens(cleanup);

describe('markup split across streamed pieces', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: a piece that ends inside a bold span still draws it bold, with no literal **`, async () => {
      const sandbox = cleanup.sandbox();
      // The rest of the answer comes once the first piece is on the screen.
      const drawn = gate();
      const model = await fakeModel(cleanup, [
        { parts: [{ text: 'We fix **the pa' }, { gate: drawn }, { text: 'rser** today.' }] },
      ]);
      const screen = jp(sandbox, ['query', ...model.args, ...terminal.themeArguments, 'plan'], {
        env: model.env,
        ...terminal.size,
      });
      await screen.waitFor('We fix');
      drawn.open();
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      assert.ok(screen.lines().includes('We fix the parser today.'), screen.text());
      assert.equal(screen.count('**'), 0, screen.text());
      assert.equal(
        screen.styledText().replace(/\[tokens:.*\]$/, ''),
        'theparser',
        'the bold span, and nothing else of the answer, is styled (the closing tokens line is muted chrome)',
      );
    });
  }
});

describe('widths of what the answer holds', () => {
  const table = [
    'Status:',
    '',
    '| Check | Who |',
    '|---|---|',
    '| ✅ done | 👍🏽 ok |',
    '| 日本 | 👨‍👩‍👧 family |',
    '| plain | text |',
    '',
  ].join('\n');
  for (const terminal of terminals) {
    it(`${terminal.name}: a table with emoji (✅, a skin tone, a family) and wide characters is drawn as a box whose right edge is straight`, async () => {
      const sandbox = cleanup.sandbox();
      const model = await fakeModel(cleanup, [{ parts: [{ text: table }] }]);
      const screen = jp(sandbox, ['query', ...model.args, ...terminal.themeArguments, 'status'], {
        env: model.env,
        graphemes: true,
        ...terminal.size,
      });
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      const box = screen.rowEnds().filter(({ row }) => /^[┌│├└]/.test(row));
      assert.equal(box.length, 7, screen.text());
      assert.deepEqual(
        box.map(({ end }) => end),
        box.map(() => box[0]!.end),
        `every row of the box ends in the same column:\n${box.map(({ row, end }) => `${end} ${row}`).join('\n')}`,
      );
    });
  }
});
