/**
 * A PermissionRequest hook as an answerer of inquiries, with nobody at a terminal (DESIGN §4 "Who
 * answers"): asked before the detached policy, recorded as `by: "hook"` with its command, listed in
 * the result and shown by `print`; no answer, a crash or its timeout falls through to the policy
 * exactly as without it; it answers an escalation only when the user's own config says so; a
 * workspace's hooks run only once the workspace is trusted.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  type FakeProvider,
  startFakeProvider,
  textStep,
  startCallingProvider,
  toolResultsSent,
} from '../support/fake-provider.ts';
import { hookEntry, hookScript, outsideFile, recorded, writeUserConfig } from '../support/hooks.ts';
import {
  conversationIds,
  eventually,
  fakeModelArguments,
  processAlive,
  readEvents,
  repositoryRoot,
  runJp,
  type Sandbox,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();

const providerCalling = (call: { name: string; arguments: unknown }): Promise<FakeProvider> =>
  startCallingProvider(cleanup, [call]);

const toolResult = (provider: FakeProvider): string => toolResultsSent(provider)[0]!;

async function query(sandbox: Sandbox, provider: FakeProvider, extra: string[] = [], flags = ['--non-interactive']) {
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  return runJp(sandbox, ['query', ...flags, ...model.args, ...extra, '--json', 'go'], { env: model.env });
}

function resultOf(stdout: string): Record<string, any> {
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

const allow = `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","message":"ok from CI"}}}'\n`;
const command = { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } };

describe('PermissionRequest with nobody there', () => {
  it('answers before the policy: the call runs, recorded by "hook" with its command, in the result and in print', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'permission.ndjson');
    const approve = hookScript(sandbox, 'approve.sh', allow.replace('cat > /dev/null', `cat >> ${input}`));
    writeUserConfig(sandbox, hookEntry('PermissionRequest', approve, { matcher: 'Bash' }));
    const provider = await providerCalling(command);
    const result = await query(sandbox, provider);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
    const [conversationId] = conversationIds(sandbox);
    const [event] = recorded(input);
    assert.equal(event!.hook_event_name, 'PermissionRequest');
    assert.equal(event!.session_id, conversationId);
    assert.equal(event!.tool_name, 'Bash');
    assert.deepEqual(event!.tool_input, { command: 'echo ran > ran.txt' });
    assert.equal(event!.jp.inquiry_kind, 'run_tool');
    assert.equal(event!.jp.human_asked, false);
    assert.deepEqual(
      [event!.jp.policy.value, event!.jp.policy.key],
      ['deny', 'built-in'],
      'the policy that would decide',
    );
    const events = readEvents(sandbox, conversationId!);
    const request = events.find((logged) => logged.type === 'inquiry_request');
    const response = events.find((logged) => logged.type === 'inquiry_response');
    assert.equal(response!.id, request!.id);
    assert.equal(response!.by, 'hook');
    assert.equal(response!.hook, approve);
    assert.equal(response!.answer, 'run');
    assert.ok(response!.seal, 'bound to the call like every answer');
    const answers = resultOf(result.stdout).hook_answers;
    assert.deepEqual(answers, [
      {
        tool_name: 'run_command',
        tool_call_id: 'call_1',
        kind: 'run_tool',
        answer: 'run',
        hook: approve,
        reason: `run with the approval of the hook \`${approve}\` (it said: ok from CI)`,
      },
    ]);
    assert.match(toolResult(provider), /\[jp: decided without a human\] Run with the approval of the hook/);
    const printed = await runJp(sandbox, ['conversation', 'print', conversationId!]);
    assert.match(printed.stdout + printed.stderr, /jp: hook: run with the approval of the hook `.*approve\.sh`/);
  });

  it('a --detach run (whose policy would defer) is answered by the hook and completes', async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, hookEntry('PermissionRequest', hookScript(sandbox, 'approve.sh', allow)));
    const provider = await providerCalling(command);
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const detached = await runJp(sandbox, ['query', '--detach', ...model.args, 'go'], { env: model.env });
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId]);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
  });

  it('a run stopped while its hook waits records no answer, stops the hook, and resumes to ask again', async () => {
    const sandbox = cleanup.sandbox();
    const started = outsideFile(sandbox, 'started');
    const waiting = hookScript(
      sandbox,
      'wait.sh',
      `#!/bin/sh\ncat > /dev/null\necho $$ > ${started}.tmp && mv ${started}.tmp ${started}\nwhile :; do sleep 0.05; done\n`,
    );
    writeUserConfig(sandbox, hookEntry('PermissionRequest', waiting));
    const provider = await providerCalling(command);
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const detached = await runJp(sandbox, ['query', '--detach', ...model.args, 'go'], { env: model.env });
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    await eventually('the hook is asked', () => existsSync(started), 60_000);
    assert.equal((await runJp(sandbox, ['conversation', 'kill', conversationId])).code, 0);
    await runJp(sandbox, ['conversation', 'wait', conversationId]);
    const hookPid = Number(readFileSync(started, 'utf8'));
    await eventually('the hook was stopped', () => !processAlive(hookPid), 60_000);
    const events = readEvents(sandbox, conversationId);
    assert.equal(events.at(-1)!.status, 'interrupted', 'the run stopped, saved');
    assert.equal(events.filter((event) => event.type === 'inquiry_response').length, 0, 'no answer was made up');
    assert.equal(sandbox.exists('ran.txt'), false);
    writeUserConfig(sandbox, hookEntry('PermissionRequest', hookScript(sandbox, 'approve.sh', allow)));
    const resumed = await runJp(
      sandbox,
      ['query', '--continue', `--id=${conversationId}`, '--non-interactive', ...model.args],
      {
        env: model.env,
      },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
  });

  it('exit 2 denies with its stderr as the reason', async () => {
    const sandbox = cleanup.sandbox();
    const deny = hookScript(sandbox, 'deny.sh', '#!/bin/sh\ncat > /dev/null\necho "not on a Friday" >&2\nexit 2\n');
    writeUserConfig(sandbox, hookEntry('PermissionRequest', deny));
    const provider = await providerCalling(command);
    const result = await query(sandbox, provider, ['-c', 'conversation.tools.run_command.detached.run="auto"']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.exists('ran.txt'), false, 'the hook denied before the policy could approve');
    assert.match(
      toolResult(provider),
      /^Tool call denied: not run: the hook `.*deny\.sh` denied it \(it said: not on a Friday\)\./,
    );
    const answers = resultOf(result.stdout).hook_answers;
    assert.equal(answers[0].answer, 'skip');
  });

  it('no decision, a crash or a timeout falls through to the policy exactly as without a hook', async () => {
    for (const [name, text, extra] of [
      ['silent.sh', '#!/bin/sh\ncat > /dev/null\nexit 0\n', {}],
      ['crash.sh', '#!/bin/sh\ncat > /dev/null\nexit 1\n', {}],
      ['slow.sh', '#!/bin/sh\nexec sleep 30\n', { timeout: 1 }],
    ] as const) {
      const sandbox = cleanup.sandbox();
      writeUserConfig(sandbox, hookEntry('PermissionRequest', hookScript(sandbox, name, text), extra));
      const provider = await providerCalling(command);
      const result = await query(sandbox, provider);
      assert.equal(result.code, 3, `${name}: ${result.stderr}`);
      assert.equal(sandbox.exists('ran.txt'), false);
      const line = resultOf(result.stdout);
      assert.deepEqual(line.hook_answers, [], name);
      assert.match(line.permission_denials[0].reason, /^not run: no user is available to approve it/, name);
      const [conversationId] = conversationIds(sandbox);
      const response = readEvents(sandbox, conversationId!).find((event) => event.type === 'inquiry_response');
      assert.equal(response!.by, 'policy', name);
    }
  });

  it('a changed input with nobody there: ignored when the policy would refuse, run when it would approve', async () => {
    const change = `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"echo changed > ran.txt"}}}}'\n`;
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, hookEntry('PermissionRequest', hookScript(sandbox, 'change.sh', change)));
    const refused = await query(sandbox, await providerCalling(command));
    assert.equal(refused.code, 3, refused.stderr);
    assert.equal(sandbox.exists('ran.txt'), false);
    assert.match(
      refused.stderr,
      /ignored the changed input the hook `.*change\.sh` gave run_command: nobody is there to see it/,
    );
    const approving = cleanup.sandbox();
    writeUserConfig(approving, hookEntry('PermissionRequest', hookScript(approving, 'change.sh', change)));
    const ran = await query(approving, await providerCalling(command), [
      '-c',
      'conversation.tools.run_command.detached.run="auto"',
    ]);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(approving.read('ran.txt'), 'changed\n');
    assert.deepEqual(resultOf(ran.stdout).hook_answers[0].answer, { edit: { command: 'echo changed > ran.txt' } });
  });
});

describe('escalations and trust', () => {
  const escalating = {
    name: 'run_command',
    arguments: { command: 'echo ran > ran.txt', escalate: true, justification: 'needs the network' },
  };

  it("a hook answers an escalation only when the user's own config says escalate = true", async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'asked.ndjson');
    const approve = hookScript(sandbox, 'approve.sh', allow.replace('cat > /dev/null', `cat >> ${input}`));
    writeUserConfig(sandbox, hookEntry('PermissionRequest', approve));
    const unattended = ['-c', 'conversation.tools.run_command.run="unattended"'];
    const refused = await query(sandbox, await providerCalling(escalating), unattended);
    assert.equal(refused.code, 3, refused.stderr);
    assert.equal(sandbox.exists('ran.txt'), false);
    assert.deepEqual(recorded(input), [], 'the hook was not asked about leaving the sandbox');
    writeUserConfig(sandbox, hookEntry('PermissionRequest', approve, { escalate: true }));
    const approved = await query(sandbox, await providerCalling(escalating), unattended);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
    assert.equal(recorded(input)[0]!.jp.inquiry_kind, 'escalate');
    assert.equal(resultOf(approved.stdout).hook_answers[0].kind, 'escalate');
  });

  it("a workspace's hooks are ignored until it is trusted; even trusted, its escalate = true is not", async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'asked.ndjson');
    const approve = hookScript(sandbox, 'approve.sh', allow.replace('cat > /dev/null', `cat >> ${input}`));
    sandbox.write('.jp/config.toml', hookEntry('PermissionRequest', approve, { escalate: true }));
    const untrusted = await query(sandbox, await providerCalling(command));
    assert.equal(untrusted.code, 3, untrusted.stderr);
    assert.match(untrusted.stderr, /ignoring hooks in .*config\.toml: this workspace config is not trusted/);
    assert.deepEqual(recorded(input), [], 'an untrusted workspace hook never ran');
    assert.equal(sandbox.exists('ran.txt'), false);
    assert.equal((await runJp(sandbox, ['trust'])).code, 0);
    const trusted = await query(sandbox, await providerCalling(command));
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n', 'once trusted, its hook answers');
    sandbox.write('ran.txt', '');
    const escalated = await query(sandbox, await providerCalling(escalating), [
      '-c',
      'conversation.tools.run_command.run="unattended"',
    ]);
    assert.equal(escalated.code, 3, escalated.stderr);
    assert.equal(sandbox.read('ran.txt'), '', 'a workspace never lets a hook approve leaving the sandbox');
  });

  it('a workspace hook script that changed since it was trusted is not run', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'asked.ndjson');
    sandbox.write('hooks/approve.sh', allow.replace('cat > /dev/null', `cat >> ${input}`));
    sandbox.write('.jp/config.toml', hookEntry('PermissionRequest', 'sh hooks/approve.sh'));
    assert.equal((await runJp(sandbox, ['trust'])).code, 0);
    sandbox.write('hooks/approve.sh', `#!/bin/sh\necho changed >> ${input}\n`);
    const result = await query(sandbox, await providerCalling(command));
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, /ignoring hooks/);
    assert.deepEqual(recorded(input), []);
  });
});

describe('a conversation log as a source of hooks', () => {
  it("hooks in a config_delta this user's jp did not record are ignored, and named", async () => {
    const sandbox = cleanup.sandbox();
    const ran = outsideFile(sandbox, 'planted-hook-ran');
    const id = 'jp-c1767225600000042';
    const timestamp = '2026-01-01T00:00:00.000Z';
    const planted = [
      { type: 'config_delta', delta: { hooks: { SessionStart: [{ command: `touch ${ran}` }] } } },
      { type: 'turn_start' },
      { type: 'chat_request', content: 'hello' },
      { type: 'chat_response', message: 'hi there' },
      { type: 'turn_end', status: 'completed' },
    ];
    sandbox.write(
      `.jp/conversations/${id}/events.ndjson`,
      planted.map((event) => `${JSON.stringify({ timestamp, ...event })}\n`).join(''),
    );
    sandbox.write(
      `.jp/conversations/${id}/metadata.json`,
      JSON.stringify({ id, title: 'planted', created_at: timestamp, updated_at: timestamp }),
    );
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [textStep('Hi.')] });
    cleanup.add(() => provider.close());
    const result = await query(sandbox, provider, [`--id=${id}`]);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!existsSync(ran), 'the planted hook never ran');
    const ignored = resultOf(result.stdout).warnings.find(
      (warning: any) => warning.code === 'conversation_settings_ignored',
    );
    assert.deepEqual(ignored.keys, ['hooks.SessionStart']);
  });
});

describe('scripts written for the common contract', () => {
  const fixtures = path.join(repositoryRoot, 'test', 'fixtures', 'hooks');

  it('a Python validator (tool_name "Bash", tool_input.command, exit 2 with stderr) works unchanged', async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(
      sandbox,
      hookEntry('PreToolUse', `python3 ${path.join(fixtures, 'bash_command_validator.py')}`, { matcher: 'Bash' }),
    );
    const grep = await providerCalling({ name: 'run_command', arguments: { command: 'grep -r TODO . > found.txt' } });
    const result = await query(sandbox, grep, ['-c', 'conversation.tools.run_command.run="unattended"']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.exists('found.txt'), false);
    assert.match(toolResult(grep), /Use 'rg' \(ripgrep\) instead of 'grep'/);
  });

  it('a jq auto-approver for PermissionRequest works unchanged', async () => {
    const sandbox = cleanup.sandbox();
    const approver = path.join(fixtures, 'approve-tests.sh');
    writeUserConfig(sandbox, hookEntry('PermissionRequest', `sh ${approver}`));
    const tests = await providerCalling({ name: 'run_command', arguments: { command: 'npm test > ran.txt || true' } });
    assert.equal((await query(sandbox, tests)).code, 0);
    assert.ok(sandbox.exists('ran.txt'), 'approved: it ran');
    const other = cleanup.sandbox();
    writeUserConfig(other, hookEntry('PermissionRequest', `sh ${approver}`));
    const rm = await providerCalling({ name: 'run_command', arguments: { command: 'rm -f ran.txt' } });
    const refused = await query(other, rm);
    assert.equal(refused.code, 3, 'no answer from the hook: the policy refused');
    assert.match(readFileSync(approver, 'utf8'), /jq/);
  });
});
