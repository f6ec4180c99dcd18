/**
 * A real ACP client drives `jp acp` end to end: acpx (npm), as people script agents with it. A
 * prompt streams, a permission is approved and rejected, a write goes through acpx, a turn is
 * cancelled (and Ctrl+C reaches jp acp too), a session made by one acpx process is continued by
 * the next, the mode and the model are changed. Every message jp sent acpx is checked against the
 * SDK's schema. The provider is the local fake (openai-chat), pointed at by the user's config.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acpx, agentMessages, fakeProviderConfig, traffic, validateAgentTraffic } from '../support/acpx.ts';
import { acpProvider } from '../support/acp-session.ts';
import { stepByToolResults, textStep, toolStep, type FakeProvider } from '../support/fake-provider.ts';
import { collect, conversationIds, eventually, readEvents, type Sandbox, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();
const key = { OPENAI_API_KEY: 'sk-test-key-000000000000000000' };
const create = { id: 'call_1', name: 'fs_create_file', arguments: { path: 'hello.txt', content: 'hello\n' } };

function client(sandbox: Sandbox, fake: FakeProvider, agentArguments: string[] = ['-m', 'openai/gpt-test']) {
  fakeProviderConfig(sandbox, fake.baseUrl);
  const driver = acpx(sandbox, agentArguments, key);
  cleanup.add(() => driver.idle());
  return driver;
}

/** The session/update notifications jp sent, as [kind, text or status] pairs. */
function updates(stdout: string): [string, string | undefined][] {
  return agentMessages(traffic(stdout))
    .map(({ message }) => message)
    .filter((message) => message.method === 'session/update')
    .map((message) => {
      const update = (message.params as { update: Record<string, any> }).update;
      return [update.sessionUpdate, update.content?.text ?? update.status];
    });
}

function methodsSent(stdout: string): string[] {
  return agentMessages(traffic(stdout)).flatMap(({ message }) =>
    message.method !== undefined && message.method !== 'session/update' ? [message.method] : [],
  );
}

