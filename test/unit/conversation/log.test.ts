import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import type { ConversationEvent } from '../../../src/conversation/events.ts';
import { ConversationLog } from '../../../src/conversation/log.ts';
import { parseEventLog } from '../../../src/conversation/reader.ts';
import { JpError } from '../../../src/errors.ts';

const timestamp = '2026-11-22T00:00:00.000Z';
const sample: ConversationEvent[] = [
  { type: 'turn_start', timestamp },
  { type: 'chat_request', timestamp, content: 'hello — ünïcödé 🎉' },
  { type: 'chat_response', timestamp, message: 'Let me look.\n\n' },
  { type: 'tool_call_request', timestamp, id: 'call_1', name: 'fs_read_file', arguments: { path: 'a.txt' } },
  { type: 'tool_call_start', timestamp, id: 'call_1' },
  { type: 'tool_call_response', timestamp, id: 'call_1', content: 'contents', is_error: false, outcome: 'ok' },
  { type: 'chat_response', timestamp, message: 'Done.' },
  { type: 'turn_end', timestamp, status: 'completed' },
];

function serialize(events: ConversationEvent[]): Buffer {
  return Buffer.from(events.map((event) => JSON.stringify(event) + '\n').join(''), 'utf8');
}

const directories: string[] = [];
after(() => {
  for (const made of directories) rmSync(made, { recursive: true, force: true });
});

function directory(): string {
  const made = mkdtempSync(path.join(os.tmpdir(), 'jp-log-'));
  directories.push(made);
  return made;
}

describe('event log: a log truncated at every byte offset', () => {
  const full = serialize(sample);
  const lineEnds: number[] = [];
  for (let index = 0; index < full.length; index++) if (full[index] === 10) lineEnds.push(index + 1);

  /** What opening the log truncated at `offset` must keep, and how many torn bytes it must save aside. */
  function expectedAt(offset: number): { events: ConversationEvent[]; tornBytes: number } {
    const complete = lineEnds.filter((end) => end <= offset).length;
    // A tail that is a whole event missing only its newline is kept too.
    const tailIsWholeEvent = lineEnds.includes(offset + 1);
    const tornBytes = offset - (lineEnds.filter((end) => end <= offset).pop() ?? 0);
    return {
      events: sample.slice(0, complete + (tailIsWholeEvent ? 1 : 0)),
      tornBytes: tailIsWholeEvent ? 0 : tornBytes,
    };
  }

  it('the reader, at every byte offset: every complete event kept, the torn tail found where it starts', () => {
    for (let offset = 0; offset <= full.length; offset++) {
      const { events, tornBytes } = expectedAt(offset);
      const parsed = parseEventLog(full.subarray(0, offset));
      assert.equal(parsed.skipped, 0, `offset ${offset}: nothing skipped`);
      const kept = parsed.tornTail?.parsesAsEvent ? sample.slice(0, parsed.events.length + 1) : parsed.events;
      assert.deepEqual(kept, events, `offset ${offset}: events`);
      if (tornBytes > 0) {
        assert.equal(parsed.tornTail?.parsesAsEvent, false, `offset ${offset}: a torn tail`);
        assert.equal(parsed.tornTail?.offset, offset - tornBytes, `offset ${offset}: where it starts`);
        assert.equal(parsed.completeBytes, offset - tornBytes);
      } else if (!lineEnds.includes(offset + 1)) {
        assert.equal(parsed.tornTail, undefined, `offset ${offset}: no torn tail`);
      }
    }
  });

  /**
   * Opening reads, repairs and appends by what the reader found: every offset of the line with
   * multi-byte characters (a cut inside a character included), and around every line boundary of
   * the others (the empty log, a cut after the first byte of a line, a whole event missing only its
   * newline, a whole line). Each is a real file, fsynced as a run does.
   */
  const fileOffsets = new Set<number>([0, full.length]);
  const unicodeLine = [0, ...lineEnds].findIndex((start, index) =>
    full.subarray(start, lineEnds[index]).toString().includes('🎉'),
  );
  const unicodeStart = unicodeLine === 0 ? 0 : lineEnds[unicodeLine - 1]!;
  for (let offset = unicodeStart; offset <= lineEnds[unicodeLine]!; offset++) fileOffsets.add(offset);
  for (const end of lineEnds)
    for (const offset of [end - 2, end - 1, end, end + 1])
      if (offset >= 0 && offset <= full.length) fileOffsets.add(offset);

  it('opens, keeps every complete event, repairs the tail, and appends cleanly after it', () => {
    assert.ok(
      [...fileOffsets].some((offset) => ((full[offset] ?? 0) & 0xc0) === 0x80),
      'a cut inside a multi-byte character',
    );
    const root = directory();
    for (const offset of [...fileOffsets].sort((a, b) => a - b)) {
      const folder = path.join(root, String(offset));
      mkdirSync(folder);
      const file = path.join(folder, 'events.ndjson');
      writeFileSync(file, full.subarray(0, offset));
      const { events: expected, tornBytes } = expectedAt(offset);

      const opened = ConversationLog.open(file);
      assert.deepEqual(opened.events, expected, `offset ${offset}: events after open`);
      assert.equal(opened.skipped, 0, `offset ${offset}: nothing skipped`);
      if (tornBytes > 0) {
        assert.ok(opened.tornTailSavedTo, `offset ${offset}: torn tail saved aside`);
        assert.deepEqual(
          readFileSync(opened.tornTailSavedTo!),
          full.subarray(offset - tornBytes, offset),
          `offset ${offset}: saved bytes`,
        );
      } else {
        assert.equal(opened.tornTailSavedTo, undefined, `offset ${offset}: no torn tail`);
      }
      const marker: ConversationEvent = { type: 'chat_request', timestamp, content: `after ${offset}` };
      opened.log.append(marker);
      opened.log.close();
      const reread = parseEventLog(readFileSync(file));
      assert.deepEqual(
        reread.events,
        [...expected, marker],
        `offset ${offset}: the append is not spliced onto garbage`,
      );
      assert.equal(reread.skipped, 0);
      assert.equal(reread.tornTail, undefined);
    }
  });
});

