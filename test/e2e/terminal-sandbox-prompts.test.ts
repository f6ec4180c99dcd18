/**
 * Honest sandbox prompts, on the rendered screen at 100×30 and 60×20, dark and light: when the
 * sandbox cannot start (no bwrap on PATH), the first and only prompt of a command says so, with the
 * reason and the fix, and asks whether to run it unconfined (Enter = no); a command the model asks
 * to run outside the sandbox is one prompt too.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { testProvider, useCleanup } from '../support/jp.ts';
import { keys, Screen } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

describe('a sandbox that cannot start', () => {
  terminals.forEach((terminal, index) => {
    const escalating = index % 2 === 1;
    it(`${terminal.name}: ${escalating ? 'a command asking to leave the sandbox' : 'no bwrap on PATH'}: one prompt, ${escalating ? 'y runs it' : 'with the reason and the fix; Enter does not run it'}`, async () => {
      const sandbox = cleanup.sandbox();
      const command = escalating
        ? {
            command: 'echo ran > ran.txt',
            escalate: true,
            justification: 'it must write where the sandbox does not let it',
          }
        : { command: 'echo ran > ran.txt' };
      const script = testProvider(sandbox, {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: command } }] },
          { parts: [{ text: 'Over.' }] },
        ],
      });
      const screen = Screen.jp(sandbox, ['query', ...script, ...terminal.themeArguments, 'go'], {
        cleanup,
        ...terminal.size,
        ...(escalating ? {} : { env: { PATH: `${path.join(sandbox.root, 'empty-bin')}:/usr/local/bin` } }),
      });
      await screen.waitFor(/outside the sandbox\? \[y\/n\/p\]/, { on: 'screen' });
      const shown = screen.flowedText();
      if (escalating) assert.match(shown, /Why: it must write where the sandbox does not let it/, screen.text());
      else {
        // The cause is what the system has (no bwrap at all, or one that cannot start without PATH).
        assert.match(shown, /Why: the sandbox cannot start on this machine: bubblewrap .+\./, screen.text());
        assert.match(shown, /Fix: \S/, screen.text());
        assert.match(shown, /Enter: n do not run it/, screen.text());
      }
      screen.press(escalating ? 'y' : keys.enter);
      const exit = await screen.exited;
      assert.equal(screen.count('Run run_command?'), 0, `no second prompt before it:\n${screen.text()}`);
      assert.equal(screen.count(/outside the sandbox\? /g), 1, `one prompt:\n${screen.text()}`);
      assert.equal(sandbox.exists('ran.txt'), escalating, screen.text());
      assert.equal(exit.exitCode, 0, screen.text());
    });
  });
});
