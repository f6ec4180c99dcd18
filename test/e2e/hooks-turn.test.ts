/**
 * The turn's hooks (README "Hooks") on the real binary: UserPromptSubmit, SessionStart, Stop,
 * PreCompact and Notification, each with the decisions it takes; every layer's hooks run; and no
 * hook ever sees a provider key.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type FakeProvider, startFakeProvider, textStep, toolStep } from '../support/fake-provider.ts';
import { hookEntry, hookScript, outsideFile, recorded, writeUserConfig } from '../support/hooks.ts';
import {
  conversationIds,
  eventually,
  fakeModelArguments,
  readEvents,
  runJp,
  type Sandbox,
  testProvider,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();

async function provider(steps: Parameters<typeof startFakeProvider>[0]['steps']): Promise<FakeProvider> {
  const started = await startFakeProvider({ wire: 'openai-chat', steps });
  cleanup.add(() => started.close());
  return started;
}

function query(sandbox: Sandbox, fake: FakeProvider, extra: string[], message = 'hello there') {
  const model = fakeModelArguments('openai-chat', fake.baseUrl);
  return runJp(sandbox, ['query', '--non-interactive', ...model.args, ...extra, message], { env: model.env });
}

describe('UserPromptSubmit', () => {
  it('exit 2 blocks the prompt: nothing is sent or recorded, the reason is on stderr, exit 1', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'prompt.ndjson');
    const block = hookScript(
      sandbox,
      'block.sh',
      `#!/bin/sh\ncat >> ${input}\necho "no secrets in prompts" >&2\nexit 2\n`,
    );
    writeUserConfig(sandbox, hookEntry('UserPromptSubmit', block));
    const fake = await provider([textStep('Hi.')]);
    const result = await query(sandbox, fake, ['--json'], 'my password is hunter2');
    assert.equal(result.code, 1, result.stderr);
    assert.equal(fake.requests.length, 0, 'the model was sent nothing');
    assert.match(result.stderr, /the hook `.*block\.sh` blocked the prompt: no secrets in prompts/);
    const line = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    assert.equal(line.error.code, 'prompt_blocked');
    const [event] = recorded(input);
    assert.equal(event!.hook_event_name, 'UserPromptSubmit');
    assert.equal(event!.prompt, 'my password is hunter2');
    for (const conversationId of conversationIds(sandbox))
      assert.ok(
        readEvents(sandbox, conversationId).every((logged) => logged.type !== 'chat_request'),
        'the prompt is not in the log',
      );
  });

  it('decision "block" (JSON) blocks too', async () => {
    const sandbox = cleanup.sandbox();
    const block = hookScript(
      sandbox,
      'block.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"decision":"block","reason":"ask in the team channel instead"}'\n`,
    );
    writeUserConfig(sandbox, hookEntry('UserPromptSubmit', block));
    const fake = await provider([textStep('Hi.')]);
    const result = await query(sandbox, fake, []);
    assert.equal(result.code, 1, result.stderr);
    assert.equal(fake.requests.length, 0);
    assert.match(result.stderr, /blocked the prompt: ask in the team channel instead/);
  });

  it('what it prints (plain text or additionalContext) goes to the model after the message, recorded apart from it', async () => {
    const sandbox = cleanup.sandbox();
    const plain = hookScript(
      sandbox,
      'plain.sh',
      '#!/bin/sh\ncat > /dev/null\necho "The current sprint ends Friday."\n',
    );
    const json = hookScript(
      sandbox,
      'json.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Branch: main"}}'\n`,
    );
    writeUserConfig(sandbox, hookEntry('UserPromptSubmit', plain) + hookEntry('UserPromptSubmit', json));
    const fake = await provider([textStep('Noted.')]);
    const result = await query(sandbox, fake, []);
    assert.equal(result.code, 0, result.stderr);
    const user = fake.requests[0]!.messages.filter((message) => message.role === 'user').at(-1)!;
    assert.match(user.text, /^hello there\n\nContext from the user's UserPromptSubmit hooks:\n/);
    assert.match(user.text, /The current sprint ends Friday\./);
    assert.match(user.text, /Branch: main/);
    const [conversationId] = conversationIds(sandbox);
    const request = readEvents(sandbox, conversationId!).find((event) => event.type === 'chat_request');
    assert.equal(request!.content, 'hello there');
    assert.match(request!.context, /The current sprint ends Friday\.\n\nBranch: main/);
  });
});

describe('SessionStart', () => {
  it('what it prints joins the system message; `source` is startup for a new conversation, resume for one with turns', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'session.ndjson');
    const start = hookScript(sandbox, 'start.sh', `#!/bin/sh\ncat >> ${input}\necho "Open issues: 3"\n`);
    writeUserConfig(sandbox, hookEntry('SessionStart', start));
    const fake = await provider([textStep('Hi.')]);
    assert.equal((await query(sandbox, fake, [])).code, 0);
    assert.equal((await query(sandbox, fake, [], 'again')).code, 0);
    const system = fake.requests[0]!.messages.find((message) => message.role === 'system')!;
    assert.match(system.text, /Context from the user's SessionStart hooks:\n\nOpen issues: 3/);
    const events = recorded(input);
    assert.deepEqual(
      events.map((event) => [event.hook_event_name, event.source]),
      [
        ['SessionStart', 'startup'],
        ['SessionStart', 'resume'],
      ],
    );
    assert.equal(events[0]!.model, 'openai/gpt-test');
  });
});

describe('Stop', () => {
  it('a block keeps the turn going with its reason as the next message; stop_hook_active says so the next time', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'stop.ndjson');
    const stop = hookScript(
      sandbox,
      'stop.sh',
      `#!/bin/sh\ntee -a ${input} | python3 -c 'import json,sys; d=json.load(sys.stdin); print("" if d["stop_hook_active"] else json.dumps({"decision":"block","reason":"run the tests before you finish"}))'\n`,
    );
    writeUserConfig(sandbox, hookEntry('Stop', stop));
    const fake = await provider([textStep('All done.'), textStep('Tests pass.')]);
    const result = await query(sandbox, fake, []);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(fake.requests.length, 2, 'the hook kept the turn going once');
    const second = fake.requests[1]!.messages.filter((message) => message.role === 'user').at(-1)!;
    assert.equal(second.text, 'run the tests before you finish');
    const events = recorded(input);
    assert.deepEqual(
      events.map((event) => [event.stop_hook_active, event.last_assistant_message]),
      [
        [false, 'All done.'],
        [true, 'Tests pass.'],
      ],
    );
    const [conversationId] = conversationIds(sandbox);
    const printed = await runJp(sandbox, ['conversation', 'print', conversationId!]);
    assert.match(
      printed.stderr + printed.stdout,
      /the Stop hook `.*stop\.sh` keeps the turn going: run the tests before you finish/,
    );
  });
});

describe('PreCompact', () => {
  it('`jp conversation compact` tells it first, with trigger "manual"', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'compact.ndjson');
    writeUserConfig(sandbox, hookEntry('PreCompact', `cat >> ${input}`, { matcher: 'manual' }));
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'A summary of it all.' }] }] });
    assert.equal((await runJp(sandbox, ['query', ...script, 'first'])).code, 0);
    assert.equal((await runJp(sandbox, ['query', ...script, 'second'])).code, 0);
    const compacted = await runJp(sandbox, ['conversation', 'compact'], {
      env: { JP_CFG_ASSISTANT__MODEL: 'test', JP_CFG_PROVIDERS__TEST__SCRIPT: 'script.json' },
    });
    assert.equal(compacted.code, 0, compacted.stderr);
    const [event] = recorded(input);
    assert.equal(event!.hook_event_name, 'PreCompact');
    assert.equal(event!.trigger, 'manual');
  });
});

describe('PreCompact, automatic', () => {
  it('a run about to outgrow its context window tells it first, with trigger "auto"', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'compact.ndjson');
    writeUserConfig(sandbox, hookEntry('PreCompact', `cat >> ${input}`, { matcher: 'auto' }));
    const script = [
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'Noted.' }] }] }),
      '--no-tools',
      '-c',
      'assistant.context_window=4000',
    ];
    // Each question fits the window (jp refuses one it knows is too big); the history grows with
    // each until a request would pass the threshold share, and that run compacts first.
    const compacted = (): boolean =>
      conversationIds(sandbox).some((id) => readEvents(sandbox, id).some((event) => event.type === 'compaction'));
    for (let question = 1; !compacted(); question++) {
      assert.ok(question <= 8, 'eight questions of ~1,000 tokens each never filled a 4,000-token window');
      assert.deepEqual(recorded(input), [], 'nothing compacted, nothing told');
      const run = await runJp(sandbox, ['query', ...script, `remember this: ${'word '.repeat(600)}`]);
      assert.equal(run.code, 0, run.stderr);
    }
    assert.equal(recorded(input).length, 1);
    const [event] = recorded(input);
    assert.equal(event!.hook_event_name, 'PreCompact');
    assert.equal(event!.trigger, 'auto');
  });
});

describe('Notification', () => {
  it('waiting_for_input: a detached run that defers tells the hook, which outlives the run', async () => {
    const sandbox = cleanup.sandbox();
    const input = outsideFile(sandbox, 'notify.ndjson');
    writeUserConfig(sandbox, hookEntry('Notification', `cat >> ${input}`, { matcher: 'waiting_for_input' }));
    const fake = await provider([toolStep([{ id: 'call_1', name: 'run_command', arguments: { command: 'true' } }])]);
    const model = fakeModelArguments('openai-chat', fake.baseUrl);
    const detached = await runJp(sandbox, ['query', '--detach', ...model.args, 'go'], { env: model.env });
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationId])).code, 4);
    const [event] = await eventually(
      'the Notification hook ran',
      () => {
        const events = recorded(input);
        return events.length > 0 ? events : undefined;
      },
      60_000,
    );
    assert.equal(event!.hook_event_name, 'Notification');
    assert.equal(event!.notification_type, 'waiting_for_input');
    assert.equal(event!.session_id, conversationId);
    assert.match(event!.message, /run_command \(run_tool\) needs an answer; resume with jp query --continue/);
    assert.equal(event!.jp.tool, 'run_command');
  });
});

describe('what hooks see', () => {
  it("no hook sees a provider key, at any event; the rest of the environment is there; every layer's hooks run", async () => {
    const sandbox = cleanup.sandbox();
    const seen = outsideFile(sandbox, 'seen.txt');
    const dump = hookScript(
      sandbox,
      'dump.sh',
      `#!/bin/sh\ncat > /dev/null\necho "$1 key=\${OPENAI_API_KEY:-none} custom=\${MY_PROVIDER_KEY:-none} anthropic=\${ANTHROPIC_API_KEY:-none} plain=\${PLAIN_VARIABLE:-none} conversation=$JP_CONVERSATION_ID" >> ${seen}\n`,
    );
    writeUserConfig(
      sandbox,
      [
        hookEntry('SessionStart', `${dump} SessionStart`),
        hookEntry('UserPromptSubmit', `${dump} UserPromptSubmit`),
        hookEntry('PreToolUse', `${dump} PreToolUse`),
        hookEntry('PermissionRequest', `${dump} PermissionRequest`),
        hookEntry('PostToolUse', `${dump} PostToolUse`),
        hookEntry('Stop', `${dump} Stop`),
      ].join(''),
    );
    const fake = await provider([
      toolStep([{ id: 'call_1', name: 'run_command', arguments: { command: 'true' } }]),
      textStep('Done.'),
    ]);
    const model = fakeModelArguments('openai-chat', fake.baseUrl);
    const result = await runJp(
      sandbox,
      [
        'query',
        '--non-interactive',
        ...model.args,
        '-c',
        'providers.anthropic.api_key_env="MY_PROVIDER_KEY"',
        '-c',
        'conversation.tools.run_command.detached.run="auto"',
        '-c',
        `hooks.Notification=[{command='${dump} ignored', matcher='nothing'}]`,
        '-c',
        `hooks.PreToolUse=[{command='${dump} PreToolUse-from-cfg'}]`,
        'go',
      ],
      {
        env: {
          ...model.env,
          MY_PROVIDER_KEY: 'my-provider-key-0123456789',
          ANTHROPIC_API_KEY: 'sk-ant-0123456789abcdef',
          PLAIN_VARIABLE: 'visible',
        },
      },
    );
    assert.equal(result.code, 0, result.stderr);
    const [conversationId] = conversationIds(sandbox);
    const lines = readFileSync(seen, 'utf8').trim().split('\n');
    assert.deepEqual(lines.map((line) => line.split(' ')[0]).sort(), [
      'PermissionRequest',
      'PostToolUse',
      'PreToolUse',
      'PreToolUse-from-cfg',
      'SessionStart',
      'Stop',
      'UserPromptSubmit',
    ]);
    for (const line of lines)
      assert.match(
        line,
        new RegExp(`key=none custom=none anthropic=none plain=visible conversation=${conversationId}$`),
        line,
      );
  });
});