describe('event log: damage in the middle', () => {
  it('skips and counts a garbage line, keeping the events after it', () => {
    const lines = sample.map((event) => JSON.stringify(event));
    lines.splice(3, 0, '{"type":"chat_response","timest');
    lines.splice(5, 0, '\u0000\u0000\u0000\u0000');
    lines.splice(7, 0, '{"type":"turn_start","timestamp":"x"}{"type":"turn_start","timestamp":"y"}');
    lines.splice(8, 0, '{"type":"no_such_event","timestamp":"x"}');
    const parsed = parseEventLog(Buffer.from(lines.join('\n') + '\n'));
    assert.deepEqual(parsed.events, sample);
    assert.equal(parsed.skipped, 4);
    assert.deepEqual(parsed.skippedLines, [4, 6, 8, 9]);
  });

  it('the writer keeps a damaged middle line as it is (never rewrites history)', () => {
    const folder = directory();
    const file = path.join(folder, 'events.ndjson');
    const content = `${JSON.stringify(sample[0])}\nnot json at all\n${JSON.stringify(sample[1])}\n`;
    writeFileSync(file, content);
    const opened = ConversationLog.open(file);
    assert.equal(opened.skipped, 1);
    assert.deepEqual(opened.events, sample.slice(0, 2));
    opened.log.close();
    assert.equal(readFileSync(file, 'utf8'), content);
  });
});

describe('event log: an unreadable file is never overwritten', () => {
  it('refuses to open a log it cannot read, leaving it untouched', () => {
    const folder = directory();
    const file = path.join(folder, 'events.ndjson');
    mkdirSync(file);
    writeFileSync(path.join(file, 'inside'), 'precious');
    let caught: unknown;
    try {
      ConversationLog.open(file);
    } catch (error) {
      caught = error;
    }
    assert.ok(JpError.isInstance(caught), 'a JpError');
    assert.equal((caught as JpError).code, 'file_damaged');
    assert.match((caught as JpError).message, /events\.ndjson is a directory/);
    assert.ok(statSync(file).isDirectory());
    assert.deepEqual(readdirSync(file), ['inside']);
  });
});

describe('event log: appends', () => {
  it('writes one line per event with mode 0600 and counts events', () => {
    const file = path.join(directory(), 'events.ndjson');
    const opened = ConversationLog.open(file);
    assert.equal(opened.log.eventCount, 0);
    assert.equal(opened.log.append(sample[0]!), 0);
    assert.equal(opened.log.append(sample[1]!), 1);
    assert.equal(opened.log.eventCount, 2);
    opened.log.close();
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file, 'utf8'), serialize(sample.slice(0, 2)).toString());
    const again = ConversationLog.open(file);
    assert.equal(again.log.eventCount, 2);
    again.log.close();
  });
});
