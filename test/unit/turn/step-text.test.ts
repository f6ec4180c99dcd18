/**
 * A step's text (src/turn/step-text.ts): every transition of its contract, on a recording sink that
 * also checks, at every persisted chunk, that clients were shown all of it first.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventOf } from '../../../src/conversation/events.ts';
import { Secrets } from '../../../src/redact.ts';
import { DeltaQueue } from '../../../src/turn/delta-queue.ts';
import { flushThreshold, StepText, type TextKind } from '../../../src/turn/step-text.ts';

const secret = 'sk-canary-0123456789';
const secrets = new Secrets();
secrets.add({ STEP_TEXT_KEY: secret }, ['STEP_TEXT_KEY']);

/** A chat_response without its timestamp. */
type Chunk = EventOf<'chat_response'> extends infer E ? (E extends unknown ? Omit<E, 'timestamp'> : never) : never;
type Entry = { show: TextKind; text: string } | { persist: Chunk };

function recordedStep(): { step: StepText; log: Entry[]; shown: Record<TextKind, string>; persisted: () => Entry[] } {
  const log: Entry[] = [];
  const shown = { message: '', reasoning: '' };
  const persistedText = { message: '', reasoning: '' };
  const step = new StepText(
    {
      show: (kind, text) => {
        assert.notEqual(text, '', 'an empty piece is never shown');
        shown[kind] += text;
        log.push({ show: kind, text });
      },
      persist: (event) => {
        assert.equal(event.type, 'chat_response');
        assert.match(event.timestamp, /^\d{4}-\d\d-\d\dT/);
        const { timestamp: _, ...chunk } = event;
        const kind: TextKind = 'message' in chunk ? 'message' : 'reasoning';
        persistedText[kind] += 'message' in chunk ? chunk.message : chunk.reasoning;
        assert.ok(
          shown[kind].startsWith(persistedText[kind]),
          `persisted before shown: ${JSON.stringify(persistedText[kind])}`,
        );
        log.push({ persist: chunk });
      },
    },
    secrets,
  );
  return { step, log, shown, persisted: () => log.filter((entry) => 'persist' in entry) };
}

describe('StepText while streaming', () => {
  it('a message piece is shown at once and persisted at the paragraph break it brings; the rest at finish', () => {
    const { step, log } = recordedStep();
    step.message('Hello ');
    assert.deepEqual(log, [{ show: 'message', text: 'Hello ' }]);
    step.message('world.\n\nNext');
    step.finish();
    assert.deepEqual(log, [
      { show: 'message', text: 'Hello ' },
      { show: 'message', text: 'world.\n\nNext' },
      { persist: { type: 'chat_response', message: 'Hello world.\n\n' } },
      { persist: { type: 'chat_response', message: 'Next' } },
    ]);
  });

  it('a single newline is no paragraph break; text without one is persisted whole once flushThreshold characters are pending', () => {
    const { step, persisted } = recordedStep();
    step.message('line one\nline two');
    assert.deepEqual(persisted(), []);
    step.message('x'.repeat(flushThreshold - 'line one\nline two'.length - 1));
    assert.deepEqual(persisted(), [], 'one character short of the threshold');
    step.message('y');
    assert.equal(persisted().length, 1);
    const [first] = persisted();
    assert.ok(first && 'persist' in first && 'message' in first.persist);
    assert.equal(
      first.persist.message,
      'line one\nline two' + 'x'.repeat(flushThreshold - 'line one\nline two'.length - 1) + 'y',
    );
    step.finish();
    assert.equal(persisted().length, 1, 'nothing was left pending');
  });

  it('a secret split across two pieces is never shown nor persisted: its possible start is held back until the next piece decides', () => {
    const { step, log, shown } = recordedStep();
    step.message('the key is sk-can');
    assert.equal(shown.message, 'the key is ', 'the start of the secret is held back');
    step.message('ary-0123456789, keep it');
    step.finish();
    assert.equal(shown.message, 'the key is [REDACTED], keep it');
    assert.deepEqual(log.at(-1), { persist: { type: 'chat_response', message: 'the key is [REDACTED], keep it' } });
    assert.ok(!JSON.stringify(log).includes('sk-can'), JSON.stringify(log));
  });

  it('what was held back as a possible secret is released as text at the step end, shown before it is persisted', () => {
    const { step, log } = recordedStep();
    step.message('ends with sk-can');
    step.finish();
    assert.deepEqual(log, [
      { show: 'message', text: 'ends with ' },
      { show: 'message', text: 'sk-can' },
      { persist: { type: 'chat_response', message: 'ends with sk-can' } },
    ]);
  });

  it('message and reasoning are redacted apart: a secret start in the reasoning is not completed by the message', () => {
    const { step, shown, persisted } = recordedStep();
    step.reasoning('thinking of sk-can');
    step.message('ary-0123456789');
    assert.equal(shown.message, 'ary-0123456789');
    assert.equal(shown.reasoning, 'thinking of ');
    step.reasoningEnd();
    assert.equal(shown.reasoning, 'thinking of sk-can');
    assert.deepEqual(persisted(), [{ persist: { type: 'chat_response', reasoning: 'thinking of sk-can' } }]);
  });

  it('reasoning then message: the reasoning block is persisted at its end with the provider metadata, the message at finish', () => {
    const { step, log } = recordedStep();
    const metadata = { anthropic: { signature: 'sig-1' } };
    step.reasoning('Let me think.');
    step.reasoningEnd(metadata);
    step.message('The answer.');
    step.finish();
    assert.deepEqual(log, [
      { show: 'reasoning', text: 'Let me think.' },
      { persist: { type: 'chat_response', reasoning: 'Let me think.', provider_metadata: metadata } },
      { show: 'message', text: 'The answer.' },
      { persist: { type: 'chat_response', message: 'The answer.' } },
    ]);
  });

  it('a reasoning end with metadata and no text persists an empty reasoning chunk; with neither, nothing', () => {
    const withMetadata = recordedStep();
    withMetadata.step.reasoningEnd({ anthropic: { redacted: 'opaque' } });
    assert.deepEqual(withMetadata.log, [
      { persist: { type: 'chat_response', reasoning: '', provider_metadata: { anthropic: { redacted: 'opaque' } } } },
    ]);
    const bare = recordedStep();
    bare.step.reasoningEnd();
    assert.deepEqual(bare.log, []);
  });

  it('before a tool call everything pending is persisted, reasoning first, without the sources', () => {
    const { step, persisted } = recordedStep();
    step.source({ url: 'https://example.com/a' });
    step.reasoning('Need a tool');
    step.message('Looking it up');
    step.beforeToolCall('jp');
    assert.deepEqual(persisted(), [
      { persist: { type: 'chat_response', reasoning: 'Need a tool' } },
      { persist: { type: 'chat_response', message: 'Looking it up' } },
    ]);
    step.finish();
    assert.deepEqual(
      persisted().at(-1),
      { persist: { type: 'chat_response', message: '', sources: [{ url: 'https://example.com/a' }] } },
      'the sources wait for the step end',
    );
  });

  it('a call the provider runs marks the step shown, one jp runs does not', () => {
    const provider = recordedStep();
    provider.step.beforeToolCall('provider');
    provider.step.cut();
    assert.deepEqual(provider.log, [{ persist: { type: 'chat_response', message: '', incomplete: true } }]);
    const own = recordedStep();
    own.step.beforeToolCall('jp');
    own.step.cut();
    assert.deepEqual(own.log, []);
  });
});

