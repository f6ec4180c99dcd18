/**
 * The pure parts of context management: cut points, the cut, the request estimate, Anthropic cache
 * breakpoints, context windows and the providers' stated limits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent } from '../../src/conversation/events.ts';
import { LogSeal } from '../../src/conversation/seal.ts';
import { ProviderError } from '../../src/errors.ts';
import { contextWindow, defaultContextWindow } from '../../src/llm/context-window.ts';
import { statedContextLimit } from '../../src/llm/provider-errors.ts';
import type { ModelSpec } from '../../src/llm/resolve.ts';
import { cacheBreakpoints } from '../../src/llm/sdk-prompt.ts';
import type { PromptMessage } from '../../src/llm/types.ts';
import { summaryBudget } from '../../src/turn/compact.ts';
import { chooseCut, cutPoints, estimateRequest, measuredCharactersPerToken } from '../../src/turn/compaction.ts';
import { buildPrompt, summaryMessage } from '../../src/turn/history.ts';

const ts = '2026-01-01T00:00:00.000Z';
const usage = (input: number) => ({
  input_tokens: input,
  output_tokens: 10,
  reasoning_tokens: null,
  cached_input_tokens: null,
  cache_write_tokens: null,
  total_tokens: input + 10,
});

/** A turn with two tool rounds, then a second turn. Positions are noted. */
const log: ConversationEvent[] = [
  { type: 'turn_start', timestamp: ts }, // 0
  { type: 'chat_request', timestamp: ts, content: 'read a and b' }, // 1
  { type: 'tool_call_request', timestamp: ts, id: 'c1', name: 'fs_read_file', arguments: { path: 'a' } }, // 2
  { type: 'tool_call_request', timestamp: ts, id: 'c2', name: 'fs_read_file', arguments: { path: 'b' } }, // 3
  { type: 'usage', timestamp: ts, model: 'm', purpose: 'step', usage: usage(100) }, // 4
  { type: 'tool_call_start', timestamp: ts, id: 'c1' }, // 5
  { type: 'tool_call_response', timestamp: ts, id: 'c1', content: 'A'.repeat(3000), is_error: false, outcome: 'ok' }, // 6
  { type: 'tool_call_response', timestamp: ts, id: 'c2', content: 'B'.repeat(3000), is_error: false, outcome: 'ok' }, // 7
  { type: 'chat_response', timestamp: ts, message: 'Both read.' }, // 8
  { type: 'usage', timestamp: ts, model: 'm', purpose: 'step', usage: usage(2200) }, // 9
  { type: 'turn_end', timestamp: ts, status: 'completed' }, // 10
  { type: 'turn_start', timestamp: ts }, // 11
  { type: 'chat_request', timestamp: ts, content: 'now c' }, // 12
];

describe('cut points', () => {
  it('never leave a call without its result, never split a step, and summarise something', () => {
    // 6 has c2 still open; 7 ends the batch; 10 ends the turn; 11 is followed by a request.
    assert.deepEqual(cutPoints(log, 0), [7, 10, 11]);
    assert.deepEqual(cutPoints(log, 8), [10, 11]);
    assert.deepEqual(cutPoints(log, 12), []);
  });

  it('the cut keeps at most the given tokens word for word, else takes the last point', () => {
    assert.equal(chooseCut(log, [7, 10, 11], 100), 7);
    assert.equal(chooseCut(log, [7, 10, 11], 1), 11);
    assert.equal(chooseCut(log, [], 100), undefined);
  });
});

describe('the request estimate', () => {
  it("is the last step request's reported input and output plus what came after it, in characters / 3", () => {
    const events = log.slice(0, 9);
    // usage at 4: 100 + 10, then the two results (3048 each) and the answer (26).
    assert.equal(estimateRequest(events, [], []).tokens, 110 + Math.ceil((3048 * 2 + 26) / 3));
  });

  it('with no report since the compaction in force, the whole request in characters / 3', () => {
    const events: ConversationEvent[] = [
      ...log,
      { type: 'compaction', timestamp: ts, summary: 'read a and b', replaces: [0, 10], reason: 'threshold' },
    ];
    const messages = buildPrompt(events, 'system');
    assert.equal(messages.length, 3);
    assert.equal(estimateRequest(events, messages, []).tokens, Math.ceil((JSON.stringify(messages).length + 2) / 3));
  });
});

