/**
 * `jp acp` driven as an editor drives it (DESIGN §14): the SDK's own client over the child's stdio,
 * the fake provider behind it. Every test ends by checking that stdout carried nothing but JSON-RPC
 * and that all the agent sent is what the SDK's JSON Schema of ACP v1 allows.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { methods, RequestError, type ClientCapabilities } from '@agentclientprotocol/sdk';
import {
  initialize,
  startEditor,
  stdoutMessages,
  textOf,
  updateKinds,
  validateTraffic,
  type Editor,
} from '../support/acp.ts';
import { stepByToolResults, textStep, toolStep, type FakeProvider } from '../support/fake-provider.ts';
import { acpModelSettings, acpProvider } from '../support/acp-session.ts';
import { conversationIds, eventually, readEvents, runJp, type Sandbox, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

function readdirConversation(sandbox: Sandbox): string {
  const ids = conversationIds(sandbox);
  assert.equal(ids.length, 1);
  return ids[0]!;
}

const provider = (steps: Parameters<typeof acpProvider>[1]): Promise<FakeProvider> => acpProvider(cleanup, steps);
const modelSettings = acpModelSettings;

async function editorFor(
  sandbox: Sandbox,
  fake: FakeProvider,
  extra: string[] = [],
  capabilities: ClientCapabilities = {},
): Promise<Editor> {
  const settings = modelSettings(fake);
  const editor = startEditor(sandbox, { args: [...settings.args, ...extra], env: settings.env });
  cleanup.add(() => editor.close());
  await initialize(editor, capabilities);
  return editor;
}

async function newSession(editor: Editor, cwd: string): Promise<string> {
  return (await editor.connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;
}

function prompt(editor: Editor, sessionId: string, text: string): Promise<{ stopReason: string }> {
  return editor.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

/** The end of every test: stdout held only JSON-RPC, all of it valid ACP by the SDK's schema. */
async function finish(editor: Editor): Promise<void> {
  const code = await editor.close();
  assert.equal(code, 0, editor.stderr());
  assert.ok(validateTraffic(editor) > 0);
}

const createCall = { id: 'call_1', name: 'fs_create_file', arguments: { path: 'hello.txt', content: 'hi there\n' } };

