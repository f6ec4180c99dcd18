/**
 * Every prompt is drawn before it takes a key, every time (DESIGN §13), tested on the rendered
 * screen: each prompt of a batch and its keys, a prompt in the next model step, the editor's
 * hand-off, the Ctrl+C menu and its choices, the reply box, a menu over an open prompt, Ctrl+Z in a
 * prompt, and prompts of a resumed turn (`--continue`) and of an attached client.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gate } from '../support/fake-provider.ts';
import {
  conversationIds,
  eventually,
  fakeModel,
  jpBinary,
  readEvents,
  runJp,
  type Sandbox,
  testProvider,
  useCleanup,
  createFileCall,
} from '../support/jp.ts';
import { shellQuote } from '../support/pty.ts';
import { keys, Screen, jpScreens } from '../support/screen.ts';

const cleanup = useCleanup();

const jp = jpScreens(cleanup);

/** The prompt for creating `path`, as the screen shows it: the call's one header, drawn by the prompt. */
const promptFor = (path: string): string => `⚙ fs_create_file ${path} (`;

/** An editor that says it opened (with the file's content), waits for Enter, then writes $EDITED. */
function fakeEditor(sandbox: Sandbox): string {
  const file = sandbox.write(
    'editor.sh',
    `echo "EDITOR OPEN: $(tr -d '\\n ' < "$1")"\nread answer\nprintf '%s' "$EDITED" > "$1"\n`,
  );
  return `sh ${file}`;
}

describe('prompts of a batch and of the next step', () => {
  it('each prompt of a batch is drawn before it takes a key, with the content it creates: y runs, n skips, Y allows the rest of the turn', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { text: 'Four files.\n\n' },
            createFileCall('a.txt'),
            createFileCall('b.txt'),
            createFileCall('c.txt'),
            createFileCall('d.txt'),
          ],
        },
        { parts: [createFileCall('e.txt')] },
        { parts: [{ text: 'All done.' }] },
      ],
    });
    const screen = jp(sandbox, ['query', ...script, 'make files']);
    await screen.waitFor(promptFor('a.txt'), { on: 'screen' });
    await screen.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen' });
    await screen.waitFor('+ a.txt', { on: 'screen' });
    screen.press('y');
    await screen.waitFor(promptFor('b.txt'), { on: 'screen' });
    screen.press('n');
    await screen.waitFor(promptFor('c.txt'), { on: 'screen' });
    screen.press('Y');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.deepEqual(
      ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt'].map((file) => sandbox.exists(file)),
      [true, false, true, true, true],
    );
    assert.equal(screen.count(promptFor('d.txt')), 0, 'Y allowed the rest of the turn');
    assert.equal(screen.count(promptFor('e.txt')), 0);
    assert.equal(screen.count('All done.'), 1);
    assert.match(screen.text(), /↳ fs_create_file: denied/);
  });

  it('a prompt in the next model step is drawn; N skips the tool for the rest of the turn', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [createFileCall('a.txt')] },
        { parts: [{ text: 'Next step.\n\n' }, createFileCall('b.txt'), createFileCall('c.txt')] },
        { parts: [{ text: 'Finished.' }] },
      ],
    });
    const screen = jp(sandbox, ['query', ...script, 'go']);
    await screen.waitFor(promptFor('a.txt'), { on: 'screen' });
    screen.press('y');
    await screen.waitFor(promptFor('b.txt'), { on: 'screen' });
    screen.press('N');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.deepEqual(
      ['a.txt', 'b.txt', 'c.txt'].map((file) => sandbox.exists(file)),
      [true, false, false],
    );
    assert.equal(screen.count(promptFor('c.txt')), 0);
    assert.equal(screen.count('Finished.'), 1);
  });
});

