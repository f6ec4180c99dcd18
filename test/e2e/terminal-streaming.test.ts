/**
 * An answer as it streams, on the rendered screen at 100×30 and 60×20, dark and light: markup is
 * drawn styled wherever the provider's pieces end (a piece may end inside a bold span).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gate } from '../support/fake-provider.ts';
import { fakeModel, type Sandbox, useCleanup } from '../support/jp.ts';
import { Screen, type ScreenOptions } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

function jp(sandbox: Sandbox, args: string[], options: ScreenOptions = {}): Screen {
  return Screen.jp(sandbox, args, { cleanup, ...options });
}

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
      assert.equal(screen.styledText(), 'theparser', 'the bold span, and nothing else, is styled');
    });
  }
});