describe('acpx drives jp acp', () => {
  it('a prompt streams; --approve-all approves the permission; the file is written through acpx (fs/write_text_file)', async () => {
    const fake = await acpProvider(
      cleanup,
      stepByToolResults([
        { parts: [{ text: 'Making ' }, { text: 'the file. ' }, { toolCall: create }] },
        textStep('Made hello.txt.'),
      ]),
    );
    const sandbox = cleanup.sandbox();
    const run = await client(sandbox, fake).run(['--approve-all', 'exec', 'make hello.txt']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(sandbox.read('hello.txt'), 'hello\n');
    assert.deepEqual(methodsSent(run.stdout), ['session/request_permission', 'fs/write_text_file']);
    const chunks = updates(run.stdout).filter(([kind]) => kind === 'agent_message_chunk');
    assert.ok(chunks.length >= 2, 'streamed in pieces');
    assert.equal(chunks.map(([, text]) => text).join(''), 'Making the file. Made hello.txt.');
    assert.deepEqual(
      updates(run.stdout)
        .filter(([kind]) => kind === 'tool_call' || kind === 'tool_call_update')
        .map(([, status]) => status),
      ['pending', 'in_progress', 'completed'],
    );
    assert.match(run.stdout, /"stopReason":"end_turn"/);
    assert.ok(validateAgentTraffic(run.stdout) > 5);
  });

  it('--deny-all rejects the permission: nothing is written, the model hears the user declined', async () => {
    const fake = await acpProvider(cleanup, stepByToolResults([toolStep([create]), textStep('Understood.')]));
    const sandbox = cleanup.sandbox();
    const run = await client(sandbox, fake).run(['--deny-all', 'exec', 'make hello.txt']);
    assert.equal(run.code, 5, `acpx exits 5 when it denied a permission: ${run.stderr}`);
    assert.equal(sandbox.exists('hello.txt'), false);
    assert.deepEqual(methodsSent(run.stdout), ['session/request_permission']);
    assert.match(fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!.content, /declined/);
    assert.deepEqual(
      updates(run.stdout)
        .filter(([kind]) => kind === 'tool_call' || kind === 'tool_call_update')
        .map(([, status]) => status),
      ['pending', 'failed'],
    );
    assert.ok(validateAgentTraffic(run.stdout) > 5);
  });

  it('Ctrl+C in acpx cancels the turn: jp acp answers cancelled, gives the running call its final status, and is not killed', async () => {
    const command = { id: 'call_1', name: 'run_command', arguments: { command: 'sleep 30' } };
    const fake = await acpProvider(cleanup, stepByToolResults([toolStep([command]), textStep('unreachable')]));
    const sandbox = cleanup.sandbox();
    const driver = client(sandbox, fake);
    const child = driver.start(['--approve-all', 'exec', 'sleep a while']);
    const finished = collect(child, ['acpx', 'exec'], 120_000);
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    await eventually('the command running', () => /"status":"in_progress"/.test(seen), 60_000);
    // The terminal's Ctrl+C: SIGINT to acpx's process group, which jp acp (its child) is in.
    process.kill(-child.pid!, 'SIGINT');
    const run = await finished;
    assert.match(run.stdout, /"stopReason":"cancelled"/);
    assert.doesNotMatch(run.stdout + run.stderr, /agent exited|ACP agent exited/i);
    const statuses = updates(run.stdout)
      .filter(([kind]) => kind === 'tool_call' || kind === 'tool_call_update')
      .map(([, status]) => status);
    assert.deepEqual(statuses, ['pending', 'in_progress', 'failed']);
    const [id] = conversationIds(sandbox);
    assert.deepEqual(
      readEvents(sandbox, id!)
        .filter((event) => event.type === 'turn_end')
        .map((event) => event.status),
      ['interrupted'],
    );
    assert.ok(validateAgentTraffic(run.stdout) > 5);
  });

  it('a session made by `acpx sessions new` is continued by later acpx processes; set-mode and set model hold for it', async () => {
    const fake = await acpProvider(cleanup, ((request: { messages: { role: string }[] }) =>
      request.messages.at(-1)!.role === 'tool' ? textStep('Done.') : toolStep([create])) as never);
    const sandbox = cleanup.sandbox();
    const driver = client(sandbox, fake, ['-m', 'openai/gpt-test', '-m', 'openai/gpt-other']);
    const made = await driver.run(['--ttl', '1', 'sessions', 'new']);
    assert.equal(made.code, 0, made.stderr);
    const [sessionId] = conversationIds(sandbox);
    assert.ok(sessionId, 'the session is a conversation');
    assert.match(made.stdout, new RegExp(`"acpxSessionId":"${sessionId}"`));
    await driver.idle();

    // A new acpx process (its queue owner gone): the mode is set on the session it continues.
    const mode = await driver.run(['--ttl', '1', 'set-mode', 'auto']);
    assert.equal(mode.code, 0, mode.stderr);
    const model = await driver.run(['--ttl', '1', 'set', 'model', 'openai/gpt-other']);
    assert.equal(model.code, 0, model.stderr);
    await driver.idle();

    // Auto: jp runs the write without a permission request (acpx would approve one: none is sent).
    const prompted = await driver.run(['--ttl', '1', '--approve-all', 'prompt', 'make hello.txt']);
    assert.equal(prompted.code, 0, prompted.stderr);
    assert.deepEqual(conversationIds(sandbox), [sessionId], 'the same session, continued');
    assert.match(prompted.stdout, /"method":"session\/(resume|load)"/);
    assert.equal(methodsSent(prompted.stdout).includes('session/request_permission'), false);
    assert.equal(sandbox.read('hello.txt'), 'hello\n');
    assert.equal(fake.requests.at(-1)!.body.model, 'gpt-other');
    assert.deepEqual(
      readEvents(sandbox, sessionId!)
        .filter((event) => event.type === 'chat_request')
        .map((event) => event.content),
      ['make hello.txt'],
    );
    for (const run of [made, mode, model, prompted]) validateAgentTraffic(run.stdout);
    await driver.idle();
  });
});
