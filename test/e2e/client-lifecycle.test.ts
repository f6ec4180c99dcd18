/**
 * Who owns a run (DESIGN §8): a foreground `jp query` owns its run until it detaches; its death in
 * any other way stops the run (saved, resumable, no further tool starts). An attached client never
 * stops a run by going away, and a viewer cannot stop one. A background job of an interactive
 * shell never prompts and is never stopped by the terminal. While a tool runs at a terminal, stderr
 * shows it and its elapsed time (never stdout, never non-interactive or JSON).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  collect,
  conversationIds,
  eventually,
  jpBinary,
  processAlive,
  readEvents,
  runCapability,
  runJp,
  type Sandbox,
  startJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { shellQuote } from '../support/pty.ts';
import { keys, Screen } from '../support/screen.ts';

const cleanup = useCleanup();

const releaseWait = 'while [ ! -f release ]; do sleep 0.05; done';
const unattended = ['-c', 'conversation.tools.run_command.run="unattended"'];

/** A step holding in a tool until the test writes `release`, then a second tool that leaves a mark. */
function holdingScript(sandbox: Sandbox): string[] {
  return testProvider(sandbox, {
    steps: [
      {
        parts: [
          { text: 'Holding.\n\n' },
          { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
          { tool_call: { name: 'run_command', arguments: { command: 'touch started.txt' } } },
        ],
      },
      { parts: [{ text: 'Finished.' }] },
    ],
  });
}

function serverPid(sandbox: Sandbox, conversationId: string): number | undefined {
  try {
    return JSON.parse(readFileSync(path.join(sandbox.userDirectory(), 'processes', `${conversationId}.json`), 'utf8'))
      .pid;
  } catch {
    return undefined;
  }
}

describe('the foreground client owns its run', () => {
  it('SIGKILL to the foreground client stops the run as interrupted: saved, resumable, and the pending tool never starts', async () => {
    const sandbox = cleanup.sandbox();
    const screen = Screen.jp(sandbox, ['query', ...holdingScript(sandbox), ...unattended, 'hold'], { cleanup });
    await screen.waitFor('Holding.');
    const [conversationId] = conversationIds(sandbox);
    await eventually('the first tool started', () =>
      readEvents(sandbox, conversationId!).some((event) => event.type === 'tool_call_start'),
    );
    const server = await eventually('the server is registered', () => serverPid(sandbox, conversationId!));
    process.kill(screen.pid, 'SIGKILL');
    await eventually('the server stopped', () => !processAlive(server), 30_000);
    sandbox.write('release', '');
    const events = readEvents(sandbox, conversationId!);
    assert.equal(events.at(-1)!.type, 'turn_end');
    assert.equal(events.at(-1)!.status, 'interrupted');
    assert.equal(events.filter((event) => event.type === 'tool_call_start').length, 1, 'the second tool never started');
    assert.equal(sandbox.exists('started.txt'), false);
    const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout);
    assert.match(listed[0].status, /^interrupted/);
  });

  it('a hang-up (SIGHUP) detaches: the run goes on and finishes', async () => {
    const sandbox = cleanup.sandbox();
    const screen = Screen.jp(sandbox, ['query', ...holdingScript(sandbox), ...unattended, 'hold'], { cleanup });
    await screen.waitFor('Holding.');
    const [conversationId] = conversationIds(sandbox);
    process.kill(screen.pid, 'SIGHUP');
    await screen.exited;
    sandbox.write('release', '');
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId!]);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(sandbox.exists('started.txt'), true);
  });
});

