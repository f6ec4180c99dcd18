/**
 * Approvals that last, on the user's side: chosen with `a` at a permission prompt (tested on the
 * rendered screen at 100×30 and 60×20, dark and light), kept in user-local state, applied to later
 * queries with a human there or not (headless too), matched on the words the shell will run (a
 * prefix never covers a compound command), listed and revoked with `jp approvals`, shown by
 * `config show --effective`, and out of the model's reach: a tool that tries to write the store's
 * file is refused by the file tools and by the sandbox.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';
import { keys, Screen } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

const command = (line: string): { tool_call: { name: string; arguments: unknown } } => ({
  tool_call: { name: 'run_command', arguments: { command: line } },
});

/** A headless query (no terminal, --non-interactive) whose model runs `line`; its JSON result. */
async function headless(sandbox: Sandbox, line: string): Promise<Record<string, any>> {
  const script = testProvider(
    sandbox,
    { steps: [{ parts: [command(line)] }, { parts: [{ text: 'Done.' }] }] },
    'headless.json',
  );
  const run = await runJp(sandbox, ['query', '--new', '--json', '--non-interactive', ...script, 'go']);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

function storeOf(sandbox: Sandbox): string {
  return path.join(sandbox.userDirectory(), 'approvals.json');
}

describe('approving a command prefix for good', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: \`a\` offers this command, its prefixes and the tool; the prefix chosen is kept and applies to a later headless query, never to a compound command`, async () => {
      const sandbox = cleanup.sandbox();
      const script = testProvider(sandbox, {
        steps: [{ parts: [command('printf first > first.txt')] }, { parts: [{ text: 'Ran it.' }] }],
      });
      const screen = Screen.jp(sandbox, ['query', ...script, ...terminal.themeArguments, 'go'], {
        cleanup,
        ...terminal.size,
      });
      await screen.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen' });
      screen.press('a');
      await screen.waitFor('Run without asking, from now on in this workspace', { on: 'screen' });
      await screen.waitFor('no: back to the question', { on: 'screen' });
      // A command with a redirection is no simple command: it has no words, so only the tool is offered.
      const offered = screen.flowedText();
      assert.match(offered, /run_command: every call/, screen.text());
      assert.doesNotMatch(offered, /the command printf|commands that start with/, screen.text());
      screen.press(keys.escape);
      screen.close();

      const simple = testProvider(
        sandbox,
        { steps: [{ parts: [command('printf first')] }, { parts: [{ text: 'Ran it.' }] }] },
        'simple.json',
      );
      const again = Screen.jp(sandbox, ['query', '--new', ...simple, ...terminal.themeArguments, 'go'], {
        cleanup,
        ...terminal.size,
      });
      await again.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen' });
      again.press('a');
      await again.waitFor('run_command: commands that start with printf', { on: 'screen' });
      again.press(keys.down + keys.enter);
      const exit = await again.exited;
      assert.equal(exit.exitCode, 0, again.text());
      const kept = JSON.parse(readFileSync(storeOf(sandbox), 'utf8'));
      assert.deepEqual(
        kept.approvals.map((entry: { rule: unknown }) => entry.rule),
        [{ kind: 'prefix', tool: 'run_command', words: ['printf'] }],
      );

      const covered = await headless(sandbox, 'printf second');
      assert.equal(covered.status, 'success', JSON.stringify(covered));
      assert.equal(covered.tools[0].status, 'ok', JSON.stringify(covered.tools));
      const compound = await headless(sandbox, 'printf third; touch pwned');
      assert.equal(compound.tools[0].status, 'denied', JSON.stringify(compound.tools));
      assert.equal(sandbox.exists('pwned'), false);
    });
  }
});

describe('the store', () => {
  it('listed and revoked with jp approvals, shown by config show --effective; revoked, a headless query is denied again', async () => {
    const sandbox = cleanup.sandbox();
    // A first run makes the user-local directory; the approval is one a person gave at a prompt.
    await headless(sandbox, 'true');
    const store = storeOf(sandbox);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      store,
      JSON.stringify({
        version: 1,
        approvals: [
          {
            rule: { kind: 'command', tool: 'run_command', words: ['printf', 'ok'] },
            approved_at: '2026-01-01T00:00:00Z',
          },
        ],
      }),
      { mode: 0o600 },
    );
    const listed = await runJp(sandbox, ['approvals']);
    assert.match(
      listed.stdout,
      /^1\. run_command: the command printf ok \(approved 2026-01-01T00:00:00Z\)$/m,
      listed.stdout,
    );
    const effective = await runJp(sandbox, ['config', 'show', '--effective', 'run_command']);
    assert.match(effective.stdout, /approved by you, always in this workspace: run_command: the command printf ok/);
    assert.equal((await headless(sandbox, 'printf ok')).tools[0].status, 'ok');
    assert.equal(
      (await headless(sandbox, 'printf ok now')).tools[0].status,
      'denied',
      'an exact command covers itself only',
    );
    const revoked = await runJp(sandbox, ['approvals', 'revoke', '1']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stderr, /Revoked: run_command: the command printf ok/);
    assert.equal((await headless(sandbox, 'printf ok')).tools[0].status, 'denied');
    const wrong = await runJp(sandbox, ['approvals', 'revoke', '7']);
    assert.equal(wrong.code, 2, wrong.stderr);
  });

  it('the model cannot write one: the file tools and the sandbox refuse the store file', async () => {
    const sandbox = cleanup.sandbox();
    await headless(sandbox, 'true');
    const store = storeOf(sandbox);
    const rule = JSON.stringify({
      version: 1,
      approvals: [{ rule: { kind: 'tool', tool: 'run_command' }, approved_at: 'x' }],
    });
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { tool_call: { name: 'fs_create_file', arguments: { path: store, content: rule } } },
            command(`printf '%s' '${rule}' > ${store}`),
          ],
        },
        { parts: [{ text: 'Tried.' }] },
      ],
    });
    const run = await runJp(sandbox, [
      'query',
      '--json',
      '--non-interactive',
      ...script,
      '-c',
      'conversation.tools.defaults.detached="auto"',
      'go',
    ]);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    assert.deepEqual(
      result.tools.map((tool: { status: string }) => tool.status),
      ['error', 'error'],
      JSON.stringify(result.tools),
    );
    assert.equal(existsSync(store), false, 'no store was written');
  });
});
