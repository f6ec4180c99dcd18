/**
 * `fs_search` cannot hang (DESIGN §9; issue 35, attack 8): a pattern that backtracks exponentially
 * on a line of the workspace, `(a+)+$` over 40 `a`s and a `!`, is stopped at the tool's time limit
 * and the model is told the pattern was too slow; the run goes on, and the next search of the same
 * run answers. Asserted on the outcome, never on a time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conversationIds, readEvents, runJp, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

describe('fs_search under a deadline', () => {
  it('a catastrophic pattern ends at the limit with "too slow"; the run and the next search go on', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('input.txt', `${'a'.repeat(40)}!\n`);
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_search', arguments: { pattern: '(a+)+$', path: 'input.txt' } } }] },
        { parts: [{ tool_call: { name: 'fs_search', arguments: { pattern: 'a!$', path: 'input.txt' } } }] },
        { parts: [{ text: 'Searched.' }] },
      ],
    });
    const result = await runJp(sandbox, [
      'query',
      ...script,
      '-c',
      'conversation.tools.fs_search.timeout_secs=1',
      'go',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const responses = readEvents(sandbox, conversationIds(sandbox)[0]!).filter(
      (event) => event.type === 'tool_call_response',
    );
    assert.equal(responses.length, 2);
    assert.equal(responses[0]!.is_error, true);
    assert.match(
      responses[0]!.content,
      /^fs_search stopped after 1 s: matching \/\(a\+\)\+\$\/ over 1 file took too long\. The pattern is probably too slow: nested repetition such as \(a\+\)\+/,
    );
    assert.equal(responses[1]!.is_error, false);
    assert.match(responses[1]!.content, /^1 match in 1 file:\ninput\.txt:1: a{40}!$/);
  });
});
