/**
 * PreToolUse and PostToolUse hooks (README "Hooks") on the real binary, with nobody at a terminal:
 * the event as JSON on stdin in the common contract's fields, decisions by exit code and by JSON,
 * matchers by tool name (the common name or jp's), and hooks that cannot widen what runs.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type FakeProvider, startCallingProvider, toolResultsSent } from '../support/fake-provider.ts';
import { hookEntry, hookScript, outsideFile, recorded, writeUserConfig } from '../support/hooks.ts';
import { conversationIds, fakeModelArguments, readEvents, runJp, type Sandbox, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

const providerCalling = (calls: { name: string; arguments: unknown }[]): Promise<FakeProvider> =>
  startCallingProvider(cleanup, calls);

const toolResults = toolResultsSent;

function query(sandbox: Sandbox, provider: FakeProvider, extra: string[] = []) {
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  return runJp(sandbox, ['query', '--non-interactive', ...model.args, ...extra, 'go'], { env: model.env });
}

const unattended = ['-c', 'conversation.tools.run_command.run="unattended"'];

describe('PreToolUse', () => {
  it('gets the call as JSON on stdin in the common fields; exit 2 blocks it and its stderr goes to the model', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'pre.ndjson');
    const guard = hookScript(
      sandbox,
      'guard.sh',
      `#!/bin/sh\ncat >> ${input}\necho "rm is not allowed here" >&2\nexit 2\n`,
    );
    writeUserConfig(sandbox, hookEntry('PreToolUse', guard, { matcher: 'Bash' }));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'echo ran > ran.txt' } }]);
    const result = await query(sandbox, provider, unattended);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.exists('ran.txt'), false, 'the blocked command did not run');
    const [conversationId] = conversationIds(sandbox);
    const [event] = recorded(input);
    assert.equal(event!.hook_event_name, 'PreToolUse');
    assert.equal(event!.session_id, conversationId, 'session_id is the conversation id');
    assert.equal(event!.cwd, sandbox.workspace);
    assert.equal(event!.tool_name, 'Bash', "run_command is the common contract's Bash");
    assert.deepEqual(event!.tool_input, { command: 'echo ran > ran.txt' });
    assert.equal(event!.tool_use_id, 'call_1');
    assert.ok(existsSync(event!.transcript_path), 'transcript_path is the conversation log');
    assert.equal(event!.jp.tool, 'run_command');
    assert.equal(event!.jp.sandbox, 'workspace-write');
    const [told] = toolResults(provider);
    assert.match(told!, /^Not run: the hook `.*guard\.sh` denied it: rm is not allowed here/);
  });

  it('denies by JSON (hookSpecificOutput.permissionDecision) with its reason for the model', async () => {
    const sandbox = cleanup.sandbox();
    const deny = hookScript(
      sandbox,
      'deny.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use the test runner instead"}}'\n`,
    );
    writeUserConfig(sandbox, hookEntry('PreToolUse', deny));
    const provider = await providerCalling([{ name: 'fs_create_file', arguments: { path: 'a.txt', content: 'x' } }]);
    const result = await query(sandbox, provider, ['-c', 'conversation.tools.fs_create_file.run="unattended"']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.exists('a.txt'), false);
    assert.match(toolResults(provider)[0]!, /denied it: use the test runner instead/);
    const [conversationId] = conversationIds(sandbox);
    const response = readEvents(sandbox, conversationId!).find((event) => event.type === 'tool_call_response');
    assert.equal(response!.outcome, 'denied');
  });

  it('an allow skips nothing jp would ask: with nobody there the detached policy still decides', async () => {
    const sandbox = cleanup.sandbox();
    const allow = hookScript(
      sandbox,
      'allow.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'\n`,
    );
    writeUserConfig(sandbox, hookEntry('PreToolUse', allow));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'echo ran > ran.txt' } }]);
    const result = await query(sandbox, provider);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(sandbox.exists('ran.txt'), false, 'an allow did not approve what needs approval');
    assert.match(toolResults(provider)[0]!, /not run: no user is available to approve it/);
  });

  it('ask: a tool that runs unattended is asked about; with nobody there the policy refuses it', async () => {
    const sandbox = cleanup.sandbox();
    const ask = hookScript(
      sandbox,
      'ask.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"writes outside src/"}}'\n`,
    );
    writeUserConfig(sandbox, hookEntry('PreToolUse', ask, { matcher: 'run_command' }));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'echo ran > ran.txt' } }]);
    const result = await query(sandbox, provider, unattended);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(sandbox.exists('ran.txt'), false);
    const [conversationId] = conversationIds(sandbox);
    const requests = readEvents(sandbox, conversationId!).filter((event) => event.type === 'inquiry_request');
    assert.deepEqual(
      requests.map((event) => event.inquiry.kind),
      ['run_tool'],
      'the call was asked about although it runs unattended',
    );
    assert.match(result.stderr, /asks for a decision on run_command: writes outside src\//);
  });

  it('additionalContext goes to the model with the result; a matcher that names another tool does not run', async () => {
    const sandbox = cleanup.sandbox();
    const other = outsideFile(sandbox, 'other.ndjson');
    const context = hookScript(
      sandbox,
      'context.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"this repository formats with tabs"}}'\n`,
    );
    writeUserConfig(
      sandbox,
      hookEntry('PreToolUse', context, { matcher: 'Bash|Write' }) +
        hookEntry('PreToolUse', `cat >> ${other}`, { matcher: 'Edit' }),
    );
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'echo ran > ran.txt' } }]);
    const result = await query(sandbox, provider, unattended);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
    assert.match(
      toolResults(provider)[0]!,
      /exit code 0\n\n\[hook `.*context\.sh`\] this repository formats with tabs/,
    );
    assert.deepEqual(recorded(other), [], 'the Edit hook did not run for Bash');
  });

  it('updatedInput with nobody there runs the changed input only by the settings that would have run it anyway', async () => {
    const change = `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo changed > ran.txt"}}}'\n`;
    // Unattended: the call would have run without a human; the changed input runs, and the model is told.
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, hookEntry('PreToolUse', hookScript(sandbox, 'change.sh', change)));
    const provider = await providerCalling([
      { name: 'run_command', arguments: { command: 'echo original > ran.txt' } },
    ]);
    const result = await query(sandbox, provider, unattended);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('ran.txt'), 'changed\n');
    assert.match(toolResults(provider)[0]!, /changed the input to \{"command":"echo changed > ran\.txt"\}/);
    // Asked about (run = "ask"), nobody there, the policy denies: neither input runs.
    const strict = cleanup.sandbox();
    writeUserConfig(strict, hookEntry('PreToolUse', hookScript(strict, 'change.sh', change)));
    const second = await providerCalling([{ name: 'run_command', arguments: { command: 'echo original > ran.txt' } }]);
    const refused = await query(strict, second);
    assert.equal(refused.code, 3, refused.stderr);
    assert.equal(strict.exists('ran.txt'), false, 'a hook did not make jp run what the policy refuses');
    const [conversationId] = conversationIds(strict);
    const inquiry = readEvents(strict, conversationId!).find((event) => event.type === 'inquiry_request');
    assert.deepEqual(
      inquiry!.inquiry.arguments,
      { command: 'echo changed > ran.txt' },
      'what was refused is the changed input',
    );
  });

  it('a file tool gets the common `file_path`; a changed `file_path` becomes the path it writes', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'write.ndjson');
    const redirect = hookScript(
      sandbox,
      'redirect.sh',
      `#!/bin/sh\ntee -a ${input} | python3 -c 'import json,sys; d=json.load(sys.stdin); i=d["tool_input"]; i["file_path"]=i["file_path"].replace("draft","final"); print(json.dumps({"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":i}}))'\n`,
    );
    writeUserConfig(sandbox, hookEntry('PreToolUse', redirect, { matcher: 'Write' }));
    const provider = await providerCalling([
      { name: 'fs_create_file', arguments: { path: 'draft.txt', content: 'hello' } },
    ]);
    const result = await query(sandbox, provider, ['-c', 'conversation.tools.fs_create_file.run="unattended"']);
    assert.equal(result.code, 0, result.stderr);
    const [event] = recorded(input);
    assert.equal(event!.tool_name, 'Write');
    assert.equal(event!.tool_input.file_path, `${sandbox.workspace}/draft.txt`);
    assert.equal(sandbox.exists('draft.txt'), false);
    assert.equal(sandbox.read('final.txt'), 'hello');
  });

  it('a hook that fails (exit 1) or runs past its timeout decides nothing and is named on stderr', async () => {
    const sandbox = cleanup.sandbox();
    const crash = hookScript(sandbox, 'crash.sh', '#!/bin/sh\ncat > /dev/null\necho "boom" >&2\nexit 1\n');
    const slow = hookScript(sandbox, 'slow.sh', '#!/bin/sh\nexec sleep 30\n');
    writeUserConfig(sandbox, hookEntry('PreToolUse', crash) + hookEntry('PreToolUse', slow, { timeout: 1 }));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'echo ran > ran.txt' } }]);
    const result = await query(sandbox, provider, unattended);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n', 'failed hooks did not stop the call');
    assert.match(result.stderr, /hook `.*crash\.sh` \(PreToolUse\) failed, exit code 1: boom; it decided nothing/);
    assert.match(result.stderr, /hook `.*slow\.sh` \(PreToolUse\) failed, timed out after 1 s/);
  });

  it('continue: false stops the turn after the call (denied), resumable, with the stop reason', async () => {
    const sandbox = cleanup.sandbox();
    const stop = hookScript(
      sandbox,
      'stop.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"continue":false,"stopReason":"the build is broken; fix it first","systemMessage":"stopping the agent"}'\n`,
    );
    writeUserConfig(sandbox, hookEntry('PreToolUse', stop));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'echo ran > ran.txt' } }]);
    const result = await query(sandbox, provider, [...unattended, '--json']);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(sandbox.exists('ran.txt'), false);
    assert.equal(provider.requests.length, 1, 'no request after the hook stopped the turn');
    const resultLine = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    assert.equal(resultLine.error.code, 'stopped_by_hook');
    assert.match(resultLine.error.message, /the build is broken; fix it first/);
    assert.match(result.stderr, /stopping the agent/, 'the systemMessage is shown to the user');
  });
});

describe('bounded', () => {
  it('a hook that floods its output: jp reads a bounded part, the model gets at most 10,000 characters of it', async () => {
    const sandbox = cleanup.sandbox();
    const flood = hookScript(
      sandbox,
      'flood.sh',
      '#!/bin/sh\ncat > /dev/null\nhead -c 20000000 /dev/zero | tr "\\0" x >&2\nexit 2\n',
    );
    writeUserConfig(sandbox, hookEntry('PostToolUse', flood));
    const provider = await providerCalling([{ name: 'run_command', arguments: { command: 'echo ran' } }]);
    const result = await query(sandbox, provider, unattended);
    assert.equal(result.code, 0, result.stderr);
    const told = toolResults(provider)[0]!;
    const fromHook = told.slice(told.indexOf('[hook'));
    assert.ok(fromHook.length < 10_500, `${fromHook.length} characters from the hook`);
    assert.match(fromHook, /jp omitted [\d,]+ characters here: the hook output is longer than 10000 characters/);
  });
});

describe('PostToolUse', () => {
  it('gets the result as tool_response; exit 2 stderr and additionalContext go to the model with it', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'post.ndjson');
    const lint = hookScript(
      sandbox,
      'lint.sh',
      `#!/bin/sh\ncat >> ${input}\necho "lint: line 1 is too long" >&2\nexit 2\n`,
    );
    const note = hookScript(
      sandbox,
      'note.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember to run the tests"}}'\n`,
    );
    writeUserConfig(sandbox, hookEntry('PostToolUse', lint, { matcher: 'Write' }) + hookEntry('PostToolUse', note));
    const provider = await providerCalling([{ name: 'fs_create_file', arguments: { path: 'a.txt', content: 'x' } }]);
    const result = await query(sandbox, provider, ['-c', 'conversation.tools.fs_create_file.run="unattended"']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('a.txt'), 'x');
    const [event] = recorded(input);
    assert.equal(event!.hook_event_name, 'PostToolUse');
    assert.equal(event!.tool_name, 'Write');
    assert.match(event!.tool_response.content, /created a\.txt/i);
    assert.equal(event!.tool_response.is_error, false);
    const told = toolResults(provider)[0]!;
    assert.match(told, /\[hook `.*lint\.sh`\] lint: line 1 is too long/);
    assert.match(told, /\[hook `.*note\.sh`\] remember to run the tests/);
  });
});