describe('the prompt after a compaction', () => {
  it('is the system prompt, the summary, then the events after the range', () => {
    const events: ConversationEvent[] = [
      ...log.slice(0, 8),
      { type: 'compaction', timestamp: ts, summary: 'S', replaces: [0, 7], reason: 'threshold' },
      ...log.slice(8),
    ];
    const messages = buildPrompt(events, 'system');
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.equal((messages[1] as { summary?: true }).summary, true);
  });

  it("a summary whose range holds the user's current question is followed by the question, word for word", () => {
    // A turn that ended with an error, compacted whole (as a refusal on resume does).
    const events: ConversationEvent[] = [
      ...log.slice(0, 11),
      { type: 'turn_start', timestamp: ts }, // 11
      { type: 'chat_request', timestamp: ts, content: 'what next?' }, // 12
      { type: 'turn_end', timestamp: ts, status: 'error', error: { code: 'x', message: 'x' } }, // 13
      { type: 'compaction', timestamp: ts, summary: 'S', replaces: [0, 13], reason: 'context_length' },
    ];
    const messages = buildPrompt(events, 'system');
    assert.deepEqual(
      messages.map((message) => [message.role, message.role === 'user' ? message.content : '']),
      [
        ['system', ''],
        ['user', summaryMessage('S')],
        ['user', 'what next?'],
      ],
    );
    // Its cache breakpoint is after the question, which stays until the next compaction too.
    assert.deepEqual(cacheBreakpoints(messages), [0, 2]);
  });

  it('a compaction inside a discarded turn is not in force', () => {
    const events: ConversationEvent[] = [
      ...log.slice(0, 11),
      { type: 'turn_start', timestamp: ts },
      { type: 'chat_request', timestamp: ts, content: 'x' },
      { type: 'compaction', timestamp: ts, summary: 'S', replaces: [0, 10], reason: 'threshold' },
      { type: 'turn_end', timestamp: ts, status: 'discarded' },
    ];
    assert.ok(!buildPrompt(events, undefined).some((message) => message.role === 'user' && message.summary));
  });
});

describe('characters per token, measured', () => {
  const measuredUsage = (characters: number, input: number): ConversationEvent => ({
    type: 'usage',
    timestamp: ts,
    model: 'm',
    purpose: 'step',
    usage: usage(input),
    request_characters: characters,
  });

  it('the last step request that reported its input tokens gives the ratio both estimates use', () => {
    const events: ConversationEvent[] = [...log.slice(0, 4), measuredUsage(2400, 1500), ...log.slice(5, 9)];
    assert.equal(measuredCharactersPerToken(events), 1.6);
    const estimate = estimateRequest(events, [], []);
    // 1500 reported + 10 output, then 6,122 characters at 1.6 (likely) and at the same 1.6 (least).
    assert.equal(estimate.tokens, 1510 + Math.ceil((3048 * 2 + 26) / 1.6));
    assert.equal(estimate.least, 1500 + Math.floor((3048 * 2 + 26) / 1.6));
    assert.equal(estimate.measured, 1.6);
  });

  it('unmeasured, 3 characters a token are likely and 4 the least', () => {
    const messages: PromptMessage[] = [{ role: 'user', content: 'x'.repeat(1200) }];
    const estimate = estimateRequest([], messages, []);
    const characters = JSON.stringify(messages).length + 2;
    assert.deepEqual(estimate, {
      tokens: Math.ceil(characters / 3),
      least: Math.floor(characters / 4),
      measured: undefined,
    });
  });
});

describe('the summary budget', () => {
  it('a large window: an eighth for the summary, a quarter kept', () => {
    const budget = summaryBudget(16_000, 3, 'm', { fixedTokens: 500, threshold: 0.8 });
    assert.equal(budget.outputTokens, 2000);
    assert.equal(budget.keepTokens, 4000);
    assert.equal(budget.transcriptTokens, 8000);
  });

  it('a window the fixed part nearly fills: the summary gets a share of what is left, never the window', () => {
    // 2,048 tokens, 1,700 of them system prompt and question: past the threshold already.
    const budget = summaryBudget(2048, 1.6, 'm', { fixedTokens: 1700, threshold: 0.8 });
    assert.ok(budget.outputTokens >= 16 && budget.outputTokens < 200, JSON.stringify(budget));
    assert.ok(1700 + budget.outputTokens + budget.keepTokens < 2048, JSON.stringify(budget));
  });

  it('a window that cannot hold a compaction request is said so', () => {
    assert.throws(() => summaryBudget(300, 3, 'm', { fixedTokens: 0, threshold: 0.8 }), {
      code: 'context_window_too_small',
    });
  });
});

describe('Anthropic cache breakpoints', () => {
  const system: PromptMessage = { role: 'system', content: 's' };
  const user: PromptMessage = { role: 'user', content: 'u' };
  const step = (id: string): PromptMessage[] => [
    { role: 'assistant', text: '', toolCalls: [{ id, name: 't', arguments: {} }] },
    { role: 'tool', results: [{ id, name: 't', content: 'r', isError: false }] },
  ];

  it('the system block, where the previous request ended, and the last message', () => {
    assert.deepEqual(cacheBreakpoints([system, user]), [0, 1]);
    assert.deepEqual(cacheBreakpoints([system, user, ...step('1')]), [0, 1, 3]);
    assert.deepEqual(cacheBreakpoints([system, user, ...step('1'), ...step('2')]), [0, 3, 5]);
  });

  it('with a compaction summary, it too; never more than four', () => {
    const summary: PromptMessage = { role: 'user', content: 'S', summary: true };
    const marks = cacheBreakpoints([system, summary, ...step('1'), ...step('2'), ...step('3')]);
    assert.deepEqual(marks, [0, 1, 5, 7]);
    assert.ok(cacheBreakpoints([summary, user, ...step('1')]).length <= 4);
  });
});

