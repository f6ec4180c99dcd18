/**
 * A new user's first hour (issue: first hour, round two): what jp prints can be pasted back, titles
 * name what was asked, RFD 019's JP_FRONTEND alias holds, and the result says where the run's record is.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { conversationIds, readEvents, runJp, testProvider, useCleanup } from '../support/jp.ts';
import { Screen } from '../support/screen.ts';

const cleanup = useCleanup();

describe('first hour', () => {
  it('the whole `Detached: <cid> (pid N). Watch it with …` line jp printed is accepted by wait, print and attach', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'done' }] }] });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'work']);
    assert.equal(detached.code, 0, detached.stderr);
    const line = detached.stderr.split('\n').find((text) => text.startsWith('Detached: '));
    assert.ok(line, `a Detached line on stderr: ${detached.stderr}`);
    assert.match(line!, /\(pid \d+\)\. Watch it with/);
    const waited = await runJp(sandbox, ['conversation', 'wait', line!]);
    assert.equal(waited.code, 0, waited.stderr);
    const printed = await runJp(sandbox, ['conversation', 'print', line!, '--last']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(printed.stdout, 'done\n');
  });

  it('piped input with a message: the title is the message, not the first line of the input', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    const run = await runJp(sandbox, ['query', ...script, 'explain this'], {
      stdin: 'ERROR 42: disk on fire\nmore log\n',
    });
    assert.equal(run.code, 0, run.stderr);
    const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
    const [conversation] = JSON.parse(listed.stdout) as { title: string }[];
    assert.equal(conversation!.title, 'explain this');
    const piped = await runJp(sandbox, ['query', '--new', ...script], { stdin: 'only piped\nsecond line\n' });
    assert.equal(piped.code, 0, piped.stderr);
    const titles = (
      JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout) as { title: string }[]
    ).map((entry) => entry.title);
    assert.ok(titles.includes('only piped'), `with no message the piped text titles it: ${titles.join(' | ')}`);
  });

  it('JP_FRONTEND=noninteractive at a terminal prompts for nothing, as --non-interactive', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'made.txt', content: 'x' } } }] },
        { parts: [{ text: 'finished' }] },
      ],
    });
    const screen = Screen.jp(sandbox, ['query', ...script, 'make it'], {
      env: { JP_FRONTEND: 'noninteractive' },
      cleanup,
    });
    // A prompt would wait for a key: it fails the test instead of hanging it.
    const prompted = screen.waitFor('Run fs_create_file?').then(
      () => 'prompted',
      () => 'not prompted',
    );
    const outcome = await Promise.race([prompted, screen.exited.then(() => 'exited')]);
    assert.equal(outcome, 'exited', screen.text());
    const { exitCode } = await screen.exited;
    assert.equal(exitCode, 3, screen.text());
    assert.equal(await prompted, 'not prompted');
    assert.equal(sandbox.exists('made.txt'), false);
    const [conversationId] = conversationIds(sandbox);
    const response = readEvents(sandbox, conversationId!).find((event) => event.type === 'inquiry_response');
    assert.equal(response?.by, 'policy');
  });

  it('the JSON result names the conversation log, relative to the workspace root', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    const run = await runJp(sandbox, ['--json', 'query', ...script, 'hi']);
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!) as { log_file: string; conversation_id: string };
    assert.equal(result.log_file, path.join('.jp', 'conversations', result.conversation_id, 'events.ndjson'));
    assert.ok(existsSync(path.join(sandbox.workspace, result.log_file)));
    const failed = await runJp(sandbox, ['--json', 'query', '-m', 'x/y', 'hi']);
    const failedResult = JSON.parse(failed.stdout.trim().split('\n').pop()!) as {
      log_file: string | null;
      conversation_id: string | null;
    };
    assert.equal(
      failedResult.log_file,
      failedResult.conversation_id === null
        ? null
        : path.join('.jp', 'conversations', failedResult.conversation_id, 'events.ndjson'),
    );
  });
});

describe('attaching right after --detach', () => {
  it('shows the user message even when the turn starts after attach connected', async () => {
    const sandbox = cleanup.sandbox();
    // A server that never answers holds the run's start for its time limit, after the server is
    // ready: attach connects before the turn (and its message) is written.
    const userConfig = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp');
    mkdirSync(userConfig, { recursive: true });
    writeFileSync(
      path.join(userConfig, 'config.toml'),
      '[mcp.servers.slow]\ncommand = "sleep"\nargs = ["30"]\nstartup_timeout_secs = 2\n',
    );
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'the answer' }] }] });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'the race message']);
    assert.equal(detached.code, 0, detached.stderr);
    const attached = await runJp(sandbox, ['conversation', 'attach', detached.stdout.trim(), '--read-only']);
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stderr, /> the race message/);
    assert.equal(attached.stdout, 'the answer\n');
  });
});
