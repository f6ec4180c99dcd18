/**
 * Every query is a server: --detach, the registry, `ls`, `wait`, `kill`, hooks, many detached runs
 * at once, and foreground output identical to the in-process path.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  gate,
  type ScriptedPart,
  startFakeProvider,
  stepByToolResults,
  textStep,
  toolStep,
} from '../support/fake-provider.ts';
import {
  eventually,
  fakeModel,
  fakeModelArguments,
  jpBinary,
  processAlive,
  readEvents,
  runJp,
  type Sandbox,
  sleep,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { runInTerminal, shellQuote } from '../support/pty.ts';

const cleanup = useCleanup();
const sandboxed = cleanup.sandbox;

async function status(sandbox: Sandbox, conversationId: string): Promise<string> {
  const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  return (
    (JSON.parse(listed.stdout) as { id: string; status: string }[]).find((entry) => entry.id === conversationId)
      ?.status ?? 'missing'
  );
}

function processesDirectory(sandbox: Sandbox): string {
  return path.join(sandbox.userDirectory(), 'processes');
}

function registryLeftovers(sandbox: Sandbox): string[] {
  const directory = processesDirectory(sandbox);
  return existsSync(directory)
    ? readdirSync(directory).filter((name) => name.endsWith('.json') || name.endsWith('.sock'))
    : [];
}

describe('--detach', () => {
  it('returns with the id while the answer still streams; ls shows running; wait exits 0; print --last has the whole answer; nothing is left behind', async () => {
    // The answer streams once the test has seen the run going.
    const seenRunning = gate();
    const answer = textStep('one two three four five six seven eight nine ten eleven twelve', { chunks: 12 }) as {
      parts: ScriptedPart[];
    };
    const model = await fakeModel(cleanup, [{ parts: [{ gate: seenRunning }, ...answer.parts] }], 'anthropic');
    const sandbox = sandboxed();
    const detached = await runJp(sandbox, ['query', '--detach', ...model.args, 'count'], { env: model.env });
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    assert.match(conversationId, /^jp-c\d{16}$/);
    assert.match(detached.stderr, new RegExp(`Detached: ${conversationId}`));
    const answerSoFar = readEvents(sandbox, conversationId).filter((event) => event.type === 'chat_response').length;
    assert.equal(answerSoFar, 0, 'the answer was still streaming when --detach returned');
    assert.match(await status(sandbox, conversationId), /^running \(pid \d+\)$/);
    seenRunning.open();
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId]);
    assert.equal(waited.code, 0, waited.stderr);
    const printed = await runJp(sandbox, ['conversation', 'print', '--last', conversationId]);
    assert.equal(printed.stdout, 'one two three four five six seven eight nine ten eleven twelve\n');
    assert.equal(await status(sandbox, conversationId), 'idle');
    assert.deepEqual(registryLeftovers(sandbox), []);
  });

  it('json: prints a detached line', async () => {
    const sandbox = sandboxed();
    const result = await runJp(sandbox, [
      'query',
      '--detach',
      '--json',
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'x' }] }] }),
      'hi',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const line = JSON.parse(result.stdout.trim());
    assert.equal(line.type, 'detached');
    assert.match(line.conversation_id, /^jp-c/);
    assert.equal(typeof line.pid, 'number');
    assert.equal((await runJp(sandbox, ['conversation', 'wait', line.conversation_id])).code, 0);
  });

  it('a detached run that needs permission defers: wait exits 4, ls waiting-for-input, tool not run, hook ran; --continue in a terminal completes', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-responses',
      steps: stepByToolResults([
        toolStep([{ name: 'run_command', arguments: { command: 'echo ran > ran.txt' } }]),
        textStep('The command ran.'),
      ]),
    });
    cleanup.add(() => provider.close());
    const sandbox = sandboxed();
    const model = fakeModelArguments('openai-responses', provider.baseUrl);
    const hook = 'printf "%s %s" "$JP_CONVERSATION_ID" "$JP_TOOL_NAME" > hook.txt';
    const detached = await runJp(
      sandbox,
      ['query', '--detach', ...model.args, '-c', `conversation.hooks.on_waiting=${JSON.stringify(hook)}`, 'run it'],
      { env: model.env },
    );
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId]);
    assert.equal(waited.code, 4, waited.stderr);
    assert.equal(await status(sandbox, conversationId), 'waiting-for-input (run_command)');
    assert.equal(sandbox.exists('ran.txt'), false);
    await eventually(
      'the hook ran',
      () => sandbox.exists('hook.txt') && sandbox.read('hook.txt') === `${conversationId} run_command`,
    );
    assert.equal(
      (await runJp(sandbox, ['conversation', 'wait', conversationId])).code,
      4,
      'wait on a stopped run derives the code from the log',
    );

    const terminal = runInTerminal(
      sandbox,
      `node ${shellQuote(jpBinary)} query --continue --id=${conversationId} ${model.args.map(shellQuote).join(' ')}; echo EXIT=$?`,
      { env: model.env },
    );
    await terminal.waitFor('Run run_command?');
    terminal.write('y');
    await terminal.waitFor(/EXIT=\d+/);
    assert.match(terminal.text(), /EXIT=0/);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
    assert.equal(await status(sandbox, conversationId), 'idle');
  });
});

describe('kill', () => {
  it('kill stops a running run and leaves it resumable', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ text: 'First paragraph.\n\n' }, { delay_ms: 60_000 }, { text: 'late' }] },
        { parts: [{ text: 'resumed' }] },
      ],
    });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'long']);
    const conversationId = detached.stdout.trim();
    await eventually('streaming started', () =>
      readEvents(sandbox, conversationId).some((event) => event.type === 'chat_response'),
    );
    const before = Date.now();
    const killed = await runJp(sandbox, ['conversation', 'kill', conversationId]);
    const elapsed = Date.now() - before;
    assert.equal(killed.code, 0, killed.stderr);
    assert.match(killed.stderr, /resume it with `jp query --continue/);
    const events = readEvents(sandbox, conversationId);
    assert.deepEqual(
      [events.at(-1)!.type, events.at(-1)!.status, events.at(-1)!.signal],
      ['turn_end', 'interrupted', 'shutdown'],
    );
    assert.equal(await status(sandbox, conversationId), 'interrupted (awaiting LLM response)');
    assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationId])).code, 143);
    assert.deepEqual(registryLeftovers(sandbox), []);
    void elapsed;
  });

  it('kill --force leaves no process of the run alive, tool children included, and no stale entry', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            {
              tool_call: { name: 'run_command', arguments: { command: 'sleep 300 & echo $! > child.pid; sleep 300' } },
            },
          ],
        },
        { parts: [{ text: 'x' }] },
      ],
    });
    // --sandbox off: the test checks the host pid the command writes; in the sandbox it would be a pid of its own namespace.
    const detached = await runJp(sandbox, [
      'query',
      '--detach',
      ...script,
      '--sandbox',
      'off',
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'sleep',
    ]);
    const conversationId = detached.stdout.trim();
    await eventually(
      'the tool child started',
      () => sandbox.exists('child.pid') && sandbox.read('child.pid').trim() !== '',
    );
    const toolChild = Number(sandbox.read('child.pid').trim());
    const entry = await eventually('the registry knows the tool process group', () => {
      const current = JSON.parse(
        readFileSync(path.join(processesDirectory(sandbox), `${conversationId}.json`), 'utf8'),
      );
      return current.tool_process_groups.length === 1 ? current : undefined;
    });
    const toolGroup = entry.tool_process_groups[0].pgid;
    const killed = await runJp(sandbox, ['conversation', 'kill', '--force', conversationId]);
    assert.equal(killed.code, 0, killed.stderr);
    await eventually('the server is gone', () => !processAlive(entry.pid));
    await eventually('the tool process group leader is gone', () => !processAlive(toolGroup));
    await eventually('the tool child is gone', () => !processAlive(toolChild));
    assert.deepEqual(registryLeftovers(sandbox), []);
    assert.equal(await status(sandbox, conversationId), 'interrupted (pending tool execution)');
    const resumed = await runJp(sandbox, ['query', '--continue', `--id=${conversationId}`]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const responses = readEvents(sandbox, conversationId).filter((event) => event.type === 'tool_call_response');
    assert.equal(responses.length, 1);
    assert.equal(responses[0]!.outcome, 'unknown');
  });

  it('a lock held by a detached run names it and suggests kill', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'a' }, { delay_ms: 60_000 }] }] });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'long']);
    const conversationId = detached.stdout.trim();
    const refused = await runJp(sandbox, ['query', `--id=${conversationId}`, ...script, 'again']);
    assert.equal(refused.code, 5);
    assert.match(refused.stderr, /locked by pid \d+ \(a detached jp query/);
    assert.match(refused.stderr, new RegExp(`jp conversation kill ${conversationId}`));
    assert.equal((await runJp(sandbox, ['conversation', 'kill', '--force', conversationId])).code, 0);
  });
});

describe('many detached runs', () => {
  it('20 detached runs on 20 conversations at once all complete, and ls is right throughout', async () => {
    const sandbox = sandboxed();
    // Every run holds its answer until ls has shown one of them running.
    const seenRunning = gate();
    const model = await fakeModel(cleanup, [
      { parts: [{ text: 'working ' }, { gate: seenRunning }, { text: 'done' }] },
    ]);
    const started = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        runJp(sandbox, ['query', '--new', '--detach', ...model.args, `job ${index}`], { env: model.env }),
      ),
    );
    const ids = started.map((result) => {
      assert.equal(result.code, 0, result.stderr);
      return result.stdout.trim();
    });
    assert.equal(new Set(ids).size, 20);
    let sawRunning = false;
    for (;;) {
      const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout) as {
        id: string;
        status: string;
      }[];
      assert.equal(listed.length, 20);
      for (const entry of listed)
        assert.match(entry.status, /^(running \(pid \d+\)|idle)$/, `${entry.id}: ${entry.status}`);
      const running = listed.filter((entry) => entry.status.startsWith('running'));
      if (running.length > 0) {
        sawRunning = true;
        seenRunning.open();
      }
      if (running.length === 0) break;
      await sleep(100);
    }
    assert.ok(sawRunning);
    const waits = await Promise.all(ids.map((id) => runJp(sandbox, ['conversation', 'wait', id])));
    for (const result of waits) assert.equal(result.code, 0);
    for (const id of ids)
      assert.equal(
        readEvents(sandbox, id)
          .filter((event) => event.type === 'chat_response')
          .map((event) => event.message)
          .join(''),
        'working done',
      );
    assert.deepEqual(registryLeftovers(sandbox), []);
  });
});

describe('foreground through the server prints what the in-process path prints', () => {
  const script = {
    steps: [
      {
        parts: [
          { text: 'Reading.\n\n' },
          { reasoning: 'hmm' },
          { text: 'Still reading' },
          { tool_call: { name: 'fs_read_file', arguments: { path: 'a.txt' } } },
        ],
      },
      { parts: [{ text: 'The file says: ' }, { text: 'A.' }] },
    ],
  };
  const normalize = (text: string): string =>
    text
      .replace(/"ts":"[^"]+"/g, '"ts":"T"')
      .replace(/"timestamp":"[^"]+"/g, '"timestamp":"T"')
      .replace(/jp-c\d{16}/g, 'CID')
      .replace(/"duration_ms":\d+/g, '"duration_ms":0')
      .replace(/"id":"inq-[^"]+"/g, '"id":"INQ"');

  for (const format of ['text', 'json'] as const) {
    it(`${format}: byte-identical stdout${format === 'json' ? ' (timestamps, ids and duration normalized)' : ''}`, async () => {
      const sandbox = sandboxed();
      sandbox.write('a.txt', 'A');
      const args = (extra: string[]) => [
        'query',
        '--new',
        ...(format === 'json' ? ['--json'] : []),
        ...extra,
        ...testProvider(sandbox, script),
        'read a',
      ];
      const viaServer = await runJp(sandbox, args([]));
      const inProcess = await runJp(sandbox, args(['--no-server']));
      assert.equal(viaServer.code, 0, viaServer.stderr);
      assert.equal(inProcess.code, 0, inProcess.stderr);
      if (format === 'text') assert.equal(viaServer.stdout, inProcess.stdout);
      else assert.equal(normalize(viaServer.stdout), normalize(inProcess.stdout));
      assert.ok(viaServer.stdout.length > 20);
    });
  }
});

describe('socket hygiene', () => {
  it('the socket is 0600 in a 0700 directory; a directory readable by others is refused with a clear error', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'a' }, { delay_ms: 60_000 }] }] });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'long']);
    const conversationId = detached.stdout.trim();
    const directory = processesDirectory(sandbox);
    assert.equal(statSync(directory).mode & 0o777, 0o700);
    assert.equal(statSync(path.join(directory, `${conversationId}.sock`)).mode & 0o777, 0o600);
    assert.equal(statSync(path.join(directory, `${conversationId}.json`)).mode & 0o777, 0o600);
    assert.equal((await runJp(sandbox, ['conversation', 'kill', conversationId])).code, 0);

    const { chmodSync } = await import('node:fs');
    chmodSync(directory, 0o755);
    const refused = await runJp(sandbox, ['query', '--new', ...script, 'again']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /refusing to use .*processes: its mode is 755, readable or writable by others/);
    assert.match(refused.stderr, /chmod 700/);
  });

  it('a query whose server cannot start leaves the session as it was: the active conversation stays, a first one leaves no session file', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'answer' }] }] });
    const { chmodSync, mkdirSync } = await import('node:fs');
    assert.equal((await runJp(sandbox, ['conversation', 'ls'])).code, 0);
    const sessions = path.join(sandbox.userDirectory(), 'sessions');

    // No session yet: a refused first query writes none.
    mkdirSync(processesDirectory(sandbox), { recursive: true, mode: 0o755 });
    chmodSync(processesDirectory(sandbox), 0o755);
    const refusedFirst = await runJp(sandbox, ['query', '--new', ...script, 'first']);
    assert.equal(refusedFirst.code, 1, refusedFirst.stderr);
    assert.deepEqual(existsSync(sessions) ? readdirSync(sessions) : [], []);

    // An active conversation stays active when the next query cannot start.
    chmodSync(processesDirectory(sandbox), 0o700);
    const first = await runJp(sandbox, ['query', '--new', ...script, 'second']);
    assert.equal(first.code, 0, first.stderr);
    const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout) as {
      id: string;
      active: boolean;
    }[];
    assert.equal(listed.length, 1);
    const activeId = listed[0]!.id;
    assert.equal(listed[0]!.active, true);
    const sessionBefore = readdirSync(sessions).map((name) => readFileSync(path.join(sessions, name), 'utf8'));

    chmodSync(processesDirectory(sandbox), 0o755);
    const refusedNew = await runJp(sandbox, ['query', '--new', ...script, 'third']);
    assert.equal(refusedNew.code, 1, refusedNew.stderr);
    const refusedExisting = await runJp(sandbox, ['query', ...script, 'fourth']);
    assert.equal(refusedExisting.code, 1, refusedExisting.stderr);
    chmodSync(processesDirectory(sandbox), 0o700);
    const after = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout) as {
      id: string;
      active: boolean;
    }[];
    assert.deepEqual(
      after.map((entry) => [entry.id, entry.active]),
      [[activeId, true]],
    );
    assert.deepEqual(
      readdirSync(sessions).map((name) => readFileSync(path.join(sessions, name), 'utf8')),
      sessionBefore,
    );
  });
});
