/**
 * A command's outcome is on screen, tested on the rendered screen at 100×30 and 60×20, dark and
 * light: a failure's fold keeps its first and last lines, its stderr, its exit code and jp's own
 * `[jp: …]` note; a success stays short. `print` still shows every line.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conversationIds, runJp, testProvider, useCleanup } from '../support/jp.ts';
import { Screen } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

const failing = 'for i in $(seq 1 40); do echo "line $i"; done; echo bye >&2; touch /usr/jp-denied-here; exit 3';

describe('the fold of a command', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: a failure shows head and tail, stderr, the exit code and the sandbox note; a success stays short`, async () => {
      const sandbox = cleanup.sandbox();
      const script = testProvider(sandbox, {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: failing } } }] },
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'seq 1 12' } } }] },
          { parts: [{ text: 'Both ran.' }] },
        ],
      });
      const screen = Screen.jp(
        sandbox,
        ['query', ...script, '-c', 'conversation.tools.run_command.run="unattended"', ...terminal.themeArguments, 'go'],
        { cleanup, ...terminal.size },
      );
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      const lines = screen.lines().map((line) => line.trim());
      const failed = lines.findIndex((line) => line.startsWith('↳ run_command: error — exit code 3'));
      assert.ok(failed !== -1, screen.text());
      const rest = lines.slice(failed + 1);
      const end = rest.findIndex((line) => line.startsWith('⚙ run_command') || line.startsWith('↳'));
      const fold = rest.slice(0, end);
      assert.deepEqual(fold.slice(0, 3), ['line 1', 'line 2', 'line 3'], screen.text());
      assert.equal(fold[3], '… +32 lines', screen.text());
      assert.deepEqual(fold.slice(4, 9), ['line 36', 'line 37', 'line 38', 'line 39', 'line 40'], screen.text());
      assert.equal(fold[9], 'stderr:', screen.text());
      assert.ok(fold.includes('bye'), screen.text());
      assert.ok(
        fold.some((line) => /cannot touch/.test(line)),
        `the command's own complaint is there:\n${screen.text()}`,
      );
      assert.match(
        screen.flowedText(),
        /\[jp: sandbox\] This command ran in the sandbox \(workspace-write, no network\) and failed because it tried to write outside the writable directories\./,
        screen.text(),
      );
      const succeeded = lines.indexOf('↳ run_command: ok — exit code 0');
      assert.deepEqual(
        lines.slice(succeeded + 1, succeeded + 7),
        ['1', '2', '3', '4', '5', '… +7 lines'],
        screen.text(),
      );
      assert.equal(lines[succeeded + 7], 'Both ran.', 'a success stays short');
      assert.equal(screen.count(/^\s+line 20$/gm), 0, 'the middle is folded away');

      const printed = await runJp(sandbox, ['conversation', 'print', conversationIds(sandbox)[0]!]);
      assert.match(printed.stderr, /^ {4}line 20$/m, 'print shows every line');
    });
  }
});
