/**
 * Words are never cut: jp's own text (a prompt's keys, hints and complaints, chrome lines, errors)
 * wraps at spaces to the terminal's width, and a long code line of an answer wraps at spaces with
 * a `↪` marker on each further row; tested on the rendered screen at 100×30 and 60×20, dark and
 * light.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testProvider, useCleanup } from '../support/jp.ts';
import { keys, Screen } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

/** Asserts each of `phrases` is whole on one row of the screen (not cut across two). */
function wholeOnARow(screen: Screen, phrases: string[]): void {
  const rows = screen.allRows();
  for (const phrase of phrases)
    assert.ok(
      rows.some((row) => row.includes(phrase)),
      `"${phrase}" is whole on one row:\n${rows.filter((row) => row !== '').join('\n')}`,
    );
}

/** Asserts every word of `text` is whole on a row (the words of a wrapped line, none cut in two). */
function wordsWhole(screen: Screen, text: string): void {
  wholeOnARow(screen, text.split(' '));
}

/** Asserts no row of the screen reaches past `columns` cells as a row the terminal had to wrap. */
function noRowWrappedByTheTerminal(screen: Screen, from: string): void {
  const lines = screen.lines();
  const rows = screen.allRows().filter((row) => row !== '');
  const start = lines.findIndex((line) => line.includes(from));
  assert.ok(start !== -1, screen.text());
  const longest = Math.max(...lines.slice(start).map((line) => line.length));
  assert.ok(
    longest <= screen.columns,
    `every line jp wrote fits the width (${screen.columns}): the terminal wrapped none:\n${rows.join('\n')}`,
  );
}

const codeLine = `const greeting = ${'"hello there" + '.repeat(4)}"general kenobi"; // ${'a comment that goes on '.repeat(2)}`;

describe("jp's own text wraps at spaces", () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: a prompt's keys, its complaint and the closing error lines are never cut mid-word; a long code line wraps with ↪`, async () => {
      const sandbox = cleanup.sandbox();
      const script = testProvider(sandbox, {
        steps: [
          {
            parts: [
              { text: `The code:\n\n\`\`\`js\n${codeLine}\n\`\`\`\n\n` },
              { tool_call: { name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a' } } },
            ],
          },
          { parts: [{ text: 'Done.' }] },
        ],
      });
      const screen = Screen.jp(sandbox, ['query', ...script, ...terminal.themeArguments, 'go'], {
        cleanup,
        ...terminal.size,
      });
      await screen.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen' });
      screen.press('x');
      await screen.waitFor('does nothing here', { on: 'screen' });
      wholeOnARow(screen, [
        'y run',
        'Y run, and for the rest of this turn',
        'n skip',
        'N skip, and for the rest of this turn',
        'p show all of it',
        'e edit',
        'Enter: y run',
        'Esc: n skip',
        'Enter (y)',
        'Esc (n)',
      ]);
      noRowWrappedByTheTerminal(screen, 'Run fs_create_file?');
      screen.press(keys.ctrlC);
      await screen.waitFor('continue: keep going', { on: 'screen' });
      screen.press(keys.enter);
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 130, screen.text());
      const [resume] = screen
        .text()
        .match(/jp: interrupted; the turn is saved\. Resume with: jp query --continue --id=jp-c\d+/) ?? [
        screen
          .text()
          .replace(/\n/g, ' ')
          .match(/jp: interrupted;[^\n]*?--id=jp-c\d+/)?.[0] ?? '',
      ];
      assert.ok(resume, screen.text());
      wordsWhole(screen, 'jp: interrupted; the turn is saved. Resume with: jp query --continue');
      noRowWrappedByTheTerminal(screen, 'Run fs_create_file?');
      // The code line: its words whole, each further row marked.
      const codeRows = screen.allRows().filter((row) => row.startsWith('const greeting') || row.startsWith('↪ '));
      if (terminal.columns < codeLine.length) assert.ok(codeRows.length >= 2, screen.text());
      assert.equal(
        codeRows.map((row, index) => (index === 0 ? row : row.slice(2))).join(' '),
        codeLine.trim(),
        screen.text(),
      );
      noRowWrappedByTheTerminal(screen, 'The code:');
    });
  }
});