describe('the editor', () => {
  it('e opens the editor at once, on the terminal; the edited arguments are what runs', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [createFileCall('original.txt', 'original')] }, { parts: [{ text: 'Edited and done.' }] }],
    });
    const screen = jp(sandbox, ['query', ...script, 'go'], {
      env: { EDITOR: fakeEditor(sandbox), EDITED: '{"path":"edited.txt","content":"edited"}' },
    });
    await screen.waitFor(promptFor('original.txt'), { on: 'screen' });
    screen.press('e');
    await screen.waitFor('EDITOR OPEN: {"path":"original.txt","content":"original"}', { on: 'screen' });
    screen.press(keys.enter);
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.read('edited.txt'), 'edited');
    assert.equal(sandbox.exists('original.txt'), false);
  });

  it('run = "edit" opens the editor without asking first', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [createFileCall('original.txt', 'original')] }, { parts: [{ text: 'Done.' }] }],
    });
    const screen = jp(sandbox, ['query', ...script, '-c', 'conversation.tools.fs_create_file.run="edit"', 'go'], {
      env: { EDITOR: fakeEditor(sandbox), EDITED: '{"path":"edited.txt","content":"edited"}' },
    });
    await screen.waitFor('EDITOR OPEN', { on: 'screen' });
    assert.equal(screen.count('[y/Y/a/n/N/p/e]'), 0);
    screen.press(keys.enter);
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.read('edited.txt'), 'edited');
  });
});

