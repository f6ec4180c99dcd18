/**
 * Change sets read from a log alone (src/checkpoint/change-sets.ts): turns numbered by their
 * turn_start, a batch killed before its `after` closed by the next checkpoint (or left open for the
 * workspace as it is now), undos as change sets of their own, and the selections diff and undo use.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changedTurns, changeSets, selectChangeSets } from '../../src/checkpoint/change-sets.ts';
import type { ConversationEvent } from '../../src/conversation/events.ts';

const ts = '2026-01-01T00:00:00.000Z';
const root = '/w';
const commit = (letter: string): string => letter.repeat(40);
const start: ConversationEvent = { type: 'turn_start', timestamp: ts };
const end: ConversationEvent = { type: 'turn_end', timestamp: ts, status: 'completed' };
const before = (letter: string): ConversationEvent => ({
  type: 'checkpoint',
  timestamp: ts,
  when: 'before',
  root,
  commit: commit(letter),
});
const after = (letter: string, changed: number): ConversationEvent => ({
  type: 'checkpoint',
  timestamp: ts,
  when: 'after',
  root,
  commit: commit(letter),
  changed,
});

describe('change sets', () => {
  const log: ConversationEvent[] = [
    start,
    before('a'),
    after('b', 2),
    before('b'),
    after('c', 0),
    end,
    start, // turn 2: no tool that writes
    end,
    start, // turn 3: changed nothing
    before('c'),
    after('c', 0),
    end,
    start, // turn 4: killed mid-batch, then resumed
    before('d'),
    before('e'),
    after('f', 1),
    end,
    { type: 'undo', timestamp: ts, root, undone: ['turn 4'], before: commit('f'), after: commit('d'), files: ['x'] },
    start, // turn 5: killed, never resumed
    before('g'),
  ];

  it('numbers turns by their turn_start and pairs each before with its after', () => {
    const sets = changeSets(log);
    assert.deepEqual(
      sets.map((set) => [set.label, set.changed]),
      [
        ['turn 1', true],
        ['turn 3', false],
        ['turn 4', true],
        ['undo 1', true],
        ['turn 5', undefined],
      ],
    );
    assert.deepEqual(sets[2]!.batches, [
      { root, before: commit('d'), after: commit('e') },
      { root, before: commit('e'), after: commit('f') },
    ]);
    assert.deepEqual(sets[4]!.batches, [{ root, before: commit('g'), after: undefined }]);
  });

  it('selects the last change set that changed files, a turn and what follows it, or one turn', () => {
    const sets = changeSets(log);
    assert.deepEqual(
      selectChangeSets(sets, {}).map((set) => set.label),
      ['turn 5'],
    );
    assert.deepEqual(
      selectChangeSets(sets.slice(0, 4), {}).map((set) => set.label),
      ['undo 1'],
    );
    assert.deepEqual(
      selectChangeSets(sets.slice(0, 2), {}).map((set) => set.label),
      ['turn 1'],
    );
    assert.deepEqual(
      selectChangeSets(sets, { turn: 3 }).map((set) => set.label),
      ['turn 3', 'turn 4', 'undo 1', 'turn 5'],
    );
    assert.deepEqual(
      selectChangeSets(sets, { turn: 4, through: 'only' }).map((set) => set.label),
      ['turn 4'],
    );
    assert.deepEqual(selectChangeSets(sets, { turn: 2 }), []);
    assert.deepEqual(changedTurns(log), [1, 4, 5]);
  });
});
