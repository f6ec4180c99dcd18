/**
 * DESIGN §4: every decision made without a human is reported to the model in the tool result, in
 * plain words naming the setting; refusals name the value that would let the tool through; counts
 * have the right plural.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { type FakeProvider, startCallingProvider, toolResultsSent } from '../support/fake-provider.ts';
import { fakeModelArguments, runJp, type Sandbox, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

const providerCalling = (call: { name: string; arguments: unknown }): Promise<FakeProvider> =>
  startCallingProvider(cleanup, [call]);

/** What the model was sent as the tool's result. */
function toolMessage(provider: FakeProvider): string {
  const results = toolResultsSent(provider);
  assert.equal(results.length, 1);
  return results[0]!;
}

async function query(
  sandbox: Sandbox,
  provider: FakeProvider,
  extra: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  return runJp(sandbox, ['query', '--non-interactive', ...model.args, ...extra, 'go'], { env: model.env });
}

describe('decisions made without a human, as the model hears them', () => {
  it('a tool run by the detached policy auto: the result says it ran without a human, naming the setting', async () => {
    const provider = await providerCalling({ name: 'fs_create_file', arguments: { path: 'b.txt', content: 'hi' } });
    const sandbox = cleanup.sandbox();
    const result = await query(sandbox, provider, ['-c', 'conversation.tools.defaults.detached="auto"']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('b.txt'), 'hi');
    const message = toolMessage(provider);
    assert.match(message, /^created b\.txt/i);
    assert.match(
      message,
      /\[jp: decided without a human\] Run without a user's approval: no user is available, and conversation\.tools\.defaults\.detached = "auto"/,
    );
    assert.match(
      message,
      /to require a human instead, set conversation\.tools\.fs_create_file\.detached\.run = "deny" or "defer"/,
    );
  });

  it('a result delivered by auto: the result says it was shared without a human', async () => {
    const provider = await providerCalling({ name: 'fs_read_file', arguments: { path: 'notes.txt' } });
    const sandbox = cleanup.sandbox();
    sandbox.write('notes.txt', 'the notes');
    const result = await query(sandbox, provider, [
      '-c',
      'conversation.tools.fs_read_file.result="ask"',
      '-c',
      'conversation.tools.fs_read_file.detached.deliver="auto"',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const message = toolMessage(provider);
    assert.match(message, /the notes/);
    assert.match(
      message,
      /\[jp: decided without a human\] Result shared without a user's review: no user is available, and conversation\.tools\.fs_read_file\.detached\.deliver = "auto"/,
    );
  });

  it("a local tool's question answered by its default: the result says so (ask_user, which says it itself, gets no second note)", async () => {
    const provider = await providerCalling({ name: 'deploy', arguments: {} });
    const sandbox = cleanup.sandbox();
    const script = `if [ "$JP_TOOL_ANSWERS" = "{}" ]; then echo '{"type":"needs_input","question":{"id":"confirm","text":"Deploy now?","answer_type":"boolean","default":true}}'; else echo deployed; fi`;
    const directory = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp');
    mkdirSync(directory, { recursive: true });
    writeFileSync(
      path.join(directory, 'config.toml'),
      `[conversation.tools.deploy]\ncommand = ${JSON.stringify(script)}\ndescription = "Deploy"\nrun = "unattended"\ndetached = { tool = "defaults" }\n`,
    );
    const result = await query(sandbox, provider, []);
    assert.equal(result.code, 0, result.stderr);
    const message = toolMessage(provider);
    assert.match(message, /^deployed/);
    assert.match(
      message,
      /\[jp: decided without a human\] The question "Deploy now\?" was answered with the question's default: no user is available, and conversation\.tools\.deploy\.detached\.tool = "defaults".* \(answer: true\)\./,
    );

    const asking = await providerCalling({
      name: 'ask_user',
      arguments: { question: 'Which color?', options: ['red', 'blue'], default: 'blue' },
    });
    const second = await query(cleanup.sandbox(), asking, [
      '-c',
      'conversation.tools.ask_user.detached.tool="defaults"',
    ]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(toolMessage(asking), "No user was available; the question's default answer was used: blue");
  });
});

describe('refusals name the value that lets the tool through', () => {
  it('defaults cannot run a tool: the advice is detached.run = "auto", never "deny or defer"', async () => {
    const provider = await providerCalling({ name: 'fs_create_file', arguments: { path: 'b.txt', content: 'hi' } });
    const sandbox = cleanup.sandbox();
    const result = await query(sandbox, provider, ['--json', '-c', 'conversation.tools.defaults.detached="defaults"']);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(sandbox.exists('b.txt'), false);
    const message = toolMessage(provider);
    assert.match(
      message,
      /not run: no user is available to approve it, and conversation\.tools\.defaults\.detached = "defaults" \(set in --cfg [^)]*\) \("defaults" has no default answer for running a tool\); to let it run without a user, set conversation\.tools\.fs_create_file\.detached\.run = "auto"/,
    );
    assert.doesNotMatch(message, /"deny" or "defer"/);

    const warning = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; message: string })
      .find((line) => line.type === 'warning' && /could not be answered/.test(line.message));
    assert.ok(warning, result.stderr);
    assert.match(warning.message, /the turn completed, but 1 inquiry could not be answered/);
  });
});
