/**
 * `assistant.reasoning` and `assistant.max_output_tokens` reach each provider in its own terms:
 * OpenAI's reasoning effort, Anthropic's thinking budget (and effort), an OpenAI-compatible
 * server's reasoning_effort. A setting a provider has no equivalent for is named on stderr; a
 * budget below Anthropic's minimum is a config error (exit 2).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startFakeProvider, textStep, type WireFormat } from '../support/fake-provider.ts';
import { fakeModelArguments, runJp, useCleanup } from '../support/jp.ts';

describe('reasoning settings and the output limit, per provider', () => {
  const cleanup = useCleanup();

  async function ask(
    wire: WireFormat,
    settings: string[],
    modelArguments?: (baseUrl: string) => { args: string[]; env: NodeJS.ProcessEnv },
  ) {
    const provider = await startFakeProvider({ wire, steps: [textStep('Thought about it.')] });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = modelArguments?.(provider.baseUrl) ?? fakeModelArguments(wire, provider.baseUrl);
    const result = await runJp(
      sandbox,
      ['query', ...model.args, ...settings.flatMap((setting) => ['-c', setting]), 'think'],
      { env: model.env },
    );
    return { result, body: provider.requests[0]?.body as Record<string, any> | undefined };
  }

  it('OpenAI Responses: effort becomes reasoning.effort; max_output_tokens becomes max_output_tokens', async () => {
    const { result, body } = await ask(
      'openai-responses',
      ['assistant.reasoning.effort="high"', 'assistant.max_output_tokens=500'],
      (baseUrl) => ({
        args: ['-m', 'openai/gpt-5-mini', '-c', `providers.openai.base_url="${baseUrl}"`],
        env: { OPENAI_API_KEY: 'sk-test-key-000000000000000000' },
      }),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(body!.reasoning.effort, 'high');
    assert.equal(body!.max_output_tokens, 500);
  });

  it('OpenAI Chat: effort becomes reasoning_effort', async () => {
    const { result, body } = await ask('openai-chat', ['assistant.reasoning.effort="low"']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(body!.reasoning_effort, 'low');
  });

  it('Anthropic: budget_tokens turns thinking on with that budget, on top of the output limit', async () => {
    const { result, body } = await ask('anthropic', [
      'assistant.reasoning.budget_tokens=2048',
      'assistant.max_output_tokens=1000',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(body!.thinking, { type: 'enabled', budget_tokens: 2048 });
    assert.equal(body!.max_tokens, 3048);
  });

  it('an OpenAI-compatible server: effort becomes reasoning_effort; budget_tokens is named as ignored', async () => {
    const { result, body } = await ask(
      'openai-chat',
      ['assistant.reasoning={ effort = "medium", budget_tokens = 4096 }'],
      (baseUrl: string) => ({
        args: ['-m', 'local/some-model', '-c', `providers.openai-compatible.local.base_url="${baseUrl}"`],
        env: {},
      }),
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(body!.reasoning_effort, 'medium');
    assert.match(
      result.stderr,
      /assistant\.reasoning\.budget_tokens \(local takes reasoning_effort, not a budget\) is ignored for local\/some-model/,
    );
  });

  it('no reasoning settings: nothing is sent for them', async () => {
    const { result, body } = await ask('anthropic', []);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(body!.thinking, undefined);
  });

  it('a budget below 1024 tokens is a config error naming the key (exit 2)', async () => {
    const sandbox = cleanup.sandbox();
    const result = await runJp(
      sandbox,
      ['query', '-m', 'anthropic/claude-x', '-c', 'assistant.reasoning.budget_tokens=100', 'think'],
      { env: { ANTHROPIC_API_KEY: 'sk-ant-000000000000000000' } },
    );
    assert.equal(result.code, 2);
    assert.match(result.stderr, /assistant\.reasoning\.budget_tokens/);
  });
});
