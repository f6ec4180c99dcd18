/**
 * Live attach: seeing a detached run live, answering its prompt from the attached terminal,
 * replay + live equal to the persisted answer whenever one attaches, one prompting client at a
 * time, and clear errors. Ctrl+Z and the Ctrl+C menu are tested on the screen, in
 * terminal-prompts.test.ts.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  collect,
  conversationIds,
  fakeModel,
  jpBinary,
  processesMatching,
  readEvents,
  runJp,
  type Sandbox,
  startJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { runInTerminal, shellQuote } from '../support/pty.ts';
import { gate, type Gate, type ScriptedPart, type ScriptedStep } from '../support/fake-provider.ts';
import { Screen } from '../support/screen.ts';

const cleanup = useCleanup();
const sandboxed = cleanup.sandbox;

/** A command that waits until the test creates `release` in the workspace. */
const releaseWait = 'while [ ! -f release ]; do sleep 0.05; done';
const unattendedCommands = ['-c', 'conversation.tools.run_command.run="unattended"'];

function answerOf(sandbox: Sandbox, conversationId: string): string {
  return readEvents(sandbox, conversationId)
    .filter((event) => event.type === 'chat_response' && typeof event.message === 'string')
    .map((event) => event.message)
    .join('');
}

describe('attach in a terminal', () => {
  it('detach a run, attach, see the live stream; the permission prompt appears in the attached terminal; y completes', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, {
      steps: [
        // The run waits (in an unattended tool) until the test has seen the attached stream.
        {
          parts: [
            { text: 'Streaming part one. ' },
            { delay_ms: 300 },
            { text: 'Streaming part two.\n\n' },
            { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
          ],
        },
        {
          parts: [
            { text: 'Now I need to write a file.\n\n' },
            { tool_call: { name: 'fs_create_file', arguments: { path: 'approved.txt', content: 'approved' } } },
          ],
        },
        { parts: [{ text: 'The file was written after you approved it.' }] },
      ],
    });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, ...unattendedCommands, 'work']);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const terminal = runInTerminal(
      sandbox,
      `node ${shellQuote(jpBinary)} conversation attach ${conversationId}; echo EXIT=$?`,
    );
    await terminal.waitFor('Streaming part one.');
    await terminal.waitFor('Streaming part two.');
    sandbox.write('release', '');
    await terminal.waitFor('Now I need to write a file.');
    await terminal.waitFor('Run fs_create_file?');
    assert.equal(sandbox.exists('approved.txt'), false);
    terminal.write('y');
    await terminal.waitFor(/EXIT=\d+/);
    assert.match(terminal.text(), /The file was written after you approved it\./);
    assert.match(terminal.text(), /EXIT=0/);
    assert.equal(sandbox.read('approved.txt'), 'approved');
    const responses = readEvents(sandbox, conversationId).filter((event) => event.type === 'inquiry_response');
    assert.deepEqual(
      responses.map((event) => [event.by, event.answer]),
      [['user', 'run']],
    );
  });

  it('one prompting client at a time: a second is refused and told about --read-only, which works', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ text: 'Long run.' }, { tool_call: { name: 'run_command', arguments: { command: releaseWait } } }] },
        { parts: [{ text: 'Finished.' }] },
      ],
    });
    const conversationId = (
      await runJp(sandbox, ['query', '--detach', ...script, ...unattendedCommands, 'long'])
    ).stdout.trim();
    const first = runInTerminal(
      sandbox,
      `node ${shellQuote(jpBinary)} conversation attach ${conversationId}; echo EXIT=$?`,
    );
    await first.waitFor('Long run.');
    const second = runInTerminal(
      sandbox,
      `node ${shellQuote(jpBinary)} conversation attach ${conversationId}; echo EXIT=$?`,
    );
    await second.waitFor(/EXIT=\d+/);
    assert.match(second.text(), /another client is already attached/);
    assert.match(second.text(), /--read-only/);
    assert.match(second.text(), /EXIT=1/);
    const viewerArguments = ['conversation', 'attach', '--read-only', conversationId];
    const viewerProcess = startJp(sandbox, viewerArguments);
    const viewing = collect(viewerProcess, viewerArguments, 30_000);
    await new Promise<void>((resolve) =>
      viewerProcess.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('Long run.') && resolve()),
    );
    sandbox.write('release', '');
    const viewer = await viewing;
    assert.equal(viewer.code, 0, viewer.stderr);
    assert.equal(viewer.stdout, 'Long run.\nFinished.\n');
    await first.waitFor(/EXIT=0/);
  });
});

