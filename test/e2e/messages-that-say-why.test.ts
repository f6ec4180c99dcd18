/**
 * Messages that say why, once: a mistyped key gets "did you mean", a provider left out as
 * untrusted is named as such (not as unknown), and a call the policy denied has its reason on
 * stderr once, not three times.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runJp, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

describe('an unknown key', () => {
  it('gets "did you mean" the known key it is a typo of, wherever it is set', async () => {
    const sandbox = cleanup.sandbox();
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [
        ['-c', 'assistant.modle=openai/x'],
        {},
        /--cfg assistant\.modle=openai\/x: unknown key assistant\.modle \(did you mean assistant\.model\?\)/,
      ],
      [
        ['-c', 'conversation.tools.fs_modify_file.detahced=deny'],
        {},
        /unknown key conversation\.tools\.fs_modify_file\.detahced \(did you mean conversation\.tools\.fs_modify_file\.detached\?\)/,
      ],
      [
        [],
        { JP_CFG_ASSITANT__MODEL: 'openai/x' },
        /environment variable JP_CFG_ASSITANT__MODEL: unknown key assitant \(did you mean assistant\?\)/,
      ],
    ];
    for (const [args, env, expected] of cases) {
      const run = await runJp(sandbox, ['config', 'show', ...args], { env });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, expected);
    }
    sandbox.write('.jp/config.toml', '[providers.openai]\nbaseurl = "http://127.0.0.1:1/v1"\n');
    const file = await runJp(sandbox, ['config', 'show']);
    assert.equal(file.code, 2, file.stderr);
    assert.match(
      file.stderr,
      /config\.toml:2: unknown key providers\.openai\.baseurl \(did you mean providers\.openai\.base_url\?\)/,
    );
    sandbox.write('.jp/config.toml', '[assistant]\nzzzzzz = 1\n');
    const far = await runJp(sandbox, ['config', 'show']);
    assert.equal(far.code, 2, far.stderr);
    assert.match(far.stderr, /unknown key assistant\.zzzzzz\n/, 'nothing close: no guess');
  });
});

describe('a provider of an untrusted workspace config', () => {
  it('after jp trust --revoke, is named as defined but untrusted, with the ways to use it', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('.jp/config.toml', '[providers.openai-compatible.mock]\nbase_url = "http://127.0.0.1:9/v1"\n');
    assert.equal((await runJp(sandbox, ['trust'])).code, 0);
    assert.equal((await runJp(sandbox, ['trust', '--revoke'])).code, 0);
    const run = await runJp(sandbox, ['query', '-m', 'mock/x', 'hi']);
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /error: provider "mock" is defined in .*\.jp\/config\.toml:1, but that workspace config is not trusted, so \[providers\.openai-compatible\.mock\] is ignored/,
    );
    assert.match(run.stderr, /`jp trust` to use it/);
    assert.doesNotMatch(run.stderr, /To use an OpenAI-compatible server .* add:/, 'no advice to add what is there');
    // A provider that is nowhere is still unknown, with the advice to add it.
    const unknown = await runJp(sandbox, ['query', '-m', 'other/x', 'hi']);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.match(unknown.stderr, /unknown provider "other"[\s\S]*\[providers\.openai-compatible\.other\]/);
  });
});

describe('a call the policy denied', () => {
  it('has its reason on stderr once; the result still carries it', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'a.txt', content: 'a' } } }] },
        { parts: [{ text: 'I could not.' }] },
      ],
    });
    const run = await runJp(sandbox, ['query', ...script, 'make a']);
    assert.equal(run.code, 3, run.stderr);
    const reason = 'set conversation.tools.fs_create_file.detached.run = "auto"';
    assert.equal(run.stderr.split(reason).length - 1, 1, run.stderr);
    assert.match(run.stderr, /^ {2}↳ fs_create_file: denied$/m);
    assert.match(
      run.stderr,
      /denied or left unanswered because no user was available \(exit 3\):\n {2}- fs_create_file: why: the policy line above/,
    );

    const json = await runJp(sandbox, ['query', '--json', ...script, 'make a']);
    const result = JSON.parse(json.stdout.trim().split('\n').pop()!);
    assert.ok(result.permission_denials[0].reason.includes(reason));
  });
});
