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
import { type Gate, gate, type RecordedRequest, type ScriptedStep } from '../support/fake-provider.ts';
import {
  conversationIds,
  fakeModel,
  jpBinary,
  readEvents,
  runJp,
  type Sandbox,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { shellQuote } from '../support/pty.ts';
import { Screen, jpScreens } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

const jp = jpScreens(cleanup);

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

describe('the status line before the first token and through a stall in the middle of an answer', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: it shows before the first token; then below the unfinished line with the time and the tokens so far, and the line goes on whole once the answer comes back`, async () => {
      const sandbox = cleanup.sandbox();
      const first = gate();
      const stalled = gate();
      const model = await fakeModel(cleanup, [
        {
          parts: [
            { gate: first },
            { text: 'The first part of the answer' },
            { gate: stalled },
            { text: ' and the rest of it.' },
          ],
        },
      ]);
      const screen = jp(sandbox, ['query', ...model.args, ...terminal.themeArguments, 'answer'], {
        env: model.env,
        ...terminal.size,
      });
      await screen.waitFor(/thinking \(\d+s • Ctrl\+C to interrupt\)/, { on: 'screen' });
      first.open();
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

  for (const terminal of terminals) {
    it(`${terminal.name}: attach shows the same window and status line for lines written once it is attached`, async () => {
      const sandbox = cleanup.sandbox();
      const command =
        'echo before; while [ ! -f go ]; do sleep 0.05; done; echo "after one"; echo "after two" >&2; while [ ! -f release ]; do sleep 0.05; done; exit 3';
      const script = testProvider(sandbox, {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command } } }] },
          { parts: [{ text: 'It failed.' }] },
        ],
      });
      const started = await runJp(sandbox, ['query', '--detach', ...script, ...unattended, 'run it']);
      assert.equal(started.code, 0, started.stderr);
      const screen = jp(
        sandbox,
        ['conversation', 'attach', started.stdout.trim(), ...terminal.themeArguments],
        terminal.size,
      );
      await screen.waitFor(/running run_command \(\d+s/, { on: 'screen' });
      sandbox.write('go', '');
      await screen.waitFor(/^\s+after two$/m, { on: 'screen' });
      await screen.waitFor(/running run_command \(\d+s • \d+ lines • Ctrl\+C to interrupt\)/, { on: 'screen' });
      const rows = screen.visibleRows();
      const last = rows.findIndex((row) => /^\s+after two$/.test(row));
      assert.match(rows[last - 1] ?? '', /^\s+after one$/, screen.screenText());
      assert.match(
        rows[last + 1] ?? '',
        /running run_command \(/,
        `the status line is under the window:\n${screen.screenText()}`,
      );
      sandbox.write('release', '');
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      assert.equal(screen.count('running run_command ('), 0, screen.text());
      assert.equal(
        screen.count(/^\s+after one$/gm),
        1,
        `the window is gone, the fold holds the line once:\n${screen.text()}`,
      );
      assert.equal(screen.count('It failed.'), 1);
    });
  }
});

/** A 429, then a 503, then the answer: the provider's failures jp retries (each asks for no wait). */
function retriedSteps(gates?: { second: Gate; answer: Gate }): ScriptedStep[] {
  const now = { 'retry-after-ms': '0' };
  return [
    { status: 429, headers: now },
    { status: 503, headers: now, ...(gates ? { gate: gates.second } : {}) },
    { parts: [...(gates ? [{ gate: gates.answer }] : []), { text: 'Answered after two retries.' }] },
  ];
}

describe('the status line through a retry', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: a 429 then a 503: the status says jp is retrying (the attempt, the time, the interrupt key) until the answer comes, and goes before every other line`, async () => {
      const sandbox = cleanup.sandbox();
      const second = gate();
      const answer = gate();
      const model = await fakeModel(cleanup, retriedSteps({ second, answer }));
      const screen = jp(sandbox, ['query', ...model.args, ...terminal.themeArguments, 'answer'], {
        env: model.env,
        ...terminal.size,
      });
      // The retried request is held: the status says so while it waits.
      await screen.waitFor(/retrying, attempt 1 of 4 \(\d+s • Ctrl\+C to interrupt\)/, { on: 'screen' });
      second.open();
      await screen.waitFor(/retrying, attempt 2 of 4 \(\d+s • Ctrl\+C to interrupt\)/, { on: 'screen' });
      assert.equal(screen.count('attempt 1 of 4 ('), 0, `one status line, the latest:\n${screen.screenText()}`);
      answer.open();
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      const lines = screen.flowedText().split('\n');
      // Each retry was said once, on a line of its own, and the status line left nothing behind.
      for (const attempt of [1, 2])
        assert.equal(
          lines.filter((line) => new RegExp(`^jp: .*; retrying now \\(attempt ${attempt} of 4\\)$`).test(line)).length,
          1,
          screen.text(),
        );
      assert.equal(screen.count('Ctrl+C to interrupt'), 0, `the status line is gone:\n${screen.text()}`);
      assert.equal(screen.count('retrying, attempt'), 0, `the status line is gone:\n${screen.text()}`);
      assert.ok(screen.lines().includes('Answered after two retries.'), screen.text());
    });
  }
});

