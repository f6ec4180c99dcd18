/**
 * The engine hands streamed text to its host once per event-loop turn: a provider's burst of
 * one-token events becomes one delta (one socket message, one render), nothing is lost, and every
 * persisted chunk follows the deltas that showed it (the server's partial-text bookkeeping and
 * attach rely on that order).
 */
import { Secrets } from '../../src/redact.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent } from '../../src/conversation/events.ts';
import { runSandboxes } from '../../src/sandbox/engine.ts';
import { loadConfig } from '../../src/config/load.ts';
import { LogSeal } from '../../src/conversation/seal.ts';
import { TestChatModel } from '../../src/llm/test-provider.ts';
import { TurnRun } from '../../src/turn/engine.ts';
import type { TurnHost } from '../../src/turn/host.ts';

function recordingHost(): { host: TurnHost; log: ({ delta: string; kind: string } | { event: ConversationEvent })[] } {
  const log: ({ delta: string; kind: string } | { event: ConversationEvent })[] = [];
  const host: TurnHost = {
    append: (event) => void log.push({ event }),
    delta: (piece) => void log.push({ delta: piece.text, kind: piece.kind }),
    notice: () => {},
    toolOutput: () => {},
    activity: () => {},
    sync: () => {},
    hasPromptingClient: () => false,
    secrets: new Secrets(),
    askClient: async () => ({ answered: false }),
    inquiryResolved: () => {},
    processes: { nextMarker: () => 'test.1', started: () => {}, ended: () => {} },
  };
  return { host, log };
}

async function run(parts: { text?: string; reasoning?: string; delay_ms?: number }[]) {
  const { host, log } = recordingHost();
  const model = new TestChatModel('test/script', { steps: [{ parts: parts as never }] });
  const config = loadConfig({
    userFile: undefined,
    workspaceFile: undefined,
    environment: {},
    cfgArguments: [],
    flags: [],
  });
  const outcome = await new TurnRun({
    host,
    events: [],
    conversationId: 'jp-c1700000000000000',
    model,
    tools: new Map(),
    config,
    seal: new LogSeal(Buffer.alloc(32, 7)).at({
      conversationId: 'jp-c1700000000000000',
      workspaceId: 'w-000000000000',
    }),
    builtinDetached: () => 'deny',
    toolRoot: process.cwd(),
    toolEnvironment: () => ({}),
    sandbox: runSandboxes({
      config: config.value,
      workspaceRoot: process.cwd(),
      toolRoot: process.cwd(),
      environment: {},
    }),
    maxTurns: 5,
    systemPrompt: { text: '', files: [] },
    signal: new AbortController().signal,
    message: 'go',
    resume: false,
  }).run();
  assert.equal(outcome.status, 'completed');
  return log;
}

describe('streamed deltas', () => {
  it('a burst of 20,000 one-token parts reaches the host in a handful of deltas, all of it, in order', async () => {
    const parts = Array.from({ length: 20_000 }, (_, index) => ({ text: `w${index % 10} ` }));
    const log = await run(parts);
    const deltas = log.filter((entry): entry is { delta: string; kind: string } => 'delta' in entry);
    assert.ok(deltas.length < 100, `${deltas.length} deltas for 20,000 parts`);
    assert.equal(deltas.map((entry) => entry.delta).join(''), parts.map((part) => part.text).join(''));
  });

  it('every persisted chunk comes after the deltas that showed it; pieces of a slow stream are not held back', async () => {
    const log = await run([
      { reasoning: 'Thinking. ' },
      { text: 'First paragraph.\n\n' },
      { delay_ms: 30 },
      { text: 'Second ' },
      { delay_ms: 30 },
      { text: 'paragraph.' },
    ]);
    let shown = { message: '', reasoning: '' };
    const persisted = { message: '', reasoning: '' };
    for (const entry of log) {
      if ('delta' in entry)
        shown = { ...shown, [entry.kind]: shown[entry.kind as 'message' | 'reasoning'] + entry.delta };
      else if (entry.event.type === 'chat_response') {
        const kind = 'message' in entry.event ? 'message' : 'reasoning';
        persisted[kind] += 'message' in entry.event ? entry.event.message : entry.event.reasoning;
        assert.ok(
          shown[kind].startsWith(persisted[kind]),
          `persisted before shown: ${JSON.stringify(persisted[kind])}`,
        );
      }
    }
    assert.equal(shown.message, 'First paragraph.\n\nSecond paragraph.');
    assert.equal(shown.reasoning, 'Thinking. ');
    const messageDeltas = log
      .filter((entry) => 'delta' in entry && entry.kind === 'message')
      .map((entry) => (entry as { delta: string }).delta);
    assert.deepEqual(
      messageDeltas,
      ['First paragraph.\n\n', 'Second ', 'paragraph.'],
      'parts apart in time are sent apart',
    );
  });
});
