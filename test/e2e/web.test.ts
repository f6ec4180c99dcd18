/**
 * `jp web` in a real browser (Chromium through playwright-core) against real runs of the built
 * binary: the list follows runs as they start and end, a live answer streams, a live run's
 * question is answered from the page and the run goes on, a deferred run is continued from the
 * page, a run is detached from and stopped, a finished turn's changes are shown, a view keeps the
 * attach contract (what streamed before it came, history from where it asks, each event once, in
 * a few batches), and the list has every workspace its user's jp has run in, wherever it starts.
 * The guards are web-guard.test.ts's; SSH hosts web-ssh.test.ts's.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { gate } from '../support/fake-provider.ts';
import { conversationIds, eventually, fakeModel, readEvents, runJp, type Sandbox, useCleanup } from '../support/jp.ts';
import { detached, openStream, patience, releaseWait, row, unattendedCommands, webTesting } from '../support/web.ts';

const cleanup = useCleanup();
const { web, openPage } = webTesting(cleanup);

describe('jp web in a browser', () => {
  it('lists a run when it starts, shows it running, and idle when it ends', async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    const page = await openPage(running);
    await page.locator('#empty').waitFor({ state: 'visible', ...patience });
    await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: releaseWait } } }] },
          { parts: [{ text: 'Finished.' }] },
        ],
      },
      'a run to list',
      unattendedCommands,
    );
    await row(page, 'a run to list').locator('.state.running').waitFor(patience);
    sandbox.write('release', '');
    await row(page, 'a run to list').locator('.state.idle').waitFor(patience);
    assert.equal(await page.locator('.run').count(), 1);
  });

  it('streams a live answer, then shows it whole once, rendered as markdown', async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    await detached(
      sandbox,
      {
        steps: [
          {
            parts: [
              { text: 'Streaming **part one**.\n\n' },
              { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
            ],
          },
          { parts: [{ text: 'Part ' }, { delay_ms: 200 }, { text: 'two, ' }, { delay_ms: 200 }, { text: 'the end.' }] },
        ],
      },
      'stream it',
      unattendedCommands,
    );
    const page = await openPage(running);
    await row(page, 'stream it').click();
    // While the run waits in its tool, the first part is on the page: it came live, not at the end.
    await page.locator('.block.assistant strong', { hasText: 'part one' }).waitFor(patience);
    assert.equal(
      readEvents(sandbox, readConversation(sandbox)).some((event) => event.type === 'turn_end'),
      false,
      JSON.stringify(readEvents(sandbox, readConversation(sandbox)).filter((event) => event.type !== 'system_prompt')),
    );
    sandbox.write('release', '');
    await page.locator('.block.assistant', { hasText: 'Part two, the end.' }).waitFor(patience);
    await row(page, 'stream it').locator('.state.idle').waitFor(patience);
    const transcript = (await page.locator('#blocks').textContent()) ?? '';
    assert.equal(transcript.split('Part two, the end.').length, 2, transcript);
    assert.equal(transcript.split('part one').length, 2, transcript);
    assert.equal(await page.locator('#live').isVisible(), false, (await page.locator('#live').textContent()) ?? '');
  });

  it("answers a live run's question from the page: the run goes on, and the answer is recorded by the user in jp web", async () => {
    const sandbox = cleanup.sandbox();
    const running = await web(sandbox);
    const conversationId = await detached(
      sandbox,
      {
        steps: [
          {
            parts: [
              { text: 'Waiting.\n\n' },
              { tool_call: { name: 'run_command', arguments: { command: releaseWait } } },
            ],
          },
          {
            parts: [
              { text: 'Now a file.\n\n' },
              {
                tool_call: {
                  name: 'fs_create_file',
                  arguments: { path: 'approved.txt', content: 'approved\nsecond line' },
                },
              },
            ],
          },
          { parts: [{ text: 'Written after approval.' }] },
        ],
      },
      'ask me',
      unattendedCommands,
    );
    const page = await openPage(running);
    await row(page, 'ask me').click();
    await page.locator('.block.assistant', { hasText: 'Waiting.' }).waitFor(patience);
    sandbox.write('release', '');
    const ask = page.locator('.ask.live');
    await ask.waitFor(patience);
    // The whole payload: the file and its content, line by line.
    assert.match(
      (await ask.textContent()) ?? '',
      /Run fs_create_file\?[\s\S]*approved\.txt[\s\S]*\+ approved[\s\S]*\+ second line/,
    );
    assert.equal(sandbox.exists('approved.txt'), false);
    await ask.getByRole('button', { name: 'Run', exact: true }).click();
    await page.locator('.block.assistant', { hasText: 'Written after approval.' }).waitFor(patience);
    assert.equal(sandbox.read('approved.txt'), 'approved\nsecond line');
    const responses = readEvents(sandbox, conversationId).filter((event) => event.type === 'inquiry_response');
    assert.deepEqual(
      responses.map((event) => [event.answer, event.by, event.client]),
      [['run', 'user', 'jp web']],
    );
  });

  it('continues a deferred run from the page: it goes on in the background and finishes', async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo continued > out.txt' } } }] },
          { parts: [{ text: 'Continued and done.' }] },
        ],
      },
      'deferred one',
    );
    await eventually('the run to defer', async () => {
      const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
      return JSON.parse(listed.stdout)[0]?.state === 'waiting-for-input';
    });
    const running = await web(sandbox);
    const page = await openPage(running);
    await row(page, 'deferred one').locator('.state.waiting-for-input').waitFor(patience);
    await row(page, 'deferred one').click();
    const ask = page.locator('.ask.deferred');
    await ask.waitFor(patience);
    assert.match(
      (await ask.textContent()) ?? '',
      /Run run_command\?[\s\S]*Sandbox: workspace-write, no network[\s\S]*echo continued > out\.txt/,
    );
    await ask.getByRole('button', { name: 'Run', exact: true }).click();
    await row(page, 'deferred one').locator('.state.idle').waitFor(patience);
    assert.equal(sandbox.read('out.txt'), 'continued\n');
    const responses = readEvents(sandbox, conversationId).filter((event) => event.type === 'inquiry_response');
    assert.deepEqual(
      responses.map((event) => [event.answer, event.by, event.client]),
      [['run', 'user', 'jp web']],
    );
    // Opened again, the finished run shows its answer, once.
    await row(page, 'deferred one').click();
    await page.locator('.block.assistant', { hasText: 'Continued and done.' }).waitFor(patience);
    assert.equal(await page.locator('.block.assistant', { hasText: 'Continued and done.' }).count(), 1);
  });
});

describe('jp web acts on a run', () => {
  it('detaches from a run and stops it from the page; shows what a finished turn changed', async () => {
    const sandbox = cleanup.sandbox();
    await detached(
      sandbox,
      {
        steps: [
          {
            parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'made.txt', content: 'made here\n' } } }],
          },
          { parts: [{ text: 'Made it.' }] },
        ],
      },
      'make a file',
      ['--new', '-c', 'conversation.tools.fs_create_file.run="unattended"'],
    );
    const stopped = await detached(
      sandbox,
      {
        steps: [
          { parts: [{ tool_call: { name: 'run_command', arguments: { command: releaseWait } } }] },
          { parts: [{ text: 'Never said.' }] },
        ],
      },
      'stop me',
      ['--new', ...unattendedCommands],
    );
    const running = await web(sandbox);
    const page = await openPage(running);
    page.on('dialog', (dialog) => void dialog.accept());
    // Detached: the page stops watching, the run goes on.
    await row(page, 'stop me').locator('.state.running').waitFor(patience);
    await row(page, 'stop me').click();
    await page.locator('#detach').waitFor({ state: 'visible', ...patience });
    await page.locator('#detach').click();
    await page.locator('#notice', { hasText: 'Detached: the run goes on.' }).waitFor(patience);
    assert.equal(
      JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout).find(
        (listed: { id: string }) => listed.id === stopped,
      ).state,
      'running',
    );
    // Stopped: saved and resumable, the command never let finish.
    await page.locator('#stop').click();
    await row(page, 'stop me').locator('.state.interrupted').waitFor(patience);
    assert.ok(!readEvents(sandbox, stopped).some((event) => JSON.stringify(event).includes('Never said.')));
    // A finished turn that wrote a file: its changes, as `jp conversation diff` shows them.
    await row(page, 'make a file').locator('.state.idle').waitFor(patience);
    await row(page, 'make a file').click();
    await page.locator('#changes').click();
    const diff = page.locator('#diff-text');
    await diff.locator(':scope', { hasText: 'made.txt' }).waitFor(patience);
    assert.match((await diff.textContent()) ?? '', /\+made here/);
  });
});

describe('jp web keeps the attach contract', () => {
  it('opened while an answer streams, it shows what streamed before it came, then the rest, each once', async () => {
    const sandbox = cleanup.sandbox();
    const held = gate();
    const model = await fakeModel(cleanup, [
      { parts: [{ text: 'Early words, ' }, { gate: held }, { text: 'late words.' }] },
    ]);
    const started = await runJp(sandbox, ['query', '--detach', ...model.args, 'hold on'], { env: model.env });
    assert.equal(started.code, 0, started.stderr);
    const running = await web(sandbox);
    const page = await openPage(running);
    await row(page, 'hold on').click();
    await page.locator('#live', { hasText: 'Early words,' }).waitFor(patience);
    // Opened again: those words streamed before this view came, so only the run's buffer has them.
    await page.reload();
    await row(page, 'hold on').click();
    await page.locator('#live', { hasText: 'Early words,' }).waitFor(patience);
    held.open();
    await page.locator('.block.assistant', { hasText: 'Early words, late words.' }).waitFor(patience);
    await row(page, 'hold on').locator('.state.idle').waitFor(patience);
    const transcript = (await page.locator('#blocks').textContent()) ?? '';
    assert.equal(transcript.split('Early words').length, 2, transcript);
    assert.equal(await page.locator('#live').isVisible(), false);
  });

  it("sends a view's history from the event asked for, every event once, in a few batches", async () => {
    const sandbox = cleanup.sandbox();
    const conversationId = await detached(sandbox, { steps: [{ parts: [{ text: 'One answer.' }] }] }, 'long one');
    await eventually('the run to end', async () => {
      const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
      return JSON.parse(listed.stdout)[0]?.state === 'idle';
    });
    // Grown to thousands of events by copies of its turn's events.
    const file = path.join(sandbox.workspace, '.jp', 'conversations', conversationId, 'events.ndjson');
    const turn = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.includes('"system_prompt"') && !line.includes('"config_delta"'));
    appendFileSync(
      file,
      `${Array.from({ length: Math.ceil(4500 / turn.length) }, () => turn.join('\n')).join('\n')}\n`,
    );
    const total = readEvents(sandbox, conversationId).length;
    assert.ok(total > 4500, String(total));
    const running = await web(sandbox);
    const workspace = path.basename(sandbox.userDirectory());
    for (const from of [0, 4321]) {
      const stream = await openStream(
        running,
        `/api/view?source=local&workspace=${workspace}&conversation=${conversationId}&from=${from}`,
      );
      await stream.next((message) => message.type === 'closed');
      const batches = stream.seen.filter((message) => message.type === 'events' || message.type === 'event');
      const seqs = batches.flatMap((batch) =>
        batch.type === 'event' ? [batch.seq] : batch.events.map((_: unknown, index: number) => batch.from + index),
      );
      assert.deepEqual(
        seqs,
        Array.from({ length: total - from }, (_, index) => from + index),
      );
      assert.equal(batches.length, Math.ceil((total - from) / 2000));
      stream.close();
    }
  });
});

describe('jp web finds the workspaces', () => {
  it("lists the runs of every workspace its user's jp has run in, not a checkout replaced by another", async () => {
    const sandbox = cleanup.sandbox();
    const script = JSON.stringify({ steps: [{ parts: [{ text: 'Done.' }] }] });
    /** Another workspace of the same user: its own directory, the same user-local state. */
    const workspaceAt = (name: string): string => {
      const root = path.join(sandbox.root, name);
      mkdirSync(path.join(root, '.jp', 'conversations'), { recursive: true });
      writeFileSync(path.join(root, 'script.json'), script);
      return root;
    };
    const queryIn = async (cwd: string, title: string): Promise<void> => {
      const result = await runJp(sandbox, ['query', '-m', 'test', '-c', 'providers.test.script=script.json', title], {
        cwd,
      });
      assert.equal(result.code, 0, result.stderr);
    };
    const second = workspaceAt('b');
    const replaced = workspaceAt('r');
    writeFileSync(path.join(sandbox.workspace, 'script.json'), script);
    await queryIn(sandbox.workspace, 'in the first');
    await queryIn(second, 'in the second');
    await queryIn(replaced, 'in the replaced one');
    // That checkout is now another directory (a link to the first): its record is not taken for it.
    rmSync(replaced, { recursive: true });
    symlinkSync(sandbox.workspace, replaced);
    // Started in the second: the first is found by its record in the user-local state alone.
    const running = await web(sandbox, [], { cwd: second });
    const stream = await openStream(running, '/api/runs');
    const listed = await stream.next((message) => Array.isArray(message.runs) && message.runs.length > 0);
    stream.close();
    assert.deepEqual(
      listed.runs.map((run: { title: string; workspace: { root: string } }) => [run.title, run.workspace.root]).sort(),
      [
        ['in the first', sandbox.workspace],
        ['in the second', second],
      ],
    );
  });
});

function readConversation(sandbox: Sandbox): string {
  const ids = conversationIds(sandbox);
  assert.equal(ids.length, 1);
  return ids[0]!;
}
