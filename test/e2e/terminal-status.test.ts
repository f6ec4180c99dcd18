/**
 * Something is always moving while jp waits, tested on the rendered screen at 100×30 and 60×20,
 * dark and light: the status line (what the run does, the elapsed time, the tokens so far, the key
 * to interrupt) shows through every wait of a turn (before the first token, a stall in the middle
 * of an answer, a tool run, a compaction, a retry) and is gone before anything else is drawn; a
 * running command's last lines (stderr too) stream in a bounded window above it, in a query and
 * in `attach`. None of it reaches a pipe or TERM=dumb.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gate } from '../support/fake-provider.ts';
import { fakeModel, jpBinary, runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';
import { shellQuote } from '../support/pty.ts';
import { Screen, type ScreenOptions } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

function jp(sandbox: Sandbox, args: string[], options: ScreenOptions = {}): Screen {
  return Screen.jp(sandbox, args, { cleanup, ...options });
}

/** A command that writes 40 lines and `bye` on stderr, waits for the test's `release`, and exits 3. */
const longCommand = {
  tool_call: {
    name: 'run_command',
    arguments: {
      command:
        'for i in $(seq 1 40); do echo "line $i"; done; echo bye >&2; while [ ! -f release ]; do sleep 0.05; done; exit 3',
    },
  },
};
const unattended = ['-c', 'conversation.tools.run_command.run="unattended"'];

describe('the status line through a stall in the middle of an answer', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: it shows below the unfinished line with the time and the tokens so far, and the line goes on whole once the answer comes back`, async () => {
      const sandbox = cleanup.sandbox();
      const stalled = gate();
      const model = await fakeModel(cleanup, [
        { parts: [{ text: 'The first part of the answer' }, { gate: stalled }, { text: ' and the rest of it.' }] },
      ]);
      const screen = jp(sandbox, ['query', ...model.args, ...terminal.themeArguments, 'answer'], {
        env: model.env,
        ...terminal.size,
      });
      // The last word waits for what follows it (it may go on): the row shows the words before it.
      await screen.waitFor('The first part of the');
      await screen.waitFor(/thinking \(\d+s • ↓ ~\d+ tokens • Ctrl\+C to interrupt\)/, { on: 'screen' });
      const rows = screen.visibleRows();
      const textRow = rows.findIndex((row) => row.startsWith('The first part of the'));
      assert.match(rows[textRow + 1] ?? '', /thinking/, `the status is on the row under the text:\n${rows.join('\n')}`);
      stalled.open();
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      assert.ok(screen.lines().includes('The first part of the answer and the rest of it.'), screen.text());
      assert.equal(screen.count('thinking'), 0, `the status line is gone:\n${screen.text()}`);
    });
  }
});

describe('a running command', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: its last lines and its stderr stream in a window of at most 5 rows above the status line, then fold`, async () => {
      const sandbox = cleanup.sandbox();
      const script = testProvider(sandbox, { steps: [{ parts: [longCommand] }, { parts: [{ text: 'It failed.' }] }] });
      const screen = jp(
        sandbox,
        ['query', ...script, ...unattended, ...terminal.themeArguments, 'run it'],
        terminal.size,
      );
      await screen.waitFor(/^\s+bye$/m, { on: 'screen' });
      await screen.waitFor(/running run_command \(\d+s • 41 lines • Ctrl\+C to interrupt\)/, { on: 'screen' });
      const window = screen.visibleRows().filter((row) => /^\s+(line \d+|bye)$/.test(row));
      assert.deepEqual(
        window.map((row) => row.trim()),
        ['line 37', 'line 38', 'line 39', 'line 40', 'bye'],
        screen.screenText(),
      );
      sandbox.write('release', '');
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      assert.equal(screen.count('running run_command'), 0, `the status line is gone:\n${screen.text()}`);
      assert.equal(
        screen.count(/^\s+line 39$/gm),
        1,
        `the window is gone, the fold holds the tail once:\n${screen.text()}`,
      );
      assert.equal(screen.count(/^\s+line 20$/gm), 0, `the window left nothing behind:\n${screen.text()}`);
      assert.equal(screen.count('It failed.'), 1);
    });
  }

  it('attach shows the same window and status line', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [longCommand] }, { parts: [{ text: 'It failed.' }] }] });
    const started = await runJp(sandbox, ['query', '--detach', ...script, ...unattended, 'run it']);
    assert.equal(started.code, 0, started.stderr);
    const screen = jp(sandbox, ['conversation', 'attach', started.stdout.trim()], { columns: 60, rows: 20 });
    // Lines written from now on reach the window: one more after attaching.
    await screen.waitFor(/running run_command \(\d+s/, { on: 'screen' });
    sandbox.write('release', '');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(screen.count('running run_command ('), 0, screen.text());
    assert.equal(screen.count('It failed.'), 1);
  });
});

describe('nothing of it reaches a pipe or TERM=dumb', () => {
  it('stderr to a file, stdout to a pipe: no status line, no window, no escape sequence; chrome as before', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [longCommand] }, { parts: [{ text: 'It failed.' }] }] });
    const command = `node ${shellQuote(jpBinary)} query ${[...script, ...unattended].map(shellQuote).join(' ')} run 2>err.txt | cat > out.txt; echo "EX""IT=$?"`;
    const screen = Screen.shell(sandbox, `(sleep 1; touch release) & ${command}`, { cleanup });
    await screen.waitFor(/EXIT=\d+/);
    const errors = sandbox.read('err.txt');
    assert.doesNotMatch(errors, /[\u001b\u009b\r]/, JSON.stringify(errors));
    assert.doesNotMatch(errors, /running run_command|thinking/);
    assert.match(errors, /↳ run_command: error/);
    assert.equal(sandbox.read('out.txt'), 'It failed.\n');
  });

  it('TERM=dumb: not one escape sequence while a command streams', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [longCommand] }, { parts: [{ text: 'It failed.' }] }] });
    const screen = jp(sandbox, ['query', ...script, ...unattended, 'run it'], { env: { TERM: 'dumb' } });
    await screen.waitFor('run_command [sandbox');
    sandbox.write('release', '');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.doesNotMatch(screen.raw(), /[\u001b\u009b]/, JSON.stringify(screen.raw()));
    assert.equal(screen.count('running run_command'), 0);
  });
});
