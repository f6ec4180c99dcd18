import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandParts, foldCommand } from '../../src/client/command-fold.ts';

const lines = (count: number): string => Array.from({ length: count }, (_, index) => `line ${index + 1}`).join('\n');
const note = '[jp: sandbox] This command ran in the sandbox (workspace-write, no network) and failed because …';

describe('the fold of a command result', () => {
  it('parts: output, stderr, the status line and jp notes after it', () => {
    const content = `${lines(3)}\n[stderr]\nbye\nexit code 3\n\n${note}\n[jp: decided without a human] Run without a user.`;
    assert.deepEqual(commandParts(content), {
      status: 'exit code 3',
      stdout: ['line 1', 'line 2', 'line 3'],
      stderr: ['bye'],
      notes: [note, '[jp: decided without a human] Run without a user.'],
    });
    assert.equal(
      commandParts('timed out after 5 s and was killed\nhalf\n').status,
      'timed out after 5 s and was killed',
    );
  });

  it('a failure keeps head, tail, the end of stderr and the notes; a success stays short; a replay shows all', () => {
    const content = `${lines(40)}\n[stderr]\n${lines(8).replace(/line/g, 'err')}\nexit code 3\n\n${note}`;
    const failed = foldCommand(content, { failed: true, all: false });
    assert.equal(failed.status, 'exit code 3');
    assert.deepEqual(
      failed.rows.map((row) => row.text),
      [
        'line 1',
        'line 2',
        'line 3',
        '… +32 lines',
        'line 36',
        'line 37',
        'line 38',
        'line 39',
        'line 40',
        'stderr:',
        '… +3 lines',
        'err 4',
        'err 5',
        'err 6',
        'err 7',
        'err 8',
        note,
      ],
    );
    assert.equal(failed.rows.at(-1)!.note, true);
    const succeeded = foldCommand(`${lines(12)}\nexit code 0`, { failed: false, all: false });
    assert.deepEqual(
      succeeded.rows.map((row) => row.text),
      ['line 1', 'line 2', 'line 3', 'line 4', 'line 5', '… +7 lines'],
    );
    assert.equal(foldCommand(content, { failed: true, all: true }).rows.length, 40 + 9 + 1);
  });
});
