/**
 * The engine hands streamed text to its host once per event-loop turn: a provider's burst of
 * one-token events becomes one delta (one socket message, one render), nothing is lost, and every
 * persisted chunk follows the deltas that showed it (the server's partial-text bookkeeping and
 * attach rely on that order).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent } from '../../../src/conversation/events.ts';
import type { ChatModel, StreamPart } from '../../../src/llm/types.ts';
import { runTurn } from '../../support/in-process-turn.ts';
import { RecordingHost } from '../../support/recording-host.ts';

type Entry = { delta: string; kind: string } | { event: ConversationEvent };

/** A RecordingHost that also keeps deltas and events in the one order the engine gave them. */
class OrderedHost extends RecordingHost {
  readonly sequence: Entry[] = [];

  override append(event: ConversationEvent): void {
    super.append(event);
    this.sequence.push({ event });
  }

  override delta(piece: { kind: 'message' | 'reasoning'; text: string }): void {
    super.delta(piece);
    this.sequence.push({ delta: piece.text, kind: piece.kind });
  }
}

/**
 * A model that streams `parts` as one response, letting one event-loop turn pass between parts (a
 * stream whose pieces come apart in time, without a clock deciding how far apart).
 */
function turnApartModel(parts: StreamPart[]): ChatModel {
  return {
    id: 'test/turn-apart',
    async *stream() {
      for (const [index, part] of parts.entries()) {
        if (index > 0) await new Promise((resolve) => setImmediate(resolve));
        yield part;
      }
      yield { type: 'finish', usage: null, reason: 'stop', providerReason: null };
    },
  };
}

async function run(input: { text?: string; reasoning?: string }[] | ChatModel): Promise<Entry[]> {
  const host = new OrderedHost();
  const { outcome } = await runTurn({
    host,
    script: Array.isArray(input) ? { steps: [{ parts: input as never }] } : input,
    message: 'go',
  });
  assert.equal(outcome.status, 'completed');
  return host.sequence;
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
    const log = await run(
      turnApartModel([
        { type: 'reasoning', text: 'Thinking. ' },
        { type: 'text', text: 'First paragraph.\n\n' },
        { type: 'text', text: 'Second ' },
        { type: 'text', text: 'paragraph.' },
      ]),
    );
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
      'parts an event-loop turn apart are sent apart',
    );
  });
});
