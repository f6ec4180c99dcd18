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
  jpBinary,
  processesMatching,
  readEvents,
  runJp,
  type Sandbox,
  sleep,
  startJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { runInTerminal, shellQuote } from '../support/pty.ts';
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

/** A long streamed answer: paragraphs (persisted as they complete) of words streamed one by one. */
function longAnswerScript(words: number, delayMs: number): { steps: { parts: unknown[] }[] } {
  const parts: unknown[] = [];
  for (let index = 0; index < words; index++) {
    parts.push({ text: index % 15 === 14 ? `word${index}.\n\n` : `word${index} ` });
    parts.push({ delay_ms: delayMs });
  }
  parts.push({ text: 'The end.' });
  return { steps: [{ parts }] };
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

describe('attach replays what it missed, exactly', () => {
  it('50 attaches at random moments of long streamed answers: replay + live equals the persisted answer', async (context) => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, longAnswerScript(90, 25));
    let trials = 0;
    for (let run = 0; run < 5; run++) {
      const conversationId = (
        await runJp(sandbox, ['query', '--new', '--detach', ...script, `run ${run}`])
      ).stdout.trim();
      const attaches: Promise<{ stdout: string; code: number | null; at: number }>[] = [];
      for (let index = 0; index < 10; index++) {
        const at = Math.round(Math.random() * 2200);
        trials++;
        attaches.push(
          sleep(at).then(async () => {
            const result = await runJp(sandbox, ['conversation', 'attach', '--read-only', conversationId]);
            return { ...result, at };
          }),
        );
      }
      const results = await Promise.all(attaches);
      await runJp(sandbox, ['conversation', 'wait', conversationId]);
      const persisted = answerOf(sandbox, conversationId);
      assert.match(persisted, /^word0 word1 .*The end\.$/s);
      for (const result of results) {
        if (result.code !== 0) {
          // Attached after the run ended: a clear "not running" error, nothing shown.
          assert.equal(result.code, 1);
          assert.equal(result.stdout, '');
          continue;
        }
        assert.equal(result.stdout, persisted + '\n', `attached at ${result.at} ms`);
      }
      context.diagnostic(
        `run ${run}: ${results.filter((result) => result.code === 0).length}/10 attached while running`,
      );
    }
    assert.ok(trials >= 50);
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
