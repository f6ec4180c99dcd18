/**
 * The settings a conversation recorded (conversation/config-delta.ts): connection keys are never
 * taken from a conversation, also when an older jp recorded them; each setting in force is traced
 * to the event that set it last; an error is explained only by the recorded keys it names.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  connectionKey,
  explainRecordedKeys,
  recordedKeys,
  recordedSettings,
  withoutConnectionKeys,
} from '../../src/conversation/config-delta.ts';
import type { ConversationEvent } from '../../src/conversation/events.ts';
import { LogSeal } from '../../src/conversation/seal.ts';
import { ProviderError } from '../../src/errors.ts';

const id = 'jp-c1767225600000001';
const seal = new LogSeal(Buffer.alloc(32, 7)).at({ conversationId: id, workspaceId: 'w-000000000000' });

function log(...deltas: { delta: Record<string, unknown>; query?: string; at: string }[]): ConversationEvent[] {
  const events: ConversationEvent[] = [];
  for (const entry of deltas) {
    events.push(
      seal.seal(
        {
          type: 'config_delta',
          timestamp: entry.at,
          delta: entry.delta,
          ...(entry.query ? { query: entry.query } : {}),
        },
        events,
      ),
    );
    events.push({ type: 'turn_start', timestamp: entry.at });
    events.push({ type: 'chat_request', timestamp: entry.at, content: `message at ${entry.at}` });
  }
  return events;
}

describe('connection keys', () => {
  it('are a provider address, its wire API and its key variable, and an OpenAI-compatible server table', () => {
    for (const path of [
      ['providers', 'openai', 'base_url'],
      ['providers', 'openai', 'api'],
      ['providers', 'anthropic', 'api_key_env'],
      ['providers', 'ollama', 'base_url'],
      ['providers', 'openai-compatible', 'mock', 'context_window'],
      ['providers', 'openai'],
    ])
      assert.equal(connectionKey(path), true, path.join('.'));
    for (const path of [
      ['providers', 'test', 'script'],
      ['assistant', 'model'],
      ['mcp', 'servers', 'x', 'url'],
    ])
      assert.equal(connectionKey(path), false, path.join('.'));
    assert.deepEqual(
      withoutConnectionKeys({
        assistant: { model: 'openai/x' },
        providers: { openai: { base_url: 'http://127.0.0.1:1/v1' }, test: { script: 's.json' } },
      }),
      {
        kept: { assistant: { model: 'openai/x' }, providers: { test: { script: 's.json' } } },
        dropped: ['providers.openai.base_url'],
      },
    );
  });

  it('recorded by an older jp (sealed) are ignored and named; the rest still configures', () => {
    const events = log({
      delta: { assistant: { model: 'openai/x' }, providers: { openai: { base_url: 'http://127.0.0.1:1/v1' } } },
      at: '2026-01-01T00:00:00.000Z',
    });
    const settings = recordedSettings(events, seal);
    assert.deepEqual(settings.delta, { assistant: { model: 'openai/x' } });
    assert.deepEqual(settings.connectionKeys, ['providers.openai.base_url']);
    assert.deepEqual(settings.foreignKeys, []);
  });
});

describe('recorded keys', () => {
  it('trace each setting to the event that set it last, and its query (else the message sent after it)', () => {
    const events = log(
      { delta: { assistant: { model: 'a/b', max_turns: 3 } }, at: '2026-01-01T00:00:00.000Z' },
      { delta: { assistant: { max_turns: 5 } }, query: 'the second', at: '2026-01-02T00:00:00.000Z' },
    );
    assert.deepEqual(recordedKeys(events, seal), [
      { key: 'assistant.max_turns', value: 5, recordedAt: '2026-01-02T00:00:00.000Z', query: 'the second' },
      {
        key: 'assistant.model',
        value: 'a/b',
        recordedAt: '2026-01-01T00:00:00.000Z',
        query: 'message at 2026-01-01T00:00:00.000Z',
      },
    ]);
  });

  it('a later table replaces the scalar it covers, and the other way round', () => {
    const events = log(
      { delta: { conversation: { tools: { defaults: { detached: 'auto' } } } }, at: '2026-01-01T00:00:00.000Z' },
      {
        delta: { conversation: { tools: { defaults: { detached: { run: 'deny' } } } } },
        at: '2026-01-02T00:00:00.000Z',
      },
    );
    assert.deepEqual(
      recordedKeys(events, seal).map((entry) => entry.key),
      ['conversation.tools.defaults.detached.run'],
    );
  });

  it('an unsealed delta is no recorded key', () => {
    const events: ConversationEvent[] = [
      { type: 'config_delta', timestamp: '2026-01-01T00:00:00.000Z', delta: { assistant: { model: 'a/b' } } },
    ];
    assert.deepEqual(recordedKeys(events, seal), []);
  });

  it('explain an error only by the keys (or values) it names', () => {
    const keys = recordedKeys(
      log({ delta: { assistant: { model: 'openai/gpt-nope', max_turns: 3 } }, at: '2026-01-01T00:00:00.000Z' }),
      seal,
    );
    const named = explainRecordedKeys(
      new ProviderError('model_not_found', 'openai/gpt-nope: no such model', { hint: 'Check -m.' }),
      id,
      keys,
    );
    assert.equal(named.code, 'model_not_found');
    assert.equal(named.exitCode, 1);
    assert.match(named.hint!, /^Check -m\.\nassistant\.model = "openai\/gpt-nope" comes from conversation jp-c\d+/);
    assert.doesNotMatch(named.hint!, /max_turns/);
    const unrelated = new ProviderError('overloaded', 'the provider is overloaded');
    assert.equal(explainRecordedKeys(unrelated, id, keys), unrelated);
  });
});
