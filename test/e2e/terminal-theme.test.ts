/**
 * One theme: every colour jp draws at a terminal is a colour of the theme in force (dark or light),
 * prompts included (the one-key permission prompt with its diff, its complaint about a key, the
 * Ctrl+C menu), tested on the rendered screen at 100×30 and 60×20.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { darkColors, lightColors } from '../../src/client/theme.ts';
import { testProvider, useCleanup } from '../support/jp.ts';
import { keys, Screen } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

describe('the colours of a prompt', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: a permission prompt with a diff, its complaint about a key and the Ctrl+C menu draw only the theme's colours`, async () => {
      const sandbox = cleanup.sandbox();
      sandbox.write('notes.md', '# Notes\nalpha\nbeta\ngamma\n');
      const script = testProvider(sandbox, {
        steps: [
          {
            parts: [
              { text: 'One `change`.\n\n' },
              {
                tool_call: {
                  name: 'fs_modify_file',
                  arguments: { path: 'notes.md', old_string: 'beta', new_string: 'beta (checked)' },
                },
              },
            ],
          },
          { parts: [{ text: 'Done.' }] },
        ],
      });
      const screen = Screen.jp(sandbox, ['query', ...script, ...terminal.themeArguments, 'check'], {
        cleanup,
        ...terminal.size,
      });
      await screen.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen' });
      screen.press('x');
      await screen.waitFor('"x" does nothing here', { on: 'screen' });
      screen.press(keys.ctrlC);
      await screen.waitFor('continue: keep going', { on: 'screen' });
      const allowed = new Set(Object.values(terminal.theme === 'light' ? lightColors : darkColors).map(String));
      const drawn = screen.foregroundColors();
      assert.ok(drawn.length >= 4, `the prompt is drawn in colour: ${drawn.join(', ')}`);
      for (const color of drawn)
        assert.ok(allowed.has(color), `colour ${color} is not of the ${terminal.theme} theme:\n${screen.text()}`);
      screen.press(keys.down + keys.down + keys.enter);
      await screen.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen' });
      screen.press('n');
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      for (const color of screen.foregroundColors())
        assert.ok(allowed.has(color), `colour ${color} is not of the ${terminal.theme} theme:\n${screen.text()}`);
    });
  }
});
