/**
 * The screen harness itself: what it reads is what a terminal shows (wrapped rows joined, rewritten
 * rows replaced, styles seen), keys reach the program, and a resize reaches it as SIGWINCH.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useCleanup } from './jp.ts';
import { keys, Screen } from './screen.ts';

const cleanup = useCleanup();

describe('screen harness', () => {
  it('keeps the whole scrollback, joins wrapped rows, and shows rewritten rows as drawn last', async () => {
    const sandbox = cleanup.sandbox();
    const long = 'x'.repeat(45) + ' ' + 'y'.repeat(30);
    const screen = Screen.shell(
      sandbox,
      `i=1; while [ $i -le 100 ]; do echo line$i; i=$((i+1)); done; printf '%s\\n' '${long}'; printf 'draft\\rfinal\\n'`,
      {
        columns: 40,
        rows: 10,
        cleanup,
      },
    );
    await screen.exited;
    const lines = screen.lines();
    assert.deepEqual(
      lines.slice(0, 100),
      Array.from({ length: 100 }, (_, index) => `line${index + 1}`),
    );
    assert.equal(lines[100], long, 'a line wider than the terminal is one line');
    assert.equal(lines[101], 'final');
    assert.equal(screen.count('draft'), 0);
    assert.equal(screen.visibleRows().length, 10);
    assert.ok(screen.allRows().includes('x'.repeat(40)), 'the wrapped row is drawn at 40 columns');
  });

  it('sees styles: bold and colour are styled text, plain text is not', async () => {
    const sandbox = cleanup.sandbox();
    const screen = Screen.shell(
      sandbox,
      `printf 'plain \\033[1mbold\\033[0m \\033[31mred\\033[39m \\033[2mdim\\033[22m end\\n'`,
      { cleanup },
    );
    await screen.exited;
    assert.equal(screen.styledText(), 'boldreddim');
    assert.equal(screen.lines()[0], 'plain bold red dim end');
  });

  it('types keys into the program, waits for what it draws, and resizes it', async () => {
    const sandbox = cleanup.sandbox();
    const script = `trap 'echo "size: $(stty size)"' WINCH; echo ready; read answer; echo "got: $answer"; while [ ! -f done ]; do sleep 0.05; done`;
    const screen = Screen.program(sandbox, 'bash', ['--norc', '--noprofile', '-c', script], {
      columns: 80,
      rows: 24,
      cleanup,
    });
    await screen.waitFor('ready');
    screen.press('hello' + keys.enter);
    await screen.waitFor('got: hello');
    screen.resize(60, 20);
    await screen.waitFor('size: 20 60');
    assert.equal(screen.columns, 60);
    sandbox.write('done', '');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0);
    assert.ok(screen.bytesWritten() >= 'ready\r\n'.length);
  });
});