describe('a read-only attach at a terminal', () => {
  it('reads the keys itself while the run streams: typed text appears nowhere on the screen, and the run finishes as shown', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { text: 'Long run.\n\n' },
            { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
          ],
        },
        { parts: [{ text: 'Finished.' }] },
      ],
    });
    const conversationId = (
      await runJp(sandbox, ['query', '--detach', ...script, ...unattendedCommands, 'long'])
    ).stdout.trim();
    const screen = Screen.jp(sandbox, ['conversation', 'attach', '--read-only', conversationId], { cleanup });
    await screen.waitFor('Long run.');
    screen.press('typedwhilewatching');
    screen.press('\r');
    screen.press('moretyped');
    sandbox.write('release', '');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.match(screen.text(), /Finished\./);
    assert.doesNotMatch(screen.text(), /typed/, `typed text was echoed:\n${screen.text()}`);
  });

  it('Ctrl+C, read as a key, leaves: the attach ends, the run goes on', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { text: 'Long run.\n\n' },
            { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
          ],
        },
        { parts: [{ text: 'Finished.' }] },
      ],
    });
    const conversationId = (
      await runJp(sandbox, ['query', '--detach', ...script, ...unattendedCommands, 'long'])
    ).stdout.trim();
    const screen = Screen.jp(sandbox, ['conversation', 'attach', '--read-only', conversationId], { cleanup });
    await screen.waitFor('Long run.');
    screen.press('\u0003');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.doesNotMatch(screen.text(), /Finished\./);
    sandbox.write('release', '');
    assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationId])).code, 0);
    assert.match(answerOf(sandbox, conversationId), /Finished\./);
  });
});

/**
 * A long answer streamed word by word, held at `attaches` gates at distinct random words and at one
 * before its end: a test attaches at each gate while the stream waits there, so every attach begins
 * mid-run, at a random point of the answer, with no clock deciding it.
 */
function gatedAnswer(
  words: number,
  attaches: number,
): {
  step: ScriptedStep;
  stops: { gate: Gate; lastWord: string }[];
  end: Gate;
} {
  const positions = new Set<number>();
  while (positions.size < attaches) positions.add(1 + Math.floor(Math.random() * (words - 1)));
  const stops: { gate: Gate; lastWord: string }[] = [];
  const parts: ScriptedPart[] = [];
  for (let index = 0; index < words; index++) {
    if (positions.has(index)) {
      const stop = { gate: gate(), lastWord: `word${index - 1}` };
      stops.push(stop);
      parts.push({ gate: stop.gate });
    }
    parts.push({ text: index % 15 === 14 ? `word${index}.\n\n` : `word${index} ` }, { delayMs: 5 });
  }
  const end = gate();
  parts.push({ gate: end }, { text: 'The end.' });
  return { step: { parts }, stops, end };
}

/** A read-only attach whose stdout can be waited on while it runs. */
function attachReadOnly(sandbox: Sandbox, conversationId: string) {
  const args = ['conversation', 'attach', '--read-only', conversationId];
  const child = startJp(sandbox, args);
  let shown = '';
  const watchers = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    shown += chunk.toString();
    for (const watcher of [...watchers]) watcher();
  });
  return {
    result: collect(child, args, 60_000),
    /** Resolves once stdout shows `text`. */
    shows: (text: string) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (!shown.includes(text)) return;
          watchers.delete(check);
          resolve();
        };
        watchers.add(check);
        check();
      }),
  };
}