describe('StepText at the step end', () => {
  it('finish puts the sources, once each (by url, else by title and file), on the last message chunk', () => {
    const { step, persisted } = recordedStep();
    step.message('See the docs.');
    step.source({ url: 'https://example.com/a', title: 'A' });
    step.source({ url: 'https://example.com/a', title: 'A again' });
    step.source({ title: 'Report', filename: 'report.pdf' });
    step.source({ title: 'Report', filename: 'report.pdf' });
    step.source({ title: 'Report', filename: 'other.pdf' });
    step.finish();
    assert.deepEqual(persisted(), [
      {
        persist: {
          type: 'chat_response',
          message: 'See the docs.',
          sources: [
            { url: 'https://example.com/a', title: 'A' },
            { title: 'Report', filename: 'report.pdf' },
            { title: 'Report', filename: 'other.pdf' },
          ],
        },
      },
    ]);
  });

  it('an empty step writes and shows nothing, finished or cut', () => {
    const finished = recordedStep();
    finished.step.finish();
    assert.deepEqual(finished.log, []);
    const cut = recordedStep();
    cut.step.cut();
    assert.deepEqual(cut.log, []);
  });

  it('an interrupted step keeps its partial text, held-back text included, marked incomplete, and no sources', () => {
    const { step, log } = recordedStep();
    step.message('Partial answer with sk-can');
    step.source({ url: 'https://example.com/a' });
    step.cut();
    assert.deepEqual(log, [
      { show: 'message', text: 'Partial answer with ' },
      { show: 'message', text: 'sk-can' },
      { persist: { type: 'chat_response', message: 'Partial answer with sk-can', incomplete: true } },
    ]);
  });

  it('a step cut after showing only reasoning persists the reasoning, then an empty incomplete message', () => {
    const { step, persisted } = recordedStep();
    step.reasoning('Halfway through');
    step.cut();
    assert.deepEqual(persisted(), [
      { persist: { type: 'chat_response', reasoning: 'Halfway through' } },
      { persist: { type: 'chat_response', message: '', incomplete: true } },
    ]);
  });

  it('after its end, cut does nothing (an error after a shown step: no incomplete marker) and more text is an internal error', () => {
    const { step, log } = recordedStep();
    step.message('Done.');
    step.finish();
    const before = log.length;
    step.cut();
    assert.equal(log.length, before);
    assert.throws(() => step.message('late'), /StepText\.message after the step ended/);
    assert.throws(() => step.beforeToolCall('jp'), /after the step ended/);
  });
});

describe('DeltaQueue', () => {
  it('pieces of one kind in a row become one delta; send() delivers at once and empties the queue', () => {
    const delivered: { kind: TextKind; text: string }[] = [];
    const queue = new DeltaQueue((piece) => void delivered.push(piece));
    queue.push('reasoning', 'a');
    queue.push('reasoning', 'b');
    queue.push('message', 'c');
    queue.push('reasoning', 'd');
    queue.send();
    assert.deepEqual(delivered, [
      { kind: 'reasoning', text: 'ab' },
      { kind: 'message', text: 'c' },
      { kind: 'reasoning', text: 'd' },
    ]);
    queue.send();
    assert.equal(delivered.length, 3);
  });

  it('what is not sent is delivered when the event loop turns', async () => {
    const delivered: { kind: TextKind; text: string }[] = [];
    const queue = new DeltaQueue((piece) => void delivered.push(piece));
    queue.push('message', 'x');
    queue.push('message', 'y');
    assert.deepEqual(delivered, []);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(delivered, [{ kind: 'message', text: 'xy' }]);
    queue.push('message', 'z');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(delivered, [
      { kind: 'message', text: 'xy' },
      { kind: 'message', text: 'z' },
    ]);
  });
});