describe('the Ctrl+C menu', () => {
  it('holds streamed text while the menu is open and shows it once after "continue", with no stray line', async () => {
    const sandbox = cleanup.sandbox();
    // A paragraph, another one once the menu is open, and the last after "continue".
    const menuOpen = gate();
    const continued = gate();
    const model = await fakeModel(cleanup, [
      {
        parts: [
          { text: 'Line one.\n\n' },
          { gate: menuOpen },
          { text: 'Line two.\n\n' },
          { gate: continued },
          { text: 'Line three.' },
        ],
      },
    ]);
    const screen = jp(sandbox, ['query', ...model.args, 'stream'], { env: model.env });
    await screen.waitFor('Line one.');
    screen.press(keys.ctrlC);
    await screen.waitFor('continue: keep going', { on: 'screen' });
    menuOpen.open();
    const [conversationId] = conversationIds(sandbox);
    // The run went on streaming meanwhile: its text is on disk, and not on the screen.
    await eventually('the second line persisted', () =>
      readEvents(sandbox, conversationId!).some((event) => event.message?.includes('Line two.')),
    );
    assert.equal(screen.count('Line two.'), 0, 'nothing was drawn under the open menu');
    screen.press(keys.down + keys.down);
    await screen.waitFor('❯ continue', { on: 'screen' });
    screen.press(keys.enter);
    continued.open();
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    const lines = screen.lines();
    assert.deepEqual(
      lines.filter((line) => /Line (one|two|three)\./.test(line)),
      ['Line one.', 'Line two.', 'Line three.'],
      'each line once, in order',
    );
    const menu = lines.findIndex((line) => line.includes('Interrupted. What now?'));
    assert.ok(menu > lines.indexOf('Line one.') && menu < lines.indexOf('Line two.'), screen.text());
    assert.doesNotMatch(screen.text(), /\^C/);
  });

  /** Streams a paragraph, then another one while the test holds the menu open, then waits. */
  const heldScript = {
    steps: [
      {
        parts: [
          { text: 'Line one.\n\n' },
          { delay_ms: 400 },
          { text: 'Line two.\n\n' },
          { delay_ms: 60_000 },
          { text: 'Line three.' },
        ],
      },
    ],
  };

  /** The menu once closed by a stop, chosen or by a second Ctrl+C: one line, as any chosen answer. */
  const stoppedMenu = '✔ Interrupted. What now? stop: save what was done and end the turn (resumable)';

  for (const [choice, key] of [
    ['"stop"', keys.enter],
    ['a second Ctrl+C', keys.ctrlC],
  ] as const) {
    it(`${choice} ends the turn at once as interrupted (saved, resumable), exit 130; nothing was drawn under the menu, and the menu is closed to its one-line answer`, async () => {
      const sandbox = cleanup.sandbox();
      const screen = jp(sandbox, ['query', ...testProvider(sandbox, heldScript), 'stream']);
      await screen.waitFor('Line one.');
      screen.press(keys.ctrlC);
      await screen.waitFor('Interrupted. What now?', { on: 'screen' });
      await screen.waitFor('❯ stop: save what was done and end the turn (resumable)', { on: 'screen' });
      await screen.waitFor('detach: let it run in the background', { on: 'screen' });
      const [conversationId] = conversationIds(sandbox);
      await eventually('the second line persisted', () =>
        readEvents(sandbox, conversationId!).some((event) => event.message?.includes('Line two.')),
      );
      assert.equal(screen.count('Line two.'), 0, 'nothing was drawn under the open menu');
      screen.press(key);
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 130, screen.text());
      const events = readEvents(sandbox, conversationId!);
      assert.deepEqual([events.at(-1)!.type, events.at(-1)!.status], ['turn_end', 'interrupted']);
      const lines = screen.lines();
      assert.deepEqual(
        lines.filter((line) => /^Line (one|two|three)\.$/.test(line)),
        ['Line one.', 'Line two.'],
        'each streamed line once, and nothing after the stop',
      );
      const menu = lines.indexOf(stoppedMenu);
      assert.ok(
        lines.indexOf('Line one.') < menu && menu < lines.indexOf('Line two.'),
        `the menu closed to its answer, and the held line is drawn after it:\n${screen.text()}`,
      );
      assert.equal(screen.count('Interrupted. What now?'), 1, `the menu is drawn once:\n${screen.text()}`);
      assert.equal(screen.count('↑↓ navigate'), 0, `no open menu is left on the screen:\n${screen.text()}`);
      assert.equal(
        screen.count('detach: let it run in the background'),
        0,
        `no choice of the menu is left on the screen:\n${screen.text()}`,
      );
      assert.match(screen.text(), new RegExp(`Resume with: jp query --continue --id=${conversationId}`));
      const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout);
      assert.match(listed[0].status, /^interrupted/);
    });
  }

  it('reply: the reply box is drawn, and the turn goes on with the reply', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [{ text: 'Working.\n\n' }, { delay_ms: 60_000 }, { text: 'never' }] }],
    });
    const screen = jp(sandbox, ['query', ...script, 'work']);
    await screen.waitFor('Working.');
    screen.press(keys.ctrlC);
    await screen.waitFor('reply: stop and tell the assistant something', { on: 'screen' });
    screen.press(keys.down + keys.down + keys.down);
    await screen.waitFor('❯ reply', { on: 'screen' });
    screen.press(keys.enter);
    await screen.waitFor('Your reply:', { on: 'screen' });
    screen.press('use tabs' + keys.enter);
    const [conversationId] = conversationIds(sandbox);
    await eventually('the reply is in the conversation', () =>
      readEvents(sandbox, conversationId!).some((event) => JSON.stringify(event).includes('use tabs')),
    );
    await screen.waitFor('Working.', { times: 2 });
    screen.press(keys.ctrlC);
    await screen.waitFor('Interrupted. What now?', { times: 2 });
    screen.press(keys.ctrlC);
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 130, screen.text());
  });

  it('abort ends the turn and drops it', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'Working.\n\n' }, { delay_ms: 60_000 }] }] });
    const screen = jp(sandbox, ['query', ...script, 'work']);
    await screen.waitFor('Working.');
    screen.press(keys.ctrlC);
    await screen.waitFor('abort: end the turn and drop it', { on: 'screen' });
    screen.press(keys.down);
    await screen.waitFor('❯ abort', { on: 'screen' });
    screen.press(keys.enter);
    await screen.exited;
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    assert.equal(events.at(-1)!.status, 'discarded', screen.text());
  });

  it('detach leaves the run going; the shell gets its terminal back', async () => {
    const sandbox = cleanup.sandbox();
    // The rest of the answer comes once jp has detached.
    const detached = gate();
    const model = await fakeModel(cleanup, [
      { parts: [{ text: 'Working.\n\n' }, { gate: detached }, { text: 'Finished in the background.' }] },
    ]);
    const screen = jp(sandbox, ['query', ...model.args, 'work'], { env: model.env });
    await screen.waitFor('Working.');
    screen.press(keys.ctrlC);
    await screen.waitFor('detach: let it run in the background', { on: 'screen' });
    screen.press(keys.up);
    await screen.waitFor('❯ detach', { on: 'screen' });
    screen.press(keys.enter);
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.match(screen.text(), /Detached: jp-c\d+/);
    detached.open();
    const [conversationId] = conversationIds(sandbox);
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId!]);
    assert.equal(waited.code, 0, waited.stderr);
    assert.match(JSON.stringify(readEvents(sandbox, conversationId!)), /Finished in the background\./);
  });

  it('Ctrl+C over an open prompt draws the menu; "continue" draws the prompt again, which then takes the key', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [createFileCall('a.txt')] }, { parts: [{ text: 'Created.' }] }],
    });
    const screen = jp(sandbox, ['query', ...script, 'go']);
    await screen.waitFor(promptFor('a.txt'), { on: 'screen' });
    screen.press(keys.ctrlC);
    await screen.waitFor('continue: keep going', { on: 'screen' });
    screen.press(keys.down + keys.down);
    await screen.waitFor('❯ continue', { on: 'screen' });
    screen.press(keys.enter);
    await screen.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen', times: 1 });
    await screen.waitFor(promptFor('a.txt'), { times: 2 });
    screen.press('y');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.read('a.txt'), 'a.txt');
  });
});

