/**
 * A PermissionRequest hook alongside a prompt at a terminal (DESIGN §4 "Who answers"), on the
 * rendered screen: the first answer wins, the other is withdrawn and told (the prompt closes and
 * says who answered; the hook gets SIGTERM); a hook's changed input is asked as a prompt that shows
 * it; a Notification hook hears that a prompt opened.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { hookEntry, hookScript, outsideFile, recorded, writeUserConfig } from '../support/hooks.ts';
import { conversationIds, eventually, readEvents, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';
import { Screen } from '../support/screen.ts';

const cleanup = useCleanup();

function script(sandbox: Sandbox): string[] {
  return testProvider(sandbox, {
    steps: [
      { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } } }] },
      { parts: [{ text: 'Finished.' }] },
    ],
  });
}

function answers(sandbox: Sandbox): Record<string, any>[] {
  const [conversationId] = conversationIds(sandbox);
  return readEvents(sandbox, conversationId!).filter((event) => event.type === 'inquiry_response');
}

describe('a PermissionRequest hook and a person at the terminal', () => {
  it('the hook answers first: the prompt is withdrawn and says the hook answered; the call runs', async () => {
    const sandbox = cleanup.sandbox();
    const go = outsideFile(sandbox, 'go');
    const notified = outsideFile(sandbox, 'notified.ndjson');
    const approve = hookScript(
      sandbox,
      'approve.sh',
      `#!/bin/sh\ncat > /dev/null\nwhile [ ! -f ${go} ]; do sleep 0.05; done\necho '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","message":"approved from my phone"}}}'\n`,
    );
    writeUserConfig(
      sandbox,
      hookEntry('PermissionRequest', approve) +
        hookEntry('Notification', `cat >> ${notified}`, { matcher: 'permission_prompt' }),
    );
    const screen = Screen.jp(sandbox, ['query', ...script(sandbox), 'go'], { cleanup });
    await screen.waitFor(/Run run_command\?/);
    const [notification] = await eventually(
      'the Notification hook heard of the prompt',
      () => {
        const events = recorded(notified);
        return events.length > 0 ? events : undefined;
      },
      60_000,
    );
    assert.equal(notification!.notification_type, 'permission_prompt');
    assert.equal(notification!.message, 'jp needs your permission to use run_command');
    sandbox.write('../go', '');
    await screen.waitFor(
      /jp: hook: run with the approval of the hook `.*approve\.sh` \(it said: approved from my phone\)/,
      { on: 'flowed' },
    );
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
    assert.match(screen.text(), /Finished\./);
    assert.deepEqual(
      answers(sandbox).map((event) => [event.by, event.answer]),
      [['hook', 'run']],
    );
    assert.equal(existsSync(go), true);
  });

  it("the person answers first: the hook is withdrawn (SIGTERM) and the answer is the person's", async () => {
    const sandbox = cleanup.sandbox();
    // The hook says it was withdrawn in the workspace; the turn's next command waits for that (a
    // minute at most, a safety bound), so the run does not end (and kill what is left of its
    // processes) before the hook has heard.
    const withdrawn = `${sandbox.workspace}/withdrawn`;
    const waiting = hookScript(
      sandbox,
      'wait.sh',
      `#!/bin/sh\ncat > /dev/null\ntrap 'echo withdrawn > ${withdrawn}; exit 0' TERM\nwhile :; do sleep 0.05; done\n`,
    );
    writeUserConfig(sandbox, hookEntry('PermissionRequest', waiting));
    const steps = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } } }] },
        {
          parts: [
            {
              tool_call: {
                name: 'run_command',
                arguments: { command: 'for i in $(seq 1200); do [ -f withdrawn ] && break; sleep 0.05; done' },
              },
            },
          ],
        },
        { parts: [{ text: 'Finished.' }] },
      ],
    });
    const screen = Screen.jp(sandbox, ['query', ...steps, 'go'], { cleanup });
    await screen.waitFor(/Run run_command\?/);
    screen.press('Y');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
    assert.equal(sandbox.read('withdrawn'), 'withdrawn\n', 'the hook was told it is withdrawn');
    assert.deepEqual(
      answers(sandbox).map((event) => [event.by, event.answer]),
      [['user', 'run_always']],
    );
    assert.doesNotMatch(screen.text(), /jp: hook:/);
  });

  it('a hook with no answer leaves the prompt to the person', async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, hookEntry('PermissionRequest', 'cat > /dev/null; exit 0'));
    const screen = Screen.jp(sandbox, ['query', ...script(sandbox), 'go'], { cleanup });
    await screen.waitFor(/Run run_command\?/);
    screen.press('n');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.exists('ran.txt'), false);
    assert.deepEqual(
      answers(sandbox).map((event) => [event.by, event.answer]),
      [['user', 'skip']],
    );
  });

  it('a hook that changes the input: the prompt shows the changed input, and a yes runs that', async () => {
    const sandbox = cleanup.sandbox();
    const change = hookScript(
      sandbox,
      'change.sh',
      `#!/bin/sh\ncat > /dev/null\necho '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"command":"echo safer > ran.txt"}}}}'\n`,
    );
    writeUserConfig(sandbox, hookEntry('PermissionRequest', change));
    const screen = Screen.jp(sandbox, ['query', ...script(sandbox), 'go'], { cleanup });
    await screen.waitFor(/changed the input of run_command; the prompt shows the changed input/, { on: 'flowed' });
    await screen.waitFor(/echo safer > ran\.txt/);
    await screen.waitFor(/Run run_command\?/, { on: 'screen' });
    screen.press('y');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.read('ran.txt'), 'safer\n', 'what ran is what the prompt showed');
    assert.deepEqual(
      answers(sandbox).map((event) => [event.by, event.answer]),
      [['user', { edit: { command: 'echo safer > ran.txt' } }]],
    );
  });
});
