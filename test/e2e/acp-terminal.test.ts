/**
 * run_command in the editor's terminal (ACP `terminal/*`, issue 39 point 2): the editor runs the
 * command and shows it live in the call, and it is the same command jp would run: in the sandbox,
 * with the tool's environment, not the editor's (which may hold the user's provider keys). The
 * test editor runs terminal/create for real, in an environment holding a key.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { methods } from '@agentclientprotocol/sdk';
import { acpEditor, acpFinish, acpNewSession, acpPrompt, acpProvider } from '../support/acp-session.ts';
import { stepByToolResults, textStep, toolStep } from '../support/fake-provider.ts';
import { eventually, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

describe("jp acp: run_command in the editor's terminal", () => {
  it("runs the sandboxed command with the tool environment, shown live in the call; the editor's key and the sandbox's outside stay out of reach", async () => {
    const command = {
      id: 'call_1',
      name: 'run_command',
      arguments: {
        command:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell expands it, in the editor's terminal
          'echo hello; echo "key=${OPENAI_API_KEY:-none}"; echo "conversation=${JP_CONVERSATION_ID:-none}"; touch ../outside.txt',
      },
    };
    const fake = await acpProvider(cleanup, stepByToolResults([toolStep([command]), textStep('Ran it.')]));
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake, { capabilities: { terminal: true } });
    editor.terminalEnvironment = { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-editor-own-key-1234567890' };
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    assert.equal((await acpPrompt(editor, sessionId, 'run it')).stopReason, 'end_turn');

    assert.equal(editor.terminals.length, 1);
    const [terminal] = editor.terminals;
    // The editor was given the whole command line: a clean environment, then the sandbox.
    assert.equal(terminal!.command, '/usr/bin/env');
    assert.equal(terminal!.args[0], '-i');
    assert.ok(
      terminal!.args.some((argument) => path.basename(argument) === 'bwrap'),
      `the sandbox wraps it: ${terminal!.args.join(' ')}`,
    );
    assert.equal(terminal!.args.join(' ').includes('sk-'), false, 'no value of the environment on the command line');
    assert.match(terminal!.output, /^hello$/m);
    const result = fake.requests.at(-1)!.messages.flatMap((message) => message.toolResults)[0]!.content;
    assert.match(result, /^hello$/m);
    assert.match(result, /^key=none$/m, "the editor's key never reaches the command");
    assert.match(result, new RegExp(`^conversation=${sessionId}$`, 'm'));
    assert.match(result, /Read-only file system|Permission denied/);
    assert.match(result, /exit code 1$/m);
    assert.equal(existsSync(path.join(sandbox.root, 'outside.txt')), false);

    // The call showed the terminal while it ran, and keeps it in its final update; then it was released.
    const contents = editor.updates
      .map((notification) => notification.update)
      .filter((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'call_1')
      .map((update) => ('content' in update && Array.isArray(update.content) ? update.content : []));
    assert.ok(contents.some((content) => content.length === 1 && content[0]!.type === 'terminal'));
    assert.deepEqual(contents.at(-1)?.[0], { type: 'terminal', terminalId: terminal!.id });
    await eventually('the terminal released', () => terminal!.released);
    await acpFinish(editor);
  });

  it("a cancelled turn kills the command in the editor's terminal and closes the call before it answers cancelled", async () => {
    const command = { id: 'call_1', name: 'run_command', arguments: { command: 'echo started; sleep 30' } };
    const fake = await acpProvider(cleanup, stepByToolResults([toolStep([command]), textStep('unreachable')]));
    const sandbox = cleanup.sandbox();
    const editor = await acpEditor(cleanup, sandbox, fake, { capabilities: { terminal: true } });
    const sessionId = await acpNewSession(editor, sandbox.workspace);
    const running = acpPrompt(editor, sessionId, 'sleep');
    await eventually('the command started in the editor', () => editor.terminals[0]?.output.includes('started'));
    await editor.connection.agent.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await running).stopReason, 'cancelled');
    assert.equal(editor.terminals[0]!.killed, true);
    const exit = await editor.terminals[0]!.exit;
    assert.equal(exit.signal, 'SIGKILL');
    const last = editor.updates
      .map((notification) => notification.update)
      .filter((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'call_1')
      .at(-1);
    assert.equal(last && 'status' in last ? last.status : undefined, 'failed');
    await acpFinish(editor);
  });
});