describe('Ctrl+Z in a prompt', () => {
  it('detaches: the run goes on without a client and its inquiry follows the detached policy (defer)', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [{ parts: [createFileCall('a.txt')] }, { parts: [{ text: 'Created.' }] }],
    });
    const screen = jp(sandbox, ['query', ...script, 'go']);
    await screen.waitFor(promptFor('a.txt'), { on: 'screen' });
    screen.press(keys.ctrlZ);
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.match(screen.text(), /Detached: jp-c\d+/);
    const [conversationId] = conversationIds(sandbox);
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId!]);
    assert.equal(waited.code, 4, waited.stderr);
    assert.equal(sandbox.exists('a.txt'), false);
  });
});

describe('Ctrl+Z while an answer streams', () => {
  it('detaches in the middle of a line: `Detached: <cid>` on a row of its own, the shell is back, and the run streams on to its end', async () => {
    const sandbox = cleanup.sandbox();
    // The pause lasts until jp has detached and the shell has its exit code.
    const detached = gate();
    const model = await fakeModel(cleanup, [
      { parts: [{ text: 'Streaming before the pause, ' }, { gate: detached }, { text: 'and after the pause.' }] },
    ]);
    // An interactive shell with job control, as a person has: Ctrl+Z goes to jp's process group.
    const screen = Screen.program(sandbox, 'bash', ['--norc', '--noprofile', '-i'], {
      env: { PS1: 'PROMPT$ ', ...model.env },
      cleanup,
    });
    await screen.waitFor('PROMPT$');
    screen.press(
      `node ${shellQuote(jpBinary)} query ${model.args.map(shellQuote).join(' ')} pause; echo "EX""IT=$?"` + keys.enter,
    );
    await screen.waitFor('Streaming before the pause,');
    screen.press(keys.ctrlZ);
    await screen.waitFor(/EXIT=\d+/);
    detached.open();
    const [conversationId] = conversationIds(sandbox);
    const lines = screen.lines();
    assert.ok(lines.includes('EXIT=0'), screen.text());
    assert.ok(
      lines.some((line) => line.startsWith(`Detached: ${conversationId}`)),
      screen.text(),
    );
    assert.doesNotMatch(screen.text(), /Stopped/, 'jp detached instead of being suspended');
    await screen.waitFor(/^PROMPT\$ $/m, { on: 'screen' });
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId!]);
    assert.equal(waited.code, 0, waited.stderr);
    const answer = readEvents(sandbox, conversationId!)
      .filter((event) => typeof event.message === 'string')
      .map((event) => event.message)
      .join('');
    assert.equal(answer, 'Streaming before the pause, and after the pause.');
    assert.equal(screen.count('and after the pause.'), 0, 'nothing of the run is drawn after the detach');
  });
});

