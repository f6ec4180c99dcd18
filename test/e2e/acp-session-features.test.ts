/**
 * What an ACP client offers, mapped onto what jp already is (issue 39, point 2): session modes are
 * policy and sandbox presets, the model menu is the conversation's `assistant.model`, slash
 * commands are jp's conversation commands, the editor's MCP servers are connected like configured
 * ones, and each request's usage is a `usage_update`. The SDK's client drives the real binary.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { methods } from '@agentclientprotocol/sdk';
import { textOf, updateKinds } from '../support/acp.ts';
import {
  acpEditor,
  acpErrorOf,
  acpFinish,
  acpModelSettings,
  acpNewSession,
  acpPrompt,
  acpProvider,
} from '../support/acp-session.ts';
import { stepByToolResults, textStep, toolStep } from '../support/fake-provider.ts';
import { eventually, readEvents, runJp, useCleanup } from '../support/jp.ts';
import { everythingEntry } from '../support/mcp.ts';

const cleanup = useCleanup();

function toolResults(fake: { requests: { messages: { toolResults: { content: string }[] }[] }[] }): string[] {
  return fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults.map((result) => result.content));
}

describe('jp acp: what a session offers', () => {
  it('modes: "auto" runs tools without asking, "read-only" writes nothing, "ask" asks again; a mode is never recorded in the conversation', async () => {
    const create = (id: string, file: string) => ({
      id,
      name: 'fs_create_file',
      arguments: { path: file, content: `${file}\n` },
    });
    const touch = { id: 'call_t', name: 'run_command', arguments: { command: 'touch touched.txt' } };
    const fake = await acpProvider(cleanup, ((request: { messages: { role: string; text: string }[] }) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return textStep('Done.');
      const wanted = last.text;
      if (wanted === 'auto') return toolStep([create('call_a', 'auto.txt')]);
      if (wanted === 'read-only') return toolStep([create('call_r', 'read-only.txt'), touch]);
      return toolStep([create('call_k', 'ask.txt')]);
    }) as never);
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake);
    const created = await editor.connection.agent.request(methods.agent.session.new, {
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    const sessionId = created.sessionId;
    assert.equal(created.modes?.currentModeId, 'ask');
    assert.deepEqual(
      created.modes?.availableModes.map((mode) => mode.id),
      ['ask', 'auto', 'read-only'],
    );

    await editor.connection.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'auto' });
    assert.equal((await acpPrompt(editor, sessionId, 'auto')).stopReason, 'end_turn');
    assert.equal(sandbox.read('auto.txt'), 'auto.txt\n');
    assert.equal(editor.permissions.length, 0, 'auto: nothing asked');

    // The same mode through the config option an editor's mode menu uses.
    const switched = await editor.connection.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: 'mode',
      value: 'read-only',
    });
    assert.equal(switched.configOptions.find((option) => option.id === 'mode')?.currentValue, 'read-only');
    editor.onPermission = async (request) => ({
      outcome: {
        outcome: 'selected',
        optionId: request.options.find((option) => option.kind === 'allow_once')!.optionId,
      },
    });
    assert.equal((await acpPrompt(editor, sessionId, 'read-only')).stopReason, 'end_turn');
    assert.equal(sandbox.exists('read-only.txt'), false);
    assert.equal(sandbox.exists('touched.txt'), false, 'the command ran in a read-only sandbox');
    const [skipped, touched] = toolResults(fake).slice(-2);
    assert.match(skipped!, /Not run: conversation\.tools\.fs_create_file\.run = "skip"/);
    assert.match(touched!, /Read-only file system|Permission denied/);

    await editor.connection.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'ask' });
    const asked = editor.permissions.length;
    assert.equal((await acpPrompt(editor, sessionId, 'ask')).stopReason, 'end_turn');
    assert.equal(editor.permissions.length, asked + 1, 'ask: asked again');
    assert.equal(sandbox.read('ask.txt'), 'ask.txt\n');
    assert.ok(updateKinds(editor, sessionId).includes('current_mode_update'));

    const recorded = readEvents(sandbox, sessionId).filter((event) => event.type === 'config_delta');
    for (const event of recorded) {
      assert.equal(JSON.stringify(event.delta).includes('unattended'), false, JSON.stringify(event.delta));
      assert.equal(JSON.stringify(event.delta).includes('read-only'), false, JSON.stringify(event.delta));
    }
    const unknown = await acpErrorOf(
      editor.connection.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'yolo' }),
    );
    assert.equal(unknown.code, -32602);
    assert.match(unknown.message, /no session mode "yolo"/);
    await acpFinish(editor);
  });

  it("the model menu is the conversation's assistant.model: every -m is offered, a choice is recorded and kept by load and jp query", async () => {
    const fake = await acpProvider(cleanup, (() => textStep('ok')) as never);
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake, {
      extra: ['-m', 'openai/gpt-other', '-m', 'anthropic/claude-x'],
    });
    const created = await editor.connection.agent.request(methods.agent.session.new, {
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    const sessionId = created.sessionId;
    const model = created.configOptions?.find((option) => option.id === 'model');
    assert.equal(model?.category, 'model');
    assert.equal(model?.currentValue, 'openai/gpt-test');
    assert.deepEqual(
      model?.type === 'select' ? model.options.map((option) => ('value' in option ? option.value : undefined)) : [],
      ['openai/gpt-test', 'openai/gpt-other', 'anthropic/claude-x'],
    );
    assert.equal((await acpPrompt(editor, sessionId, 'first')).stopReason, 'end_turn');
    assert.equal(fake.requests.at(-1)!.body.model, 'gpt-test');

    const chosen = await editor.connection.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: 'model',
      value: 'openai/gpt-other',
    });
    assert.equal(chosen.configOptions.find((option) => option.id === 'model')?.currentValue, 'openai/gpt-other');
    assert.equal((await acpPrompt(editor, sessionId, 'second')).stopReason, 'end_turn');
    assert.equal(fake.requests.at(-1)!.body.model, 'gpt-other');
    // A model whose key is missing is refused at once, as ACP's authentication error; the choice stays.
    const noKey = await acpErrorOf(
      editor.connection.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: 'model',
        value: 'anthropic/claude-x',
      }),
    );
    assert.equal(noKey.code, -32000);
    assert.match(noKey.message, /ANTHROPIC_API_KEY is not set/);
    const notOffered = await acpErrorOf(
      editor.connection.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: 'model',
        value: 'openai/gpt-secret',
      }),
    );
    assert.equal(notOffered.code, -32602);
    await acpFinish(editor);

    // The conversation records the model chosen, as `jp query -m` does: a later session and jp query keep it.
    const settings = acpModelSettings(fake);
    const withoutDash = settings.args.filter((argument, index, all) => argument !== '-m' && all[index - 1] !== '-m');
    const continued = await runJp(sandbox, ['query', '--id', sessionId, ...withoutDash, 'third'], {
      env: settings.env,
    });
    assert.equal(continued.code, 0, continued.stderr);
    assert.equal(fake.requests.at(-1)!.body.model, 'gpt-other');
  });

  it("slash commands: the session lists /compact, /diff and /undo; /diff shows a turn's change, /undo puts it back, /compact summarises", async () => {
    const create = { id: 'call_1', name: 'fs_create_file', arguments: { path: 'made.txt', content: 'made\n' } };
    const fake = await acpProvider(cleanup, ((request: { messages: { role: string; text: string }[] }) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return textStep('Made it.');
      if (/summar/i.test(request.messages[0]?.text ?? '') || /summar/i.test(last.text)) return textStep('A summary.');
      return last.text === 'make it' ? toolStep([create]) : textStep('Fine.');
    }) as never);
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake);
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    // Sent right after the session/new response.
    const listed = await eventually('the commands', () =>
      editor.updates.find((notification) => notification.update.sessionUpdate === 'available_commands_update'),
    );
    assert.deepEqual(
      listed?.update.sessionUpdate === 'available_commands_update'
        ? listed.update.availableCommands.map((command) => command.name)
        : [],
      ['compact', 'diff', 'undo'],
    );
    assert.equal((await acpPrompt(editor, sessionId, 'make it')).stopReason, 'end_turn');
    assert.equal(sandbox.read('made.txt'), 'made\n');
    const requestsBefore = fake.requests.length;

    assert.equal((await acpPrompt(editor, sessionId, '/diff')).stopReason, 'end_turn');
    assert.match(textOf(editor, sessionId, 'agent_message_chunk'), /```diff\n[\s\S]*\+made\n[\s\S]*```/);
    assert.equal((await acpPrompt(editor, sessionId, '/undo')).stopReason, 'end_turn');
    assert.equal(sandbox.exists('made.txt'), false);
    assert.match(textOf(editor, sessionId, 'agent_message_chunk'), /Undid turn 1/);
    assert.equal(fake.requests.length, requestsBefore, 'a command is not a turn: the model was not asked');

    assert.equal((await acpPrompt(editor, sessionId, 'one more')).stopReason, 'end_turn');
    assert.equal((await acpPrompt(editor, sessionId, '/compact')).stopReason, 'end_turn');
    assert.ok(readEvents(sandbox, sessionId).some((event) => event.type === 'compaction'));
    // Bad input to a command is the prompt's error; a slash that names no command is an ordinary prompt.
    const bad = await acpErrorOf(acpPrompt(editor, sessionId, '/undo sideways'));
    assert.equal(bad.code, -32602);
    assert.match(bad.message, /\/undo does not take "sideways"/);
    const before = fake.requests.length;
    assert.equal((await acpPrompt(editor, sessionId, '/etc/hosts is odd')).stopReason, 'end_turn');
    assert.equal(fake.requests.length, before + 1);
    await acpFinish(editor);
  });

  it('usage: each request of the agent loop is a usage_update of the context window', async () => {
    const fake = await acpProvider(cleanup, [textStep('Counted.')]);
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake, { extra: ['-c', 'assistant.context_window=50000'] });
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    assert.equal((await acpPrompt(editor, sessionId, 'count')).stopReason, 'end_turn');
    const usage = readEvents(sandbox, sessionId).find((event) => event.type === 'usage')!;
    const updates = editor.updates
      .map((notification) => notification.update)
      .filter((update) => update.sessionUpdate === 'usage_update');
    assert.deepEqual(updates, [
      {
        sessionUpdate: 'usage_update',
        used: usage.usage.input_tokens + usage.usage.output_tokens,
        size: 50000,
      },
    ]);
    assert.ok(usage.usage.input_tokens > 0);
    await acpFinish(editor);
  });

  it("the editor's MCP servers are connected like configured ones: their tools ask first, and the conversation records neither them nor their env", async () => {
    const echo = { id: 'call_1', name: 'mcp__everything__echo', arguments: { message: 'hello through the editor' } };
    const fake = await acpProvider(cleanup, stepByToolResults([toolStep([echo]), textStep('Echoed.')]));
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake);
    const sessionId = await acpNewSession(editor, sandbox.workspace, [
      {
        name: 'everything',
        command: process.execPath,
        args: [everythingEntry, 'stdio'],
        env: [{ name: 'EDITOR_ONLY_TOKEN', value: 'editor-secret-value' }],
      },
    ]);
    assert.equal((await acpPrompt(editor, sessionId, 'echo it')).stopReason, 'end_turn');
    assert.equal(editor.permissions.length, 1, 'an MCP tool asks (run = "ask")');
    assert.equal(editor.permissions[0]!.toolCall.toolCallId, 'call_1');
    assert.match(toolResults(fake)[0]!, /hello through the editor/);
    const log = JSON.stringify(readEvents(sandbox, sessionId));
    assert.equal(log.includes('editor-secret-value'), false);
    assert.equal(log.includes(everythingEntry), false, 'the server is not recorded in the conversation');
    await acpFinish(editor);
  });
});
