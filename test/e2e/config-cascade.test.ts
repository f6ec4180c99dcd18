/**
 * The cascade merges across layers, on the real binary (issue 37 point 5): RFD 019's scalar-or-table
 * `detached` keeps a user's `detached = "auto"` when a later layer adds `escalate` (the README's own
 * advice) or sets one kind; a later layer adding one key of a provider's table keeps the table's
 * other keys; `jp config show --effective` names the key and the layer each value came from.
 * test/unit/config/cascade.test.ts takes every pair of layers; here the pairs a user meets.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { textStep } from '../support/fake-provider.ts';
import { fakeModel, runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';
import { writeUserConfig } from '../support/mcp.ts';

const cleanup = useCleanup();

/** A headless query whose model runs `echo ran > ran.txt` (inside the sandbox), then answers. */
function runCommandScript(sandbox: Sandbox): string[] {
  return testProvider(sandbox, {
    steps: [
      { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } } }] },
      { parts: [{ text: 'done' }] },
    ],
  });
}

const escalateAuto = ['-c', 'conversation.tools.defaults.detached.escalate="auto"'];

describe('the cascade merges across layers (the binary)', () => {
  it('user detached = "auto" with -c …detached.escalate="auto": a headless run still runs the command (run stays auto)', async () => {
    const sandbox = cleanup.sandbox();
    const userFile = writeUserConfig(sandbox, '[conversation.tools.defaults]\ndetached = "auto"\n');
    const result = await runJp(sandbox, ['query', '--json', ...runCommandScript(sandbox), ...escalateAuto, 'go']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');

    const shown = await runJp(sandbox, ['config', 'show', ...escalateAuto, '--effective', 'run_command']);
    assert.equal(shown.code, 0, shown.stderr);
    const escaped = userFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    assert.match(
      shown.stdout,
      new RegExp(`detached\\.run +\\= auto +set by conversation\\.tools\\.defaults\\.detached \\(${escaped}\\)`),
    );
    assert.match(
      shown.stdout,
      /detached\.escalate += auto +set by conversation\.tools\.defaults\.detached\.escalate \(--cfg conversation\.tools\.defaults\.detached\.escalate="auto"\)/,
    );
    const json = await runJp(sandbox, ['config', 'show', '--json', ...escalateAuto, '--effective', 'run_command']);
    const effective = JSON.parse(json.stdout);
    assert.deepEqual(effective.detached.run, {
      policy: 'auto',
      key: 'conversation.tools.defaults.detached',
      layer: userFile,
      with_detach: 'auto',
    });
    assert.equal(effective.detached.escalate.policy, 'auto');
  });

  it('a workspace setting only detached.tool = "deny" keeps the user\'s run = "auto"', async () => {
    const sandbox = cleanup.sandbox({ config: '[conversation.tools.defaults.detached]\ntool = "deny"\n' });
    writeUserConfig(sandbox, '[conversation.tools.defaults]\ndetached = "auto"\n');
    const result = await runJp(sandbox, ['query', '--json', ...runCommandScript(sandbox), 'go']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');
    const shown = await runJp(sandbox, ['config', 'show', '--effective', 'run_command']);
    assert.match(shown.stdout, /detached\.run += auto/);
    assert.match(
      shown.stdout,
      /detached\.tool += deny +set by conversation\.tools\.defaults\.detached\.tool \(.*\.jp\/config\.toml\)/,
    );
  });

  it("JP_CFG_…DETACHED__ESCALATE over the user scalar, and a later query's -c over the conversation's recorded scalar", async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, '[conversation.tools.defaults]\ndetached = "auto"\n');
    const environment = { JP_CFG_CONVERSATION__TOOLS__DEFAULTS__DETACHED__ESCALATE: 'auto' };
    const viaEnvironment = await runJp(sandbox, ['query', '--new', ...runCommandScript(sandbox), 'go'], {
      env: environment,
    });
    assert.equal(viaEnvironment.code, 0, viaEnvironment.stderr);
    assert.equal(sandbox.read('ran.txt'), 'ran\n');

    // The conversation records the scalar given with -c; the next query adds escalate with -c.
    const bare = cleanup.sandbox();
    const first = await runJp(bare, [
      'query',
      '--new',
      ...testProvider(bare, { steps: [{ parts: [{ text: 'hi' }] }] }, 'first.json'),
      '-c',
      'conversation.tools.defaults.detached="auto"',
      'hi',
    ]);
    assert.equal(first.code, 0, first.stderr);
    const second = await runJp(bare, ['query', ...runCommandScript(bare), ...escalateAuto, 'go']);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(bare.read('ran.txt'), 'ran\n', "the conversation's recorded run = auto still holds");
  });

  it("-c providers.openai-compatible.llamacpp.context_window=2048 with the provider's base_url in the user config works", async () => {
    const sandbox = cleanup.sandbox();
    const { provider } = await fakeModel(cleanup, [textStep('Hello from llamacpp.')]);
    writeUserConfig(sandbox, `[providers.openai-compatible.llamacpp]\nbase_url = "${provider.baseUrl}"\n`);
    // --no-tools: jp refuses a request its least estimate says a 2,048-token window cannot hold (the tools alone fill it).
    const result = await runJp(sandbox, [
      'query',
      '--no-tools',
      '-m',
      'llamacpp/qwen3',
      '-c',
      'providers.openai-compatible.llamacpp.context_window=2048',
      'hi',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Hello from llamacpp\./);

    const missing = await runJp(sandbox, [
      'query',
      '-m',
      'other/qwen3',
      '-c',
      'providers.openai-compatible.other.context_window=2048',
      'hi',
    ]);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /--cfg providers\.openai-compatible\.other\.context_window=2048: invalid value for providers\.openai-compatible\.other\.base_url: expected string, got nothing/,
    );
  });
});