describe('prompts of a resumed turn and of an attached client', () => {
  it('--continue shows what it resumes (done ✓, pending ⏸, with arguments), draws the prompt with no spinner over it, and names the tool of each result', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('input.txt', 'input contents');
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_read_file', arguments: { path: 'input.txt' } } }, createFileCall('b.txt')] },
        { parts: [{ text: 'Both done.' }] },
      ],
    });
    const deferred = await runJp(sandbox, [
      'query',
      ...script,
      '-c',
      'conversation.tools.defaults.detached="defer"',
      'both',
    ]);
    assert.equal(deferred.code, 4, deferred.stderr);
    const [conversationId] = conversationIds(sandbox);
    const screen = jp(sandbox, ['query', '--continue', `--id=${conversationId}`, ...script]);
    await screen.waitFor(promptFor('b.txt'), { on: 'screen' });
    const text = screen.text();
    assert.match(text, new RegExp(`Resuming incomplete turn for ${conversationId}`));
    assert.match(text, /⏳ Incomplete turn \(pending inquiry\)/);
    assert.match(text, /✓ fs_read_file \{"path":"input.txt"\} — completed/);
    assert.match(text, /⏸ fs_create_file \{"path":"b.txt","content":"b.txt"\} — run it\?/);
    const promptRow = screen.visibleRows().find((row) => row.includes('Run fs_create_file?'))!;
    assert.ok(promptRow.startsWith('Run fs_create_file?'), `the prompt starts its own row: ${promptRow}`);
    assert.doesNotMatch(promptRow, /thinking/);
    screen.press('y');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.match(screen.text(), /↳ fs_create_file: ok/);
    assert.doesNotMatch(screen.text(), /↳ tool:/);
    assert.equal(screen.count('Both done.'), 1);
  });

  it('an attached client draws the prompt with the arguments; y runs it', async () => {
    const sandbox = cleanup.sandbox();
    // The run waits (in a tool that runs unattended) until the test has attached.
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { text: 'Waiting for you.\n\n' },
            {
              tool_call: { name: 'run_command', arguments: { command: 'while [ ! -f release ]; do sleep 0.05; done' } },
            },
          ],
        },
        { parts: [createFileCall('a.txt')] },
        { parts: [{ text: 'Made it.' }] },
      ],
    });
    const conversationId = (
      await runJp(sandbox, [
        'query',
        '--detach',
        ...script,
        '-c',
        'conversation.tools.run_command.run="unattended"',
        'go',
      ])
    ).stdout.trim();
    const screen = jp(sandbox, ['conversation', 'attach', conversationId]);
    await screen.waitFor('Waiting for you.');
    sandbox.write('release', '');
    await screen.waitFor(promptFor('a.txt'), { on: 'screen' });
    screen.press('y');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.read('a.txt'), 'a.txt');
    assert.equal(screen.count('Made it.'), 1);
  });
});

describe('TERM=dumb', () => {
  it('a permission prompt and ask_user questions are plain text (not one ESC byte), drawn before they take a key, and answered with keys', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } } }] },
        {
          parts: [
            { tool_call: { name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } } },
          ],
        },
        { parts: [{ tool_call: { name: 'ask_user', arguments: { question: 'Which name?' } } }] },
        { parts: [{ text: 'All answered.' }] },
      ],
    });
    const screen = jp(sandbox, ['query', ...script, 'ask me'], { env: { TERM: 'dumb' } });
    await screen.waitFor('Run run_command? [y/Y/a/n/N/p/e]');
    screen.press('x');
    await screen.waitFor('"x" does nothing here');
    screen.press('y');
    await screen.waitFor('ask_user asks: Which colour?');
    screen.press(keys.down);
    screen.press(keys.enter);
    await screen.waitFor('ask_user asks: Which name?');
    screen.press('tea');
    screen.press('l');
    screen.press(keys.enter);
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.doesNotMatch(screen.raw(), /[\u001b\u009b]/, JSON.stringify(screen.raw()));
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
    assert.match(screen.text(), /Run run_command\? y \(run\)/);
    assert.match(screen.text(), /ask_user asks: Which colour\? blue/);
    assert.match(screen.text(), /ask_user asks: Which name\? teal/);
    assert.equal(screen.count('All answered.'), 1);
  });
});