describe('an attached client never stops the run', () => {
  it('SIGTERM to `attach --read-only` (as `timeout` sends) only ends the viewer; the run finishes', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = (
      await runJp(sandbox, ['query', '--detach', ...holdingScript(sandbox), ...unattended, 'hold'])
    ).stdout.trim();
    const viewerArguments = ['conversation', 'attach', '--read-only', conversationId];
    const viewer = startJp(sandbox, viewerArguments);
    const viewing = collect(viewer, viewerArguments, 30_000);
    await new Promise<void>((resolve) =>
      viewer.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('Holding.') && resolve()),
    );
    viewer.kill('SIGTERM');
    await viewing;
    sandbox.write('release', '');
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId]);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(sandbox.exists('started.txt'), true);
  });

  it('SIGTERM to a prompting attached client leaves the run going', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = (
      await runJp(sandbox, ['query', '--detach', ...holdingScript(sandbox), ...unattended, 'hold'])
    ).stdout.trim();
    const screen = Screen.jp(sandbox, ['conversation', 'attach', conversationId], { cleanup });
    await screen.waitFor('Holding.');
    process.kill(screen.pid, 'SIGTERM');
    await screen.exited;
    sandbox.write('release', '');
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId]);
    assert.equal(waited.code, 0, waited.stderr);
  });

  it('a viewer cannot stop the run: its signal, interrupt action and shutdown (`user`, as kill says, included) are ignored', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = (
      await runJp(sandbox, ['query', '--detach', ...holdingScript(sandbox), ...unattended, 'hold'])
    ).stdout.trim();
    const socketPath = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.sock`);
    const socket = net.createConnection(socketPath);
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    const capability = runCapability(sandbox, conversationId);
    socket.write(JSON.stringify({ type: 'hello', version: 2, capability, can_prompt: false, read_only: true }) + '\n');
    await eventually('the server said hello', () => received.includes('"hello"'));
    for (const message of [
      { type: 'signal', kind: 'interrupt' },
      { type: 'interrupt_action', action: 'abort' },
      { type: 'shutdown', reason: 'interrupt' },
      { type: 'shutdown', reason: 'terminate' },
      { type: 'shutdown', reason: 'user' },
      { type: 'shutdown' },
    ]) {
      socket.write(JSON.stringify(message) + '\n');
    }
    // The server handles a connection's messages in order: its refusal of a second hello means it
    // has handled every message above, while the run still holds in its first tool.
    socket.write(JSON.stringify({ type: 'hello', version: 2, capability, can_prompt: false, read_only: true }) + '\n');
    await eventually('the server refused the second hello', () => received.includes('"unexpected_hello"'));
    socket.destroy();
    sandbox.write('release', '');
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId]);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(sandbox.exists('started.txt'), true);
    assert.equal(readEvents(sandbox, conversationId).at(-1)!.status, 'completed');
  });

  it('`jp conversation kill` stops a run it did not start: saved, interrupted, resumable', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = (
      await runJp(sandbox, ['query', '--detach', ...holdingScript(sandbox), ...unattended, 'hold'])
    ).stdout.trim();
    await eventually('the first tool started', () =>
      readEvents(sandbox, conversationId).some((event) => event.type === 'tool_call_start'),
    );
    const server = serverPid(sandbox, conversationId);
    assert.ok(server !== undefined && processAlive(server));
    const killed = await runJp(sandbox, ['conversation', 'kill', conversationId]);
    assert.equal(killed.code, 0, killed.stderr);
    assert.match(killed.stderr, new RegExp(`Stopped ${conversationId}`));
    assert.equal(processAlive(server), false);
    const last = readEvents(sandbox, conversationId).at(-1)!;
    assert.deepEqual([last.type, last.status], ['turn_end', 'interrupted']);
    assert.equal(sandbox.exists('started.txt'), false, 'the second tool never started');
  });
});

describe('a background job of an interactive shell', () => {
  it('never prompts and is never stopped by the terminal: it finishes and prints its answer', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { text: 'Background answer.\n\n' },
            { tool_call: { name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a' } } },
          ],
        },
        { parts: [{ text: 'After the tool.' }] },
      ],
    });
    const screen = Screen.program(sandbox, 'bash', ['--norc', '--noprofile', '-i'], {
      env: { PS1: 'PROMPT$ ' },
      cleanup,
    });
    await screen.waitFor('PROMPT$');
    screen.press(`node ${shellQuote(jpBinary)} query ${script.map(shellQuote).join(' ')} hi > out.txt &` + keys.enter);
    await screen.waitFor(/\[1\] \d+/);
    // Quotes split the markers, so the echo of the typed line never matches them.
    screen.press('wait %1; echo "EX""IT=$?"; jobs -l; echo "JOBS""-DONE"' + keys.enter);
    await screen.waitFor('JOBS-DONE');
    assert.match(screen.text(), /EXIT=3/, 'the permission was denied: nobody is at a background job');
    assert.doesNotMatch(screen.text(), /Stopped/);
    assert.doesNotMatch(screen.text(), /\[y\/Y\/(a\/)?n\/N\/p\/e\]/);
    assert.equal(sandbox.read('out.txt'), 'Background answer.\n\nAfter the tool.\n');
    assert.equal(sandbox.exists('a.txt'), false);
  });
});

describe('a running tool at a terminal', () => {
  it('shows the tool and its elapsed time on stderr, never on stdout', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: releaseWait } } }] },
        { parts: [{ text: 'Tool done.' }] },
      ],
    });
    const screen = Screen.shell(
      sandbox,
      `node ${shellQuote(jpBinary)} query ${[...script, ...unattended].map(shellQuote).join(' ')} go | cat > out.txt; echo EXIT=$?`,
      { cleanup },
    );
    await screen.waitFor(/running run_command \([1-9]\d*s • Ctrl\+C to interrupt\)/, { on: 'screen' });
    sandbox.write('release', '');
    await screen.waitFor('EXIT=0');
    assert.equal(sandbox.read('out.txt'), 'Tool done.\n');
    assert.doesNotMatch(screen.screenText(), /running run_command/, 'the status line is gone once the tool is done');
  });

  it('says nothing of it when non-interactive or in JSON', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'sleep 1.2' } } }] },
        { parts: [{ text: 'Tool done.' }] },
      ],
    });
    for (const flags of [['--non-interactive'], ['--json']]) {
      const screen = Screen.jp(sandbox, ['query', '--new', ...script, ...unattended, ...flags, 'go'], { cleanup });
      assert.equal((await screen.exited).exitCode, 0, screen.text());
      assert.doesNotMatch(screen.raw(), /running run_command|thinking/, flags.join(' '));
    }
  });

  it('says nothing of it with -q, or with CI=true, at a terminal (the same run without them shows it)', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'sleep 0.5' } } }] },
        { parts: [{ text: 'Tool done.' }] },
      ],
    });
    const commandLine = (prefix: string, flags: string[]): string =>
      `${prefix}node ${shellQuote(jpBinary)} query --new ${[...script, ...unattended, ...flags].map(shellQuote).join(' ')} go`;
    // The control: the line is drawn as the tool starts, so this run shows it; the others must not.
    const cases: [string, string, boolean][] = [
      ['no flag', commandLine('', []), true],
      ['-q', commandLine('', ['-q']), false],
      ['CI=true', commandLine('CI=true ', []), false],
    ];
    for (const [label, line, shown] of cases) {
      // A shell sets CI: the screen harness takes CI out of the environment it passes on.
      const screen = Screen.shell(sandbox, line, { cleanup });
      assert.equal((await screen.exited).exitCode, 0, `${label}: ${screen.text()}`);
      assert.match(screen.text(), /Tool done\./, `${label}: the answer is shown`);
      if (shown)
        assert.match(
          screen.raw(),
          /running run_command \(\d+s • Ctrl\+C to interrupt\)/,
          `${label}: the status line is drawn`,
        );
      else assert.doesNotMatch(screen.raw(), /running run_command|thinking/, `${label}: no status line`);
    }
  });
});
