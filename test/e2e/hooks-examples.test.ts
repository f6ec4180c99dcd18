/**
 * The worked examples of examples/hooks/ (README "Hooks"), each run by the real binary as the
 * README configures it: a push notification (to a local server), an approval server a phone could
 * open (its page answers a detached run's PermissionRequest), a formatter after edits, an `rm -rf`
 * guard and an audit log.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { type FakeProvider, startCallingProvider, toolResultsSent } from '../support/fake-provider.ts';
import { hookEntry, outsideFile, recorded, writeUserConfig } from '../support/hooks.ts';
import {
  conversationIds,
  eventually,
  fakeModelArguments,
  readEvents,
  repositoryRoot,
  runJp,
  type Sandbox,
  startJp,
  collect,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();
const examples = path.join(repositoryRoot, 'examples', 'hooks');

const providerCalling = (calls: { name: string; arguments: unknown }[]): Promise<FakeProvider> =>
  startCallingProvider(cleanup, calls);

const toolResults = toolResultsSent;

function query(sandbox: Sandbox, provider: FakeProvider, extra: string[], env: NodeJS.ProcessEnv = {}) {
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  return runJp(sandbox, ['query', '--non-interactive', ...model.args, ...extra, 'go'], {
    env: { ...model.env, ...env },
  });
}

describe('examples/hooks/notify.mjs', () => {
  it('posts "jp is waiting for you" to $JP_NOTIFY_URL when a detached run defers', async () => {
    const received: { title: string | undefined; body: string }[] = [];
    const server = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      received.push({ title: request.headers.title as string | undefined, body });
      response.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.add(() => server.close());
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, hookEntry('Notification', `node ${path.join(examples, 'notify.mjs')}`));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'true' } }]);
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jp-topic`;
    const detached = await runJp(sandbox, ['query', '--detach', ...model.args, 'go'], {
      env: { ...model.env, JP_NOTIFY_URL: url },
    });
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    await eventually('the notification arrived', () => received.length > 0, 60_000);
    assert.equal(received[0]!.title, 'jp is waiting for you');
    assert.match(received[0]!.body, /run_command \(run_tool\) needs an answer/);
    assert.match(received[0]!.body, new RegExp(conversationId));
  });
});

/** Starts the approval server on a free port; resolves with its base URL. */
async function approvalServer(token: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(examples, 'approval-server.mjs'), '--port', '0'], {
    env: { PATH: process.env.PATH, JP_APPROVAL_TOKEN: token },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanup.add(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await eventually('the approval server listens', () => /127\.0\.0\.1:(\d+)\//.exec(output)?.[1], 60_000);
  return { url: `http://127.0.0.1:${port}`, process: child };
}

describe('examples/hooks/approval-server.mjs and approval-hook.mjs', () => {
  it('a detached run waits for the page; Approve on the page runs the call, recorded by the hook', async () => {
    const token = 'test-token-0123456789';
    const server = await approvalServer(token);
    assert.equal((await fetch(`${server.url}/`)).status, 401, 'nothing without the token');
    const sandbox = cleanup.sandbox();
    const hook = `node ${path.join(examples, 'approval-hook.mjs')}`;
    writeUserConfig(sandbox, hookEntry('PermissionRequest', hook, { timeout: 120 }));
    const provider = await providerCalling([
      { name: 'run_command', arguments: { command: 'echo "<b>ran</b>" > ran.txt' } },
    ]);
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const child = startJp(sandbox, ['query', '--non-interactive', ...model.args, 'go'], {
      env: { ...model.env, JP_APPROVAL_URL: server.url, JP_APPROVAL_TOKEN: token },
    });
    const finished = collect(child, ['query'], 120_000);
    const headers = { authorization: `Bearer ${token}` };
    const [pending] = await eventually(
      'the request is on the page',
      async () => {
        const list = (await (await fetch(`${server.url}/api/requests`, { headers })).json()) as { id: string }[];
        return list.length > 0 ? list : undefined;
      },
      60_000,
    );
    const page = await (await fetch(`${server.url}/?token=${token}`)).text();
    assert.match(page, /run_command/);
    assert.match(page, /echo \\&quot;&lt;b&gt;ran&lt;\/b&gt;\\&quot; &gt; ran\.txt/, 'the input is shown, escaped');
    assert.match(page, /<button name="behavior" value="allow">Approve<\/button>/);
    assert.equal(sandbox.exists('ran.txt'), false, 'nothing runs before the page answers');
    // What the phone's browser sends when Approve is tapped.
    const tapped = await fetch(`${server.url}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, id: pending!.id, behavior: 'allow' }).toString(),
      redirect: 'manual',
    });
    assert.equal(tapped.status, 303);
    const result = await finished;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('ran.txt'), '<b>ran</b>\n');
    const [conversationId] = conversationIds(sandbox);
    const response = readEvents(sandbox, conversationId!).find((event) => event.type === 'inquiry_response');
    assert.deepEqual([response!.by, response!.hook, response!.answer], ['hook', hook, 'run']);
    assert.match(response!.reason, /approved on the approval page/);
  });

  it('Deny on the page refuses the call; with the server down the policy decides', async () => {
    const token = 'test-token-9876543210';
    const server = await approvalServer(token);
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, hookEntry('PermissionRequest', `node ${path.join(examples, 'approval-hook.mjs')}`));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'echo ran > ran.txt' } }]);
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const env = { ...model.env, JP_APPROVAL_URL: server.url, JP_APPROVAL_TOKEN: token };
    const finished = collect(
      startJp(sandbox, ['query', '--non-interactive', ...model.args, 'go'], { env }),
      [],
      120_000,
    );
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const [pending] = await eventually(
      'the request is on the page',
      async () => {
        const list = (await (await fetch(`${server.url}/api/requests`, { headers })).json()) as { id: string }[];
        return list.length > 0 ? list : undefined;
      },
      60_000,
    );
    await fetch(`${server.url}/api/requests/${pending!.id}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ behavior: 'deny', message: 'not now' }),
    });
    const denied = await finished;
    assert.equal(denied.code, 0, denied.stderr);
    assert.equal(sandbox.exists('ran.txt'), false);
    assert.match(toolResults(provider)[0]!, /denied it \(it said: not now\)/);
    server.process.kill('SIGKILL');
    await once(server.process, 'exit');
    const fallen = await query(
      sandbox,
      await providerCalling([{ name: 'run_command', arguments: { command: 'true' } }]),
      [],
      {
        JP_APPROVAL_URL: server.url,
        JP_APPROVAL_TOKEN: token,
      },
    );
    assert.equal(fallen.code, 3, 'the hook could not answer: the policy refused');
    assert.match(fallen.stderr, /approval-hook\.mjs` \(PermissionRequest\) failed, exit code 1/);
  });
});

describe('examples/hooks/format-after-edit.sh', () => {
  it('formats the file a tool wrote; a formatter that fails tells the model', async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(
      sandbox,
      hookEntry('PostToolUse', path.join(examples, 'format-after-edit.sh'), { matcher: 'Write|Edit' }),
    );
    const provider = await providerCalling([
      { name: 'fs_create_file', arguments: { path: 'notes.txt', content: 'one   \ntwo\t\n' } },
    ]);
    const write = ['-c', 'conversation.tools.fs_create_file.run="unattended"'];
    const result = await query(sandbox, provider, write, { FORMATTER: 'sed -i s/[[:space:]]*$//' });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('notes.txt'), 'one\ntwo\n');
    const failing = await providerCalling([{ name: 'fs_create_file', arguments: { path: 'b.txt', content: 'x' } }]);
    assert.equal((await query(sandbox, failing, write, { FORMATTER: 'false' })).code, 0);
    assert.match(toolResults(failing).at(-1)!, /the formatter \(false\) failed on .*b\.txt/);
  });
});

describe('examples/hooks/block-rm-rf.sh', () => {
  const guard = path.join(examples, 'block-rm-rf.sh');
  const verdict = (command: string): number | null =>
    spawnSync(guard, { input: JSON.stringify({ tool_name: 'Bash', tool_input: { command } }) }).status;

  it('blocks recursive forced removal in its forms, and nothing else', () => {
    for (const command of [
      'rm -rf build',
      'rm -fr /',
      'rm -r -f x',
      'ls && sudo rm -Rf /tmp/x',
      'rm --recursive --force d',
    ])
      assert.equal(verdict(command), 2, command);
    for (const command of ['rm -f x', 'rm -r dir', 'echo rm -rf', 'ls -rf', 'git rm -r --cached x'])
      assert.equal(verdict(command), 0, command);
  });

  it('through jp: the call is blocked and the model hears why', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('build/keep.txt', 'kept');
    writeUserConfig(sandbox, hookEntry('PreToolUse', guard, { matcher: 'Bash' }));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'rm -rf build' } }]);
    const result = await query(sandbox, provider, ['-c', 'conversation.tools.run_command.run="unattended"']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('build/keep.txt'), 'kept');
    assert.match(
      toolResults(provider)[0]!,
      /blocked by block-rm-rf\.sh: `rm -rf build` removes files recursively and by force/,
    );
  });
});

describe('examples/hooks/audit-log.sh', () => {
  it('appends one line per tool call', async () => {
    const sandbox = cleanup.sandbox();
    const log = outsideFile(sandbox, 'audit.ndjson');
    writeUserConfig(sandbox, hookEntry('PostToolUse', path.join(examples, 'audit-log.sh')));
    const provider = await providerCalling([
      { name: 'run_command', arguments: { command: 'echo hi' } },
      { name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a' } },
    ]);
    const result = await query(sandbox, provider, ['-c', 'conversation.tools.defaults.run="unattended"'], {
      JP_AUDIT_LOG: log,
    });
    assert.equal(result.code, 0, result.stderr);
    const [conversationId] = conversationIds(sandbox);
    const lines = recorded(log);
    assert.deepEqual(
      lines.map((line) => [line.conversation, line.tool, line.tool_name, line.is_error]),
      [
        [conversationId, 'run_command', 'Bash', false],
        [conversationId, 'fs_create_file', 'Write', false],
      ],
    );
    assert.deepEqual(lines[0]!.input, { command: 'echo hi' });
    assert.match(lines[0]!.time, /^\d{4}-\d\d-\d\dT/);
  });
});
