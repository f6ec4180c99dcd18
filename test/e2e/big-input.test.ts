/**
 * Size has no cliff (DESIGN §8): 20 MB of piped input is answered through the query server exactly
 * as with --no-server, the log holds every byte of it, and the JSON result does not repeat it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxResultQueryCharacters } from '../../src/report/result.ts';
import { conversationIds, readEvents, runJp, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

/** 20 MB of text with multi-byte characters everywhere, so that no chunk boundary falls on ASCII alone. */
function bigInput(): string {
  const line = 'diff --git a/src/naïve.ts b/src/naïve.ts — “quoted” ✓ 日本語 🙂 and some ASCII to pad the line\n';
  return line.repeat(Math.ceil((20 * 1024 * 1024) / Buffer.byteLength(line)));
}

describe('20 MB of piped input', () => {
  it('is answered through the server as with --no-server; the log has all of it; the JSON result does not repeat it', async () => {
    const sandbox = cleanup.sandbox();
    const input = bigInput();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'It is a large diff.' }] }] });
    const outcomes: { mode: string; stdout: string; result: Record<string, any>; content: string }[] = [];
    for (const mode of [[], ['--no-server']]) {
      const text = await runJp(sandbox, ['query', '--new', ...mode, ...script, 'summarise'], {
        stdin: input,
        timeoutMs: 120_000,
      });
      assert.equal(text.code, 0, text.stderr);
      const json = await runJp(sandbox, ['query', '--new', '--json', ...mode, ...script, 'summarise'], {
        stdin: input,
        timeoutMs: 120_000,
      });
      assert.equal(json.code, 0, json.stderr);
      const lines = json.stdout.trim().split('\n');
      const resultLine = lines[lines.length - 1]!;
      assert.ok(Buffer.byteLength(resultLine) < 64 * 1024, `the result line is ${Buffer.byteLength(resultLine)} bytes`);
      const result = JSON.parse(resultLine) as Record<string, any>;
      const id = conversationIds(sandbox).at(-1)!;
      const request = readEvents(sandbox, id).find((event) => event.type === 'chat_request')!;
      outcomes.push({
        mode: mode.join(' ') || 'server',
        stdout: text.stdout,
        result,
        content: request.content as string,
      });
    }
    const [server, inProcess] = outcomes as [(typeof outcomes)[0], (typeof outcomes)[0]];
    assert.equal(server.stdout, 'It is a large diff.\n');
    assert.equal(server.stdout, inProcess.stdout);
    for (const outcome of outcomes) {
      assert.equal(outcome.result.status, 'success', outcome.mode);
      assert.equal(outcome.result.answer, 'It is a large diff.');
      assert.ok(
        outcome.result.query.length <= maxResultQueryCharacters,
        `${outcome.mode}: query of ${outcome.result.query.length} characters`,
      );
      assert.match(
        outcome.result.query,
        /\[… jp omitted \d+ (lines \(\d+ characters\)|characters) here: the query is longer than 10000 characters …\]/,
      );
      assert.ok(outcome.result.query.startsWith(input.slice(0, 1000)));
      assert.ok(outcome.result.query.endsWith('summarise'));
      assert.equal(
        outcome.content,
        `${input}\nsummarise`,
        `${outcome.mode}: the log holds the whole input, byte for byte`,
      );
    }
    assert.equal(server.result.query, inProcess.result.query);
  });
});