describe('context windows', () => {
  const spec = (provider: ModelSpec['provider'], model: string, compatibleName?: string): ModelSpec => ({
    id: `${provider}/${model}`,
    provider,
    model,
    ...(compatibleName ? { compatibleName } : {}),
  });

  it('comes from the table by the longest prefix, the config, or the default', () => {
    assert.deepEqual(contextWindow(spec('anthropic', 'claude-sonnet-4-5-20250929'), {}), {
      tokens: 200_000,
      source: 'table',
    });
    assert.deepEqual(contextWindow(spec('openai', 'gpt-4.1-mini'), {}), { tokens: 1_047_576, source: 'table' });
    assert.deepEqual(contextWindow(spec('openai', 'gpt-4o-mini'), {}), { tokens: 128_000, source: 'table' });
    assert.deepEqual(contextWindow(spec('openai', 'gpt-5.1-codex'), {}), { tokens: 272_000, source: 'table' });
    assert.deepEqual(contextWindow(spec('ollama', 'qwen3'), {}), { tokens: defaultContextWindow, source: 'default' });
    assert.deepEqual(contextWindow(spec('openai', 'gpt-4.1'), { assistant: { context_window: 5000 } }), {
      tokens: 5000,
      source: 'assistant.context_window',
    });
    const compatible = {
      providers: { 'openai-compatible': { llama: { base_url: 'http://127.0.0.1:8080/v1', context_window: 8192 } } },
    };
    assert.deepEqual(contextWindow(spec('openai-compatible', 'qwen', 'llama'), compatible), {
      tokens: 8192,
      source: 'providers.openai-compatible.llama.context_window',
    });
    assert.equal(contextWindow(spec('test', 'script'), {}), undefined);
  });

  it("reads the limit each provider's refusal states", () => {
    const said = (message: string) => statedContextLimit(new ProviderError('context_length_exceeded', message));
    assert.equal(said('x: Anthropic refused ...: prompt is too long: 208310 tokens > 200000 maximum'), 200_000);
    assert.equal(
      said(
        "x: OpenAI refused ...: This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
      ),
      128_000,
    );
    assert.equal(
      said('x: llama refused ...: request (4476 tokens) exceeds the available context size (4096 tokens)'),
      4096,
    );
    assert.equal(said('x: refused: Your input exceeds the context window of this model.'), undefined);
  });
});

describe('forking a compacted conversation', () => {
  it("keeps compactions between turns and points their range at the fork's own positions", async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const { createConversation } = await import('../../src/conversation/store.ts');
    const { forkConversation } = await import('../../src/conversation/fork.ts');
    const { readEventLog } = await import('../../src/conversation/reader.ts');
    const { eventsFile } = await import('../../src/conversation/store.ts');
    const directory = mkdtempSync(path.join(os.tmpdir(), 'jp-fork-'));
    try {
      const events: ConversationEvent[] = [
        { type: 'turn_start', timestamp: ts }, // 0: discarded, not copied
        { type: 'chat_request', timestamp: ts, content: 'dropped' }, // 1
        { type: 'turn_end', timestamp: ts, status: 'discarded' }, // 2
        ...log.slice(0, 11), // 3..13: a completed turn
        { type: 'compaction', timestamp: ts, summary: 'S', replaces: [0, 13], reason: 'manual' }, // 14, between turns
        { type: 'turn_start', timestamp: ts },
        { type: 'chat_request', timestamp: ts, content: 'next' },
        { type: 'chat_response', timestamp: ts, message: 'ok' },
        { type: 'turn_end', timestamp: ts, status: 'completed' },
      ];
      const source = createConversation(directory, {
        log: () => events.map((event) => JSON.stringify(event) + '\n').join(''),
      });
      const fork = forkConversation(directory, source.id, new LogSeal(Buffer.alloc(32, 3)), 'w-000000000000').metadata;
      const copied = readEventLog(eventsFile(directory, fork.id)).events;
      assert.equal(copied.length, events.length - 3);
      const compaction = copied.find((event) => event.type === 'compaction');
      assert.deepEqual(compaction && compaction.type === 'compaction' ? compaction.replaces : undefined, [0, 10]);
      assert.deepEqual(
        buildPrompt(copied, undefined).map((message) => message.role),
        ['user', 'user'],
        'the summary, then the turn after it',
      );
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
