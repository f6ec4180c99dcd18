/**
 * What an editor user meets around the turns of `jp acp` (issue 39, points 1–5): where it is
 * started, Ctrl+C at the editor's terminal, cancelled turns that leave nothing open, the editor's
 * own refusals, sessions kept for later, a missing key said at once. The SDK's client drives the
 * real binary; every message it gets is checked against the SDK's schema.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { methods, type SessionNotification } from '@agentclientprotocol/sdk';
import { type Editor, stdoutMessages, textOf } from '../support/acp.ts';
import { acpEditor, acpErrorOf, acpFinish, acpNewSession, acpPrompt, acpProvider } from '../support/acp-session.ts';
import { stepByToolResults, textStep, toolStep } from '../support/fake-provider.ts';
import { conversationIds, eventually, processAlive, readEvents, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

function toolUpdates(editor: Editor, toolCallId: string): SessionNotification['update'][] {
  return editor.updates
    .map((notification) => notification.update)
    .filter(
      (update) =>
        (update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update') &&
        update.toolCallId === toolCallId,
    );
}

/** Where, among everything jp acp wrote, the last update of a call and the prompt's answer are. */
function finalUpdateBeforeAnswer(editor: Editor, toolCallId: string): { update: number; answer: number } {
  const messages = stdoutMessages(editor);
  const lastIndex = (test: (message: (typeof messages)[number]) => boolean): number => {
    for (let index = messages.length - 1; index >= 0; index--) if (test(messages[index]!)) return index;
    return -1;
  };
  const update = lastIndex(
    (message) =>
      message.method === 'session/update' &&
      (message.params as SessionNotification).update.sessionUpdate === 'tool_call_update' &&
      (message.params as { update: { toolCallId: string } }).update.toolCallId === toolCallId,
  );
  const answer = lastIndex(
    (message) => message.method === undefined && editor.sentRequests.get(String(message.id)) === 'session/prompt',
  );
  return { update, answer };
}