/** Whether a request is the one that asks for a summary of the conversation (a compaction). */
function isSummaryRequest(request: RecordedRequest): boolean {
  return request.messages.some(
    (message) => message.role === 'system' && message.text.includes('You are compacting the history'),
  );
}

/**
 * A conversation whose first turn is long (5,000 tokens, as the provider counts them), answered
 * headless, and a window of 16,000 tokens compacted at a fifth of it; the model that
 * answers its next message, whose summary request waits at `summary` when given.
 */
async function longConversation(
  sandbox: Sandbox,
  summary?: Gate,
): Promise<{ args: string[]; env: NodeJS.ProcessEnv; conversation: string }> {
  const model = await fakeModel(cleanup, (request: RecordedRequest): ScriptedStep => {
    if (isSummaryRequest(request))
      return { parts: [...(summary ? [{ gate: summary }] : []), { text: 'Summary: a long answer.' }] };
    const asked = request.messages.filter((message) => message.role === 'user').length;
    if (asked === 1) return { parts: [{ text: 'A long answer. '.repeat(1000) }], usage: { input: 50, output: 5000 } };
    return { parts: [{ text: 'Answered after compacting.' }] };
  });
  const first = await runJp(sandbox, ['query', '--new', ...model.args, 'tell me a lot'], { env: model.env });
  assert.equal(first.code, 0, first.stderr);
  return {
    args: [
      ...model.args,
      '-c',
      'assistant.context_window=16000',
      '-c',
      'assistant.compaction.threshold=0.2',
      `--id=${conversationIds(sandbox)[0]}`,
    ],
    env: model.env,
    conversation: conversationIds(sandbox)[0]!,
  };
}

describe('the status line through a compaction', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: while the conversation is summarised the status says so (the time, the interrupt key), and goes before every other line`, async () => {
      const sandbox = cleanup.sandbox();
      const summary = gate();
      const model = await longConversation(sandbox, summary);
      const screen = jp(sandbox, ['query', ...model.args, ...terminal.themeArguments, 'and now?'], {
        env: model.env,
        ...terminal.size,
      });
      await screen.waitFor(/compacting the conversation \(\d+s • Ctrl\+C to interrupt\)/, { on: 'screen' });
      const rows = screen.visibleRows().filter((row) => row !== '');
      assert.match(rows.at(-1)!, /compacting the conversation \(/, `the status is the last row:\n${rows.join('\n')}`);
      summary.open();
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      assert.equal(
        screen.flowedText().match(/^jp: compacting the conversation: summarising \d+ events/gm)?.length,
        1,
        `the compaction is said once, on a line of its own:\n${screen.text()}`,
      );
      assert.equal(screen.count('Ctrl+C to interrupt'), 0, `the status line is gone:\n${screen.text()}`);
      assert.equal(screen.count('compacting the conversation ('), 0, `the status line is gone:\n${screen.text()}`);
      assert.ok(screen.lines().includes('Answered after compacting.'), screen.text());
      assert.ok(readEvents(sandbox, model.conversation).some((event) => event.type === 'compaction'));
    });
  }
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

  it('a retry and a compaction with stderr to a file, stdout to a pipe: their notices as before, no status line, no escape sequence', async () => {
    const sandbox = cleanup.sandbox();
    const retried = await fakeModel(cleanup, retriedSteps());
    const command = (args: string[]): string =>
      `node ${shellQuote(jpBinary)} query ${args.map(shellQuote).join(' ')} 2>err.txt | cat > out.txt; echo "EX""IT=$?"`;
    const run = Screen.shell(sandbox, command(['--new', ...retried.args, 'answer']), {
      cleanup,
      env: retried.env,
    });
    await run.waitFor(/EXIT=0/);
    let errors = sandbox.read('err.txt');
    assert.doesNotMatch(errors, /[\u001b\u009b\r]/, JSON.stringify(errors));
    assert.equal(errors.match(/; retrying now \(attempt \d of 4\)$/gm)?.length, 2, errors);
    assert.doesNotMatch(errors, /retrying, attempt|Ctrl\+C to interrupt/, errors);
    assert.equal(sandbox.read('out.txt'), 'Answered after two retries.\n');

    const other = cleanup.sandbox();
    const long = await longConversation(other);
    const compacted = Screen.shell(other, command([...long.args, 'and now?']), { cleanup, env: long.env });
    await compacted.waitFor(/EXIT=0/);
    errors = other.read('err.txt');
    assert.doesNotMatch(errors, /[\u001b\u009b\r]/, JSON.stringify(errors));
    assert.match(errors, /^jp: compacting the conversation: summarising \d+ events/m, errors);
    assert.doesNotMatch(errors, /compacting the conversation \(|Ctrl\+C to interrupt/, errors);
    assert.equal(other.read('out.txt'), 'Answered after compacting.\n');
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