describe('attach replays what it missed, exactly', () => {
  it('50 attaches at random points of long streamed answers, each while the run is held mid-answer: replay + live equals the persisted answer', async () => {
    const sandbox = sandboxed();
    const answers = Array.from({ length: 5 }, () => gatedAnswer(90, 10));
    const model = await fakeModel(
      cleanup,
      answers.map((answer) => answer.step),
    );
    let attachedMidRun = 0;
    for (const [run, answer] of answers.entries()) {
      const started = await runJp(sandbox, ['query', '--new', '--detach', ...model.args, `run ${run}`], {
        env: model.env,
      });
      assert.equal(started.code, 0, started.stderr);
      const conversationId = started.stdout.trim();
      const attaches: ReturnType<typeof attachReadOnly>[] = [];
      for (const [index, stop] of answer.stops.entries()) {
        await stop.gate.reached;
        const attach = attachReadOnly(sandbox, conversationId);
        attaches.push(attach);
        // Half are seen replaying what was streamed before the stream goes on; half connect while it streams.
        if (index % 2 === 1) await attach.shows(stop.lastWord);
        stop.gate.open();
      }
      // The run is held before its end until every attach shows the answer's start: all attached mid-run.
      await answer.end.reached;
      await Promise.all(attaches.map((attach) => attach.shows('word0')));
      answer.end.open();
      const results = await Promise.all(attaches.map((attach) => attach.result));
      assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationId])).code, 0);
      const persisted = answerOf(sandbox, conversationId);
      assert.match(persisted, /^word0 word1 .*The end\.$/s);
      for (const result of results) {
        assert.equal(result.code, 0, result.stderr);
        assert.equal(result.stdout, persisted + '\n');
        attachedMidRun++;
      }
    }
    assert.equal(attachedMidRun, 50);
  });
});

describe('attach errors', () => {
  it('no running process: suggests --continue for an incomplete turn; says idle otherwise', async () => {
    const sandbox = sandboxed();
    const deferring = testProvider(sandbox, {
      steps: [{ parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'a', content: 'a' } } }] }],
    });
    await runJp(sandbox, ['query', ...deferring, '-c', 'conversation.tools.defaults.detached="defer"', 'x']);
    const [waiting] = conversationIds(sandbox);
    let result = await runJp(sandbox, ['conversation', 'attach', waiting!]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /no running process for jp-c\d+; it has an incomplete turn: waiting-for-input \(fs_create_file\)/,
    );
    assert.match(result.stderr, new RegExp(`jp query --continue --id=${waiting}`));
    await runJp(sandbox, [
      'query',
      '--new',
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'x' }] }] }, 'idle.json'),
      'y',
    ]);
    const idle = conversationIds(sandbox).find((id) => id !== waiting)!;
    result = await runJp(sandbox, ['conversation', 'attach', idle]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /its last turn is complete \(idle\)/);
  });

  it('a protocol version mismatch is a clear error naming both versions', async () => {
    const sandbox = sandboxed();
    const conversationId = (
      await runJp(sandbox, [
        'query',
        '--detach',
        ...testProvider(sandbox, { steps: [{ parts: [{ text: 'a' }, { delay_ms: 60_000 }] }] }),
        'x',
      ])
    ).stdout.trim();
    const socketPath = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.sock`);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = net.createConnection(socketPath);
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      socket.write(JSON.stringify({ type: 'hello', version: 99, can_prompt: false }) + '\n');
    });
    const message = JSON.parse(reply.trim().split('\n')[0]!);
    assert.equal(message.type, 'error');
    assert.equal(message.code, 'version_mismatch');
    assert.match(message.message, /client speaks version 99, this server .* speaks version 2/);
    assert.equal((await runJp(sandbox, ['conversation', 'kill', '--force', conversationId])).code, 0);
  });
});

describe('a prompting client that goes away', () => {
  it('SIGKILLed while its prompt is open: the inquiry falls back to the detached policy (defer for a detached run)', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { text: 'Holding.\n\n' },
            { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
          ],
        },
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'x.txt', content: 'x' } } }] },
        { parts: [{ text: 'done' }] },
      ],
    });
    const conversationId = (
      await runJp(sandbox, ['query', '--detach', ...script, ...unattendedCommands, 'x'])
    ).stdout.trim();
    const terminal = runInTerminal(
      sandbox,
      `node ${shellQuote(jpBinary)} conversation attach ${conversationId}; echo EXIT=$?`,
    );
    await terminal.waitFor('Holding.');
    sandbox.write('release', '');
    await terminal.waitFor('Run fs_create_file?');
    const [attachPid] = processesMatching(jpBinary, 'conversation', 'attach', conversationId).filter(
      (pid) => pid !== terminal.pid && pid !== terminal.holderPid,
    );
    assert.ok(attachPid, 'the attach client is running');
    process.kill(attachPid, 'SIGKILL');
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId]);
    assert.equal(waited.code, 4, waited.stderr);
    assert.equal(sandbox.exists('x.txt'), false);
    const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout);
    assert.equal(listed[0].status, 'waiting-for-input (fs_create_file)');
    terminal.kill();
  });
});