describe('jp acp', () => {
  it('initialize, a new session, a prompt whose tool call asks permission (allowed once): updates in order, end_turn', async () => {
    const fake = await provider(
      stepByToolResults([toolStep([createCall], 'Creating it. '), textStep('Created hello.txt.')]),
    );
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.match(sessionId, /^jp-c\d{16}$/);
    assert.ok(
      existsSync(path.join(sandbox.workspace, '.jp', 'conversations', sessionId)),
      'the session is a conversation of the workspace',
    );

    const response = await prompt(editor, sessionId, 'make hello.txt');
    assert.equal(response.stopReason, 'end_turn');
    assert.equal(sandbox.read('hello.txt'), 'hi there\n');

    // The permission request shows the call: its kind, title, the file and the diff, and three options.
    assert.equal(editor.permissions.length, 1);
    const [permission] = editor.permissions;
    assert.equal(permission!.toolCall.toolCallId, 'call_1');
    assert.equal(permission!.toolCall.kind, 'edit');
    assert.deepEqual(permission!.toolCall.locations, [{ path: path.join(sandbox.workspace, 'hello.txt') }]);
    assert.deepEqual(permission!.toolCall.content, [
      { type: 'diff', path: path.join(sandbox.workspace, 'hello.txt'), oldText: null, newText: 'hi there\n' },
    ]);
    assert.deepEqual(
      permission!.options.map((option) => option.kind),
      ['allow_once', 'allow_always', 'reject_once'],
    );

    // Updates in the order things happened: text, the call, its run, its result, the answer
    // (besides the session's commands and how full the context is, checked elsewhere).
    const kinds = updateKinds(editor, sessionId).filter(
      (kind) => kind !== 'available_commands_update' && kind !== 'usage_update',
    );
    assert.deepEqual(
      kinds.filter((kind, index) => kind !== kinds[index - 1]),
      ['agent_message_chunk', 'tool_call', 'tool_call_update', 'agent_message_chunk'],
    );
    const toolUpdates = editor.updates
      .map((notification) => notification.update)
      .filter((update) => update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update');
    assert.deepEqual(
      toolUpdates.map((update) => [update.sessionUpdate, update.status]),
      [
        ['tool_call', 'pending'],
        ['tool_call_update', 'in_progress'],
        ['tool_call_update', 'completed'],
      ],
    );
    const call = toolUpdates[0] as { title: string; kind: string };
    assert.equal(call.kind, 'edit');
    assert.equal(call.title, 'fs_create_file: hello.txt');
    assert.equal(textOf(editor, sessionId, 'agent_message_chunk'), 'Creating it. Created hello.txt.');
    // The log says a user allowed it.
    const answer = readEvents(sandbox, sessionId).find((event) => event.type === 'inquiry_response');
    assert.equal(answer?.by, 'user');
    assert.equal(answer?.answer, 'run');
    await finish(editor);
  });

  it('a rejected tool call is not run; the model hears the user declined; the call fails', async () => {
    const fake = await provider(stepByToolResults([toolStep([createCall]), textStep('Understood.')]));
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    editor.onPermission = async (request) => ({
      outcome: {
        outcome: 'selected',
        optionId: request.options.find((option) => option.kind === 'reject_once')!.optionId,
      },
    });
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'make hello.txt')).stopReason, 'end_turn');
    assert.equal(sandbox.exists('hello.txt'), false);
    const answer = readEvents(sandbox, sessionId).find((event) => event.type === 'inquiry_response');
    assert.deepEqual([answer?.by, answer?.answer], ['user', 'skip']);
    const last = editor.updates
      .map((notification) => notification.update)
      .filter((update) => update.sessionUpdate === 'tool_call_update')
      .at(-1) as { status: string };
    assert.equal(last.status, 'failed');
    assert.match(fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!.content, /declined/i);
    await finish(editor);
  });

  it('a permission request the editor cancels is a cancelled inquiry: the detached policy (deny) settles it, nothing runs, nothing hangs', async () => {
    const fake = await provider(stepByToolResults([toolStep([createCall]), textStep('Nothing was created.')]));
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    editor.onPermission = async () => ({ outcome: { outcome: 'cancelled' } });
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'make hello.txt')).stopReason, 'end_turn');
    assert.equal(sandbox.exists('hello.txt'), false);
    assert.equal(editor.permissions.length, 1, 'asked once, not again after the cancel');
    const answer = readEvents(sandbox, sessionId).find((event) => event.type === 'inquiry_response');
    assert.deepEqual([answer?.by, answer?.action], ['policy', 'Fail']);
    assert.match(
      fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!.content,
      /not run: no user is available/,
    );
    await finish(editor);
  });

  it('"allow for this turn" runs the tool again in the same turn without asking', async () => {
    const second = { id: 'call_2', name: 'fs_create_file', arguments: { path: 'two.txt', content: '2' } };
    const fake = await provider(
      stepByToolResults([toolStep([createCall]), toolStep([second]), textStep('Both made.')]),
    );
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    editor.onPermission = async (request) => ({
      outcome: {
        outcome: 'selected',
        optionId: request.options.find((option) => option.kind === 'allow_always')!.optionId,
      },
    });
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'make two files')).stopReason, 'end_turn');
    assert.equal(sandbox.read('two.txt'), '2');
    assert.equal(editor.permissions.length, 1);
    await finish(editor);
  });

  it('session/cancel mid-stream stops the turn (saved, resumable: cancelled); the next prompt goes on from it', async () => {
    const fake = await provider(((_request: never, index: number) =>
      index === 0
        ? { parts: [{ text: 'Part one. ' }, { delayMs: 60_000 }, { text: 'never sent' }] }
        : textStep('Second answer.')) as never);
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    const sessionId = await newSession(editor, sandbox.workspace);
    const first = prompt(editor, sessionId, 'first question');
    await eventually('the first text chunk', () =>
      textOf(editor, sessionId, 'agent_message_chunk').includes('Part one.'),
    );
    await editor.connection.agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await first).stopReason, 'cancelled');
    const stopped = readEvents(sandbox, sessionId).filter((event) => event.type === 'turn_end');
    assert.deepEqual(
      stopped.map((event) => [event.status, event.signal]),
      [['interrupted', 'SIGINT']],
    );

    assert.equal((await prompt(editor, sessionId, 'second question')).stopReason, 'end_turn');
    assert.ok(textOf(editor, sessionId, 'agent_message_chunk').endsWith('Second answer.'));
    const userMessages = fake.requests
      .at(-1)!
      .messages.filter((message) => message.role === 'user')
      .map((message) => message.text);
    assert.deepEqual(userMessages, ['first question', 'second question']);
    assert.equal(readEvents(sandbox, sessionId).at(-1)!.status, 'completed');
    await finish(editor);
  });

  it('an editor opening many sessions, each prompted, gets no warning from jp on stderr (one writer per stream, not one per session)', async () => {
    const fake = await provider(Array.from({ length: 12 }, () => textStep('ok')));
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    for (let index = 0; index < 12; index++) {
      const sessionId = await newSession(editor, sandbox.workspace);
      if (index % 4 === 0) assert.equal((await prompt(editor, sessionId, 'hi')).stopReason, 'end_turn');
    }
    await finish(editor);
    assert.doesNotMatch(editor.stderr(), /Warning/);
  });

  it('session/load replays a conversation made by jp query, then takes a prompt; jp query --id continues the session', async () => {
    const fake = await provider(((request: { messages: { role: string }[] }) =>
      textStep(`Answer ${request.messages.filter((message) => message.role === 'user').length}.`)) as never);
    const sandbox = cleanup.sandbox();
    const settings = modelSettings(fake);
    const made = await runJp(sandbox, ['query', ...settings.args, 'hello from a terminal'], { env: settings.env });
    assert.equal(made.code, 0, made.stderr);
    const conversationId = readdirConversation(sandbox);

    const editor = await editorFor(sandbox, fake);
    const loaded = await editor.connection.agent.request(methods.agent.session.load, {
      sessionId: conversationId,
      cwd: sandbox.workspace,
      mcpServers: [],
    });
    assert.deepEqual(loaded.modes?.currentModeId, 'ask');
    assert.deepEqual(
      loaded.configOptions?.map((option) => [option.id, option.currentValue]),
      [
        ['mode', 'ask'],
        ['model', 'openai/gpt-test'],
      ],
    );
    assert.equal(textOf(editor, conversationId, 'user_message_chunk'), 'hello from a terminal');
    assert.equal(textOf(editor, conversationId, 'agent_message_chunk'), 'Answer 1.');
    assert.equal((await prompt(editor, conversationId, 'hello from the editor')).stopReason, 'end_turn');
    assert.equal(textOf(editor, conversationId, 'agent_message_chunk'), 'Answer 1.Answer 2.');
    await finish(editor);

    const continued = await runJp(
      sandbox,
      ['query', '--id', conversationId, ...settings.args, 'back at the terminal'],
      { env: settings.env },
    );
    assert.equal(continued.code, 0, continued.stderr);
    assert.equal(continued.stdout.trim(), 'Answer 3.');
    assert.deepEqual(
      fake.requests
        .at(-1)!
        .messages.filter((message) => message.role === 'user')
        .map((message) => message.text),
      ['hello from a terminal', 'hello from the editor', 'back at the terminal'],
    );
  });

  it('a conversation held by another process is a JSON-RPC error naming the holder', async () => {
    const fake = await provider([{ parts: [{ delayMs: 60_000 }, { text: 'late' }] }]);
    const sandbox = cleanup.sandbox();
    const settings = modelSettings(fake);
    const detached = await runJp(sandbox, ['query', '--detach', ...settings.args, 'take your time'], {
      env: settings.env,
    });
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    try {
      await refusedWhileHeld(sandbox, fake, conversationId);
    } finally {
      await runJp(sandbox, ['conversation', 'kill', '--force', conversationId]);
    }
  });

  async function refusedWhileHeld(sandbox: Sandbox, fake: FakeProvider, conversationId: string): Promise<void> {
    const holder = JSON.parse(
      readFileSync(path.join(sandbox.userDirectory(), 'locks', `${conversationId}.lock`), 'utf8'),
    ) as { pid: number };

    const editor = await editorFor(sandbox, fake);
    const refused = await editor.connection.agent
      .request(methods.agent.session.load, { sessionId: conversationId, cwd: sandbox.workspace, mcpServers: [] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    assert.ok(refused instanceof RequestError, `expected a JSON-RPC error, got ${String(refused)}`);
    assert.match(
      refused.message,
      new RegExp(`conversation ${conversationId} is locked by pid ${holder.pid} \\(a detached jp query`),
    );
    assert.deepEqual((refused.data as { code: string; exit_code: number }).exit_code, 5);
    assert.match((refused.data as { hint: string }).hint, /jp conversation kill/);
    await finish(editor);
  }

  it("an untrusted workspace config: its keys are ignored, and the session's first update says which", async () => {
    const fake = await provider(stepByToolResults([toolStep([createCall]), textStep('Done.')]));
    const sandbox = cleanup.sandbox({ config: '[conversation.tools.defaults]\nrun = "unattended"\n' });
    const editor = await editorFor(sandbox, fake);
    const sessionId = await newSession(editor, sandbox.workspace);
    await eventually('the first update', () => editor.updates.length > 0);
    const first = editor.updates[0]!;
    assert.equal(first.sessionId, sessionId);
    assert.equal(first.update.sessionUpdate, 'agent_message_chunk');
    const text = (first.update as { content: { text: string } }).content.text;
    assert.match(
      text,
      /ignoring conversation\.tools\.defaults\.run in .*config\.toml: this workspace config is not trusted/,
    );
    assert.match(text, /jp trust/);
    // Sent after the session/new response, so the editor knows the session it belongs to.
    const lines = stdoutMessages(editor);
    const response = lines.findIndex(
      (message) => (message.result as { sessionId?: string } | undefined)?.sessionId === sessionId,
    );
    const update = lines.findIndex((message) => message.method === 'session/update');
    assert.ok(
      response !== -1 && response < update,
      `the response (line ${response}) comes before the first update (line ${update})`,
    );
    // The loosening it asked for is not applied: the tool still asks.
    assert.equal((await prompt(editor, sessionId, 'make hello.txt')).stopReason, 'end_turn');
    assert.equal(editor.permissions.length, 1);
    await finish(editor);
  });

  it('stdout carries nothing but JSON-RPC, with tracing at its loudest and the run saying things (a retry)', async () => {
    const fake = await provider([{ status: 500 }, textStep('Fine after a retry.')]);
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake, ['-vvvvv', '-c', 'assistant.request.max_retries=2']);
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'hi')).stopReason, 'end_turn');
    assert.equal(textOf(editor, sessionId, 'agent_message_chunk'), 'Fine after a retry.');
    assert.equal(fake.requests.length, 2, 'the run retried');
    const unused = await newSession(editor, sandbox.workspace);
    const listed = await editor.connection.agent.request(methods.agent.session.list, { cwd: sandbox.workspace });
    assert.deepEqual(
      listed.sessions.map((session) => [session.sessionId, session.title]),
      [[sessionId, 'hi']],
      'a session with nothing in it is not listed',
    );
    const code = await editor.close();
    assert.equal(code, 0);
    assert.deepEqual(conversationIds(sandbox), [sessionId, unused].sort(), 'a session opened without a prompt stays');
    // Every byte: whole lines, each one JSON-RPC 2.0.
    const messages = stdoutMessages(editor);
    assert.equal(
      Buffer.byteLength(messages.map((message) => JSON.stringify(message) + '\n').join('')),
      editor.stdout().length,
    );
    assert.ok(validateTraffic(editor) > 0);
  });

  it("stop reasons: the round-trip cap is max_turn_requests; a failed run is a JSON-RPC error with jp's code", async () => {
    const read = { id: 'call_1', name: 'fs_read_file', arguments: { path: 'notes.txt' } };
    const fake = await provider(stepByToolResults([toolStep([read]), textStep('unreachable')]));
    const sandbox = cleanup.sandbox();
    sandbox.write('notes.txt', 'notes');
    const editor = await editorFor(sandbox, fake, ['-c', 'assistant.max_turns=1']);
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'read the notes')).stopReason, 'max_turn_requests');
    await finish(editor);

    const broken = await provider([{ status: 400, body: '{"error":{"message":"bad request from the fake"}}' }]);
    const other = await editorFor(sandbox, broken);
    const otherSession = await newSession(other, sandbox.workspace);
    const failed = await prompt(other, otherSession, 'hi').then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(failed instanceof RequestError);
    assert.equal((failed.data as { exit_code: number }).exit_code, 1);
    await finish(other);
  });

  it('bad requests get clear errors: an unknown session, a relative cwd, a conversation that does not exist', async () => {
    const fake = await provider([textStep('unused')]);
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    const errorOf = (promise: Promise<unknown>): Promise<RequestError> =>
      promise.then(
        () => assert.fail('expected an error'),
        (error: RequestError) => error,
      );
    assert.match(
      (await errorOf(prompt(editor, 'jp-c0000000000000001', 'hi'))).message,
      /no session jp-c0000000000000001/,
    );
    assert.match(
      (
        await errorOf(
          editor.connection.agent.request(methods.agent.session.new, { cwd: 'relative/dir', mcpServers: [] }),
        )
      ).message,
      /not an absolute path/,
    );
    const missing = await errorOf(
      editor.connection.agent.request(methods.agent.session.load, {
        sessionId: 'jp-c1764000000000123',
        cwd: sandbox.workspace,
        mcpServers: [],
      }),
    );
    assert.match(missing.message, /no conversation jp-c1764000000000123 in the workspace/);
    assert.equal(missing.code, -32002);
    // A session id is a conversation id, never a path.
    const escaping = await errorOf(
      editor.connection.agent.request(methods.agent.session.load, {
        sessionId: '../../../etc',
        cwd: sandbox.workspace,
        mcpServers: [],
      }),
    );
    assert.match(escaping.message, /"\.\.\/\.\.\/\.\.\/etc" is not a conversation id/);
    assert.equal(escaping.code, -32602);
    // A broken workspace config is the request's error, naming the file and the key; nothing is created.
    const broken = path.join(sandbox.root, 'broken');
    mkdirSync(path.join(broken, '.jp'), { recursive: true });
    writeFileSync(path.join(broken, '.jp', 'config.toml'), '[assistant]\nmax_turns = "many"\n');
    const badConfig = await errorOf(
      editor.connection.agent.request(methods.agent.session.new, { cwd: broken, mcpServers: [] }),
    );
    assert.match(badConfig.message, /config\.toml/);
    assert.match(badConfig.message, /max_turns/);
    assert.equal((badConfig.data as { exit_code: number }).exit_code, 2);
    assert.equal(existsSync(path.join(broken, '.jp', 'conversations')), false);
    await finish(editor);
  });

  it('with an editor that reads and writes files, file tools use its buffers, inside the workspace only, after the same approvals', async () => {
    const read = { id: 'call_1', name: 'fs_read_file', arguments: { path: 'notes.txt' } };
    const escaping = { id: 'call_2', name: 'fs_read_file', arguments: { path: '../secret.txt' } };
    const rules = { id: 'call_3', name: 'fs_read_file', arguments: { path: '.jp/config.toml' } };
    const pipe = { id: 'call_5', name: 'fs_read_file', arguments: { path: 'pipe' } };
    const modify = {
      id: 'call_4',
      name: 'fs_modify_file',
      arguments: { path: 'notes.txt', old_string: 'unsaved', new_string: 'edited' },
    };
    const part = { id: 'call_6', name: 'fs_read_file', arguments: { path: 'three.txt', offset: 2, limit: 1 } };
    const fake = await provider(
      stepByToolResults([
        toolStep([read]),
        toolStep([escaping]),
        toolStep([rules]),
        toolStep([pipe]),
        toolStep([modify]),
        toolStep([part]),
        textStep('Done.'),
      ]),
    );
    const sandbox = cleanup.sandbox({ config: '' });
    sandbox.write('notes.txt', 'on disk\n');
    writeFileSync(path.join(sandbox.root, 'secret.txt'), 'the secret\n');
    execFileSync('mkfifo', [path.join(sandbox.workspace, 'pipe')]);
    const editor = await editorFor(sandbox, fake, [], { fs: { readTextFile: true, writeTextFile: true } });
    const notes = path.join(sandbox.workspace, 'notes.txt');
    editor.buffers.set(notes, 'unsaved in the editor\n');
    const three = path.join(sandbox.workspace, 'three.txt');
    editor.buffers.set(three, 'one\ntwo\nthree\n');
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'edit the notes')).stopReason, 'end_turn');

    const results = fake.requests
      .at(-1)!
      .messages.flatMap((message) => message.toolResults)
      .map((result) => result.content);
    assert.equal(
      results[0],
      '1\tunsaved in the editor',
      'the model read the unsaved buffer (numbered as fs_read_file numbers lines), not the disk',
    );
    assert.match(results[1]!, /outside the workspace/);
    assert.match(results[2]!, /off limits to file tools/);
    assert.match(results[3]!, /pipe is a (named pipe|FIFO)/i);
    assert.match(results[4]!, /modified notes\.txt in the user's editor/);
    // An unsaved file, read in part: the same numbering and note as from disk.
    assert.equal(results[5], '2\ttwo\n[jp: lines 2-2 of 3 lines (14 bytes) shown; continue with offset=3]');
    // The editor was never asked for a file outside the workspace, in .jp/, or that is not a regular file.
    assert.deepEqual(editor.fileReads, [notes, notes, three]);
    // The edit was approved first, then landed in the editor's buffer; the disk is the editor's to save.
    assert.deepEqual(
      editor.permissions.map((request) => request.toolCall.toolCallId),
      ['call_4'],
    );
    assert.deepEqual(editor.fileWrites, [{ path: notes, content: 'edited in the editor\n' }]);
    assert.equal(sandbox.read('notes.txt'), 'on disk\n');
    await finish(editor);
  });

  it('a rejected edit never reaches the editor', async () => {
    const modify = {
      id: 'call_1',
      name: 'fs_modify_file',
      arguments: { path: 'notes.txt', old_string: 'disk', new_string: 'DISK' },
    };
    const fake = await provider(stepByToolResults([toolStep([modify]), textStep('Left alone.')]));
    const sandbox = cleanup.sandbox();
    sandbox.write('notes.txt', 'on disk\n');
    const editor = await editorFor(sandbox, fake, [], { fs: { readTextFile: true, writeTextFile: true } });
    editor.onPermission = async (request) => ({
      outcome: {
        outcome: 'selected',
        optionId: request.options.find((option) => option.kind === 'reject_once')!.optionId,
      },
    });
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'edit the notes')).stopReason, 'end_turn');
    assert.deepEqual([editor.fileReads, editor.fileWrites], [[], []]);
    assert.equal(sandbox.read('notes.txt'), 'on disk\n');
    await finish(editor);
  });

  it('questions: ask_user is an elicitation form when the editor offers one; without forms, its options are a permission request', async () => {
    const ask = { id: 'call_1', name: 'ask_user', arguments: { question: 'Which colour?', options: ['red', 'blue'] } };
    const fake = await provider(stepByToolResults([toolStep([ask]), textStep('Noted.')]));
    const sandbox = cleanup.sandbox();
    const withForms = await editorFor(sandbox, fake, [], { elicitation: { form: {} } });
    withForms.onElicitation = async () => ({ action: 'accept', content: { answer: 'blue' } });
    const sessionId = await newSession(withForms, sandbox.workspace);
    assert.equal((await prompt(withForms, sessionId, 'ask me')).stopReason, 'end_turn');
    assert.equal(withForms.elicitations.length, 1);
    const [form] = withForms.elicitations as {
      message: string;
      requestedSchema: { properties: Record<string, { enum?: string[] }> };
      toolCallId?: string;
    }[];
    assert.equal(form!.message, 'Which colour?');
    assert.deepEqual(form!.requestedSchema.properties.answer!.enum, ['red', 'blue']);
    assert.equal(form!.toolCallId, 'call_1');
    assert.match(
      fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!.content,
      /The user answered: blue/,
    );
    await finish(withForms);

    // acpx and other editors without forms: the options are the permission request's options.
    const without = await editorFor(sandbox, fake);
    without.onPermission = async (request) => ({
      outcome: { outcome: 'selected', optionId: request.options.find((option) => option.name === 'blue')!.optionId },
    });
    const otherSession = await newSession(without, sandbox.workspace);
    assert.equal((await prompt(without, otherSession, 'ask me')).stopReason, 'end_turn');
    assert.equal(without.elicitations.length, 0);
    assert.equal(without.permissions.length, 1);
    const [asked] = without.permissions;
    assert.equal(asked!.toolCall.toolCallId, 'call_1');
    assert.equal(asked!.toolCall.title, 'Which colour?');
    assert.deepEqual(
      asked!.options.map((option) => [option.name, option.kind]),
      [
        ['red', 'allow_once'],
        ['blue', 'allow_once'],
      ],
    );
    const answer = readEvents(sandbox, otherSession).find((event) => event.type === 'inquiry_response');
    assert.equal(answer?.by, 'user');
    assert.equal(answer?.answer, 'blue');
    assert.match(
      fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!.content,
      /The user answered: blue/,
    );
    await finish(without);
  });

  it('questions without forms: a free-text question tells the model what it needs instead of "no user is available"', async () => {
    const free = { id: 'call_2', name: 'ask_user', arguments: { question: 'What should the file be called?' } };
    const fake = await provider(stepByToolResults([toolStep([free]), textStep('Noted.')]));
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'name it')).stopReason, 'end_turn');
    assert.equal(editor.permissions.length, 0, 'a text box cannot be a permission request');
    const result = fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!.content;
    assert.match(result, /unanswered: "What should the file be called\?" was not put to the user/);
    assert.match(result, /offers choices but no text box/);
    assert.match(result, /call ask_user again with `options`/);
    assert.doesNotMatch(result, /no user is available/);
    await finish(editor);
  });

  it("a prompt's resource links and embedded resources become the message's context", async () => {
    const fake = await provider([textStep('Seen.')]);
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    const sessionId = await newSession(editor, sandbox.workspace);
    const file = `file://${path.join(sandbox.workspace, 'src', 'main.ts')}`;
    const response = await editor.connection.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'Explain this:' },
        { type: 'resource_link', uri: file, name: 'main.ts' },
        {
          type: 'resource',
          resource: { uri: `${file}#L1-2`, text: 'const answer = 42;\n', mimeType: 'text/x-typescript' },
        },
      ],
    });
    assert.equal(response.stopReason, 'end_turn');
    const sent = fake.requests[0]!.messages.find((message) => message.role === 'user')!.text;
    assert.equal(
      sent,
      `Explain this:\n\n[resource: ${file} (main.ts)]\n\n<resource uri="${file}#L1-2">\nconst answer = 42;\n\n</resource>`,
    );
    await finish(editor);
  });

  it('the editor quitting mid-turn stops the run it owns (saved, resumable), as a foreground jp query dying does', async () => {
    const fake = await provider([
      { parts: [{ text: 'Working on it. ' }, { delayMs: 60_000 }, { text: 'never sent' }] },
    ]);
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    const sessionId = await newSession(editor, sandbox.workspace);
    const pending = prompt(editor, sessionId, 'a long task').catch((error: unknown) => error);
    await eventually('the first text chunk', () =>
      textOf(editor, sessionId, 'agent_message_chunk').includes('Working on it.'),
    );
    assert.equal(await editor.close(), 0);
    assert.ok((await pending) instanceof Error, 'the editor saw its connection end');
    const end = await eventually('the run to stop', () =>
      readEvents(sandbox, sessionId).find((event) => event.type === 'turn_end'),
    );
    assert.equal(end.status, 'interrupted');
    const status = await runJp(sandbox, ['conversation', 'ls']);
    assert.match(status.stdout, new RegExp(`${sessionId}.*interrupted`));
  });

  it('a result to review is a permission request showing the whole result; "for this turn" sends the next one without asking', async () => {
    const first = { id: 'call_1', name: 'fs_read_file', arguments: { path: 'a.txt' } };
    const second = { id: 'call_2', name: 'fs_read_file', arguments: { path: 'b.txt' } };
    const fake = await provider(stepByToolResults([toolStep([first]), toolStep([second]), textStep('Read both.')]));
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'alpha text\n');
    sandbox.write('b.txt', 'beta text\n');
    const editor = await editorFor(sandbox, fake, ['-c', 'conversation.tools.fs_read_file.result="ask"']);
    editor.onPermission = async (request) => ({
      outcome: {
        outcome: 'selected',
        optionId: request.options.find((option) => option.kind === 'allow_always')!.optionId,
      },
    });
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'read a and b')).stopReason, 'end_turn');
    assert.equal(editor.permissions.length, 1);
    assert.deepEqual(editor.permissions[0]!.toolCall.content, [
      { type: 'content', content: { type: 'text', text: '1\talpha text' } },
    ]);
    const results = fake.requests
      .at(-1)!
      .messages.flatMap((message) => message.toolResults)
      .map((result) => result.content);
    assert.deepEqual(results, ['1\talpha text', '1\tbeta text']);
    const answers = readEvents(sandbox, sessionId).filter((event) => event.type === 'inquiry_response');
    assert.deepEqual(
      answers.map((event) => [event.answer, event.by]),
      [
        ['deliver', 'user'],
        ['deliver', 'user'],
      ],
    );
    await finish(editor);
  });

  it('a command asking to leave the sandbox is a permission request saying why; rejected, it does not run', async () => {
    const escaping = {
      id: 'call_1',
      name: 'run_command',
      arguments: { command: 'echo out > outside.txt', escalate: true, justification: 'to write the file' },
    };
    const fake = await provider(stepByToolResults([toolStep([escaping]), textStep('Understood.')]));
    const sandbox = cleanup.sandbox();
    const editor = await editorFor(sandbox, fake);
    editor.onPermission = async (request) => {
      const kind = request.toolCall.title?.startsWith('Run outside the sandbox') ? 'reject_once' : 'allow_once';
      return {
        outcome: { outcome: 'selected', optionId: request.options.find((option) => option.kind === kind)!.optionId },
      };
    };
    const sessionId = await newSession(editor, sandbox.workspace);
    assert.equal((await prompt(editor, sessionId, 'write outside')).stopReason, 'end_turn');
    const escalation = editor.permissions.find((request) =>
      request.toolCall.title?.startsWith('Run outside the sandbox'),
    );
    assert.ok(
      escalation,
      `an escalation permission request among ${JSON.stringify(editor.permissions.map((request) => request.toolCall.title))}`,
    );
    assert.equal(escalation.toolCall.toolCallId, 'call_1');
    assert.deepEqual(
      escalation.options.map((option) => option.kind),
      ['allow_once', 'allow_always', 'reject_once'],
    );
    assert.deepEqual(escalation.toolCall.content, [
      {
        type: 'content',
        content: { type: 'text', text: 'Outside the sandbox: it cannot run in the sandbox. Why: to write the file' },
      },
    ]);
    assert.equal(sandbox.exists('outside.txt'), false);
    const answers = readEvents(sandbox, sessionId).filter((event) => event.type === 'inquiry_response');
    assert.deepEqual(answers.at(-1)!.answer, 'skip');
    assert.match(
      fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!.content,
      /declined to run this command outside the sandbox/,
    );
    await finish(editor);
  });
});
