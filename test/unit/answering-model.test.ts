/**
 * Whether the model a provider says answered is another than the one asked for: a dated snapshot, a
 * tag or a file path ending in the name asked for are the same model; a server's one loaded model
 * answering for any name is not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { askedModel, isOtherModel } from '../../src/llm/answering-model.ts';

describe('the model that answered', () => {
  it('the same model under the names providers answer with', () => {
    for (const [asked, answered] of [
      ['gpt-4.1-mini', 'gpt-4.1-mini-2025-04-14'],
      ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929'],
      ['llama3', 'llama3:latest'],
      ['stories260k', 'models/stories260K.gguf'],
      ['Qwen3-8B', 'qwen3-8b'],
      ['anthropic/claude-3.5-sonnet', 'anthropic/claude-3.5-sonnet'],
      ['gpt-4o-mini', ''],
    ] as const)
      assert.equal(isOtherModel(asked, answered), false, `${asked} answered as ${answered}`);
  });

  it("another model: llama-server's one model answering for any name", () => {
    assert.equal(isOtherModel('gpt-4o-mini', 'stories260k'), true);
    assert.equal(isOtherModel('qwen3', 'llama-3.2-3b-instruct'), true);
  });

  it('the name asked for is what follows the provider in the model id', () => {
    assert.equal(askedModel('llamacpp/gpt-4o-mini'), 'gpt-4o-mini');
    assert.equal(askedModel('openrouter/anthropic/claude-3.5-sonnet'), 'anthropic/claude-3.5-sonnet');
  });
});