describe('jp acp: its lifetime and the edges of a turn', () => {
  it('started in a directory whose .jp/ it must refuse, it never reads that directory: sessions name their own cwd', async () => {
    const fake = await acpProvider(cleanup, [textStep('Hello from elsewhere.')]);
    const sandbox = cleanup.sandbox();
    const launch = path.join(sandbox.root, 'launch');
    mkdirSync(path.join(launch, '.jp'), { recursive: true });
    chmodSync(path.join(launch, '.jp'), 0o775);
    // -v: the logger starts before any session; it must not read the launch directory either.
    const editor = await acpEditor(cleanup, sandbox, fake, { cwd: launch, extra: ['-v'] });
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    assert.equal((await acpPrompt(editor, sessionId, 'hi')).stopReason, 'end_turn');
    assert.equal(textOf(editor, sessionId, 'agent_message_chunk'), 'Hello from elsewhere.');
    await acpFinish(editor);
    assert.doesNotMatch(editor.stderr(), new RegExp(launch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  });

  it("SIGINT to its process group (Ctrl+C at the editor's terminal) does not end it: the editor cancels, jp acp serves on until stdin closes", async () => {
    const fake = await acpProvider(cleanup, ((_request: never, index: number) =>
      index === 0
        ? { parts: [{ text: 'Thinking it over. ' }, { delayMs: 60_000 }, { text: 'never sent' }] }
        : textStep('Still here.')) as never);
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake);
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    const first = acpPrompt(editor, sessionId, 'a long one');
    await eventually('the first chunk', () =>
      textOf(editor, sessionId, 'agent_message_chunk').includes('Thinking it over.'),
    );
    // What the terminal does on Ctrl+C: SIGINT to the foreground process group (jp acp leads its own).
    process.kill(-editor.child.pid!, 'SIGINT');
    await editor.connection.agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await first).stopReason, 'cancelled');
    assert.ok(processAlive(editor.child.pid!), 'jp acp is still running after SIGINT');
    assert.equal((await acpPrompt(editor, sessionId, 'are you there?')).stopReason, 'end_turn');
    assert.match(textOf(editor, sessionId, 'agent_message_chunk'), /Still here\.$/);
    await acpFinish(editor);
  });

  it('a cancelled turn gives a running call its final status before it answers cancelled', async () => {
    const command = { id: 'call_1', name: 'run_command', arguments: { command: 'sleep 30' } };
    const fake = await acpProvider(cleanup, stepByToolResults([toolStep([command]), textStep('unreachable')]));
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake);
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    const running = acpPrompt(editor, sessionId, 'sleep');
    await eventually('the command running', () =>
      toolUpdates(editor, 'call_1').some((update) => 'status' in update && update.status === 'in_progress'),
    );
    await editor.connection.agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await running).stopReason, 'cancelled');
    const last = toolUpdates(editor, 'call_1').at(-1)!;
    assert.equal('status' in last ? last.status : undefined, 'failed');
    const order = finalUpdateBeforeAnswer(editor, 'call_1');
    assert.ok(order.update !== -1 && order.update < order.answer, JSON.stringify(order));
    await acpFinish(editor);
  });

  it('a cancelled turn gives a call whose permission request was withdrawn its final status before it answers cancelled', async () => {
    const create = { id: 'call_1', name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a\n' } };
    const fake = await acpProvider(cleanup, stepByToolResults([toolStep([create]), textStep('unreachable')]));
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake);
    // The person has not answered yet: the request is open until jp withdraws it.
    editor.onPermission = (_request, signal) =>
      new Promise((resolve) =>
        signal.addEventListener('abort', () => resolve({ outcome: { outcome: 'cancelled' } }), { once: true }),
      );
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    const asking = acpPrompt(editor, sessionId, 'make a.txt');
    await eventually('the permission request', () => editor.permissions.length === 1);
    await editor.connection.agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await asking).stopReason, 'cancelled');
    const statuses = toolUpdates(editor, 'call_1').map((update) => ('status' in update ? update.status : undefined));
    assert.deepEqual(statuses, ['pending', 'failed']);
    const order = finalUpdateBeforeAnswer(editor, 'call_1');
    assert.ok(order.update !== -1 && order.update < order.answer, JSON.stringify(order));
    assert.equal(sandbox.exists('a.txt'), false);
    await acpFinish(editor);
  });

  it('the editor\'s reason for refusing a write reaches the model, not a bare "Internal error"', async () => {
    const create = { id: 'call_1', name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a\n' } };
    const fake = await acpProvider(cleanup, stepByToolResults([toolStep([create]), textStep('Understood.')]));
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake, {
      extra: ['-c', 'conversation.tools.fs_create_file.run="unattended"'],
      capabilities: { fs: { readTextFile: true, writeTextFile: true } },
    });
    editor.refuseWrites = 'Permission denied for fs/write_text_file';
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    assert.equal((await acpPrompt(editor, sessionId, 'make a.txt')).stopReason, 'end_turn');
    assert.equal(editor.fileWrites.length, 1);
    const result = fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!;
    assert.match(result.content, /Permission denied for fs\/write_text_file/);
    assert.equal(sandbox.exists('a.txt'), false);
    await acpFinish(editor);
  });

  it('a session made without a prompt outlives the connection: another editor process loads it by its id and prompts', async () => {
    const fake = await acpProvider(cleanup, [textStep('Picked up.')]);
    const sandbox = cleanup.sandbox();
    const first = await acpEditor(cleanup, sandbox, fake);
    const sessionId = await acpNewSession(first, sandbox.workspace);
    await acpFinish(first);
    assert.deepEqual(conversationIds(sandbox), [sessionId]);

    const second = await acpEditor(cleanup, sandbox, fake);
    const loaded = await second.connection.agent.request(methods.agent.session.load, {
      sessionId,
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    assert.equal(loaded.modes?.currentModeId, 'ask');
    assert.equal((await acpPrompt(second, sessionId, 'hello again')).stopReason, 'end_turn');
    assert.equal(textOf(second, sessionId, 'agent_message_chunk'), 'Picked up.');
    assert.equal(readEvents(sandbox, sessionId).filter((event) => event.type === 'chat_request').length, 1);
    await acpFinish(second);
  });

  it("a missing API key is ACP's authentication error at session/new, naming the variable; nothing is created", async () => {
    const fake = await acpProvider(cleanup, [textStep('unused')]);
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake, { env: { OPENAI_API_KEY: '' } });
    const refused = await acpErrorOf(
      editor.connection.agent.request(methods.agent.session.new, { cwd: sandbox.workspace, mcpServers: [] }),
    );
    assert.equal(refused.code, -32000);
    assert.match(refused.message, /OPENAI_API_KEY is not set: model openai\/gpt-test needs it/);
    assert.equal((refused.data as { code: string }).code, 'api_key_missing');
    assert.match((refused.data as { hint: string }).hint, /export OPENAI_API_KEY=/);
    assert.deepEqual(conversationIds(sandbox), []);
    assert.equal(existsSync(path.join(sandbox.workspace, '.jp', 'conversations')), true);
    await acpFinish(editor);
  });
});
