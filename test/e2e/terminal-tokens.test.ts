/**
 * Tokens and cost, live and at the end, on the rendered screen at 100×30 and 60×20, dark and
 * light: the status line counts the tokens as the answer streams; the end of the turn says its
 * input, cached and output tokens and, for a model whose price jp knows, what it cost; `--json`'s
 * result carries the cost (null when unknown); `jp conversation print` says each turn's tokens and
 * cost too.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gate, startFakeProvider } from '../support/fake-provider.ts';
import { runJp, useCleanup } from '../support/jp.ts';
import { Screen } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

/** A fake OpenAI Chat server and the arguments that make `model` of the OpenAI provider talk to it. */
async function openai(
  model: string,
  steps: Parameters<typeof startFakeProvider>[0]['steps'],
): Promise<{ args: string[]; env: NodeJS.ProcessEnv }> {
  const provider = await startFakeProvider({ wire: 'openai-chat', steps });
  cleanup.add(() => provider.close());
  return {
    args: [
      '-m',
      `openai/${model}`,
      '-c',
      `providers.openai.base_url="${provider.baseUrl}"`,
      '-c',
      'providers.openai.api="chat"',
    ],
    env: { OPENAI_API_KEY: 'sk-test-key-000000000000000000' },
  };
}

describe('tokens and cost', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: the status line counts tokens while the answer streams; the end says input, cached and output tokens and the cost`, async () => {
      const sandbox = cleanup.sandbox();
      const stalled = gate();
      const model = await openai('gpt-4.1-mini', [
        {
          parts: [{ text: 'A first sentence of the answer. ' }, { gate: stalled }, { text: 'And the last one.' }],
          usage: { input: 1000, output: 200 },
        },
      ]);
      const screen = Screen.jp(sandbox, ['query', ...model.args, ...terminal.themeArguments, 'answer'], {
        cleanup,
        env: model.env,
        ...terminal.size,
      });
      await screen.waitFor(/↓ ~\d+ tokens/, { on: 'screen' });
      stalled.open();
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      assert.match(screen.flowedText(), /\[tokens: 1000 input \(0 cached\), 200 output • \$0\.00072\]/, screen.text());
      const printed = Screen.jp(sandbox, ['conversation', 'print', ...terminal.themeArguments], {
        cleanup,
        ...terminal.size,
      });
      assert.equal((await printed.exited).exitCode, 0, printed.text());
      assert.match(
        printed.flowedText(),
        /^\[tokens: 1000 input \(0 cached\), 200 output • \$0\.00072\]$/m,
        `print says the turn's cost:\n${printed.text()}`,
      );
    });
  }

  it('conversation print: a turn of a model jp cannot price says its tokens and no cost; turns are priced one by one', async () => {
    const sandbox = cleanup.sandbox();
    const unknown = await openai('gpt-test', [{ parts: [{ text: 'Unpriced.' }], usage: { input: 1000, output: 200 } }]);
    assert.equal((await runJp(sandbox, ['query', '--new', ...unknown.args, 'go'], { env: unknown.env })).code, 0);
    const priced = await openai('gpt-4.1-mini', [
      { parts: [{ text: 'Priced.' }], usage: { input: 2000, output: 400 } },
    ]);
    assert.equal((await runJp(sandbox, ['query', ...priced.args, 'go on'], { env: priced.env })).code, 0);
    const printed = await runJp(sandbox, ['conversation', 'print']);
    assert.equal(printed.code, 0, printed.stderr);
    const lines = printed.stderr.split('\n').filter((line) => line.startsWith('[tokens:'));
    assert.deepEqual(lines, [
      '[tokens: 1000 input (0 cached), 200 output]',
      '[tokens: 2000 input (0 cached), 400 output • $0.0014]',
    ]);
  });

  it('--json: the result carries the cost of a priced model, and null for one jp cannot price', async () => {
    const sandbox = cleanup.sandbox();
    const priced = await openai('gpt-4.1-mini', [
      { parts: [{ text: 'Priced.' }], usage: { input: 1000, output: 200 } },
    ]);
    const run = await runJp(sandbox, ['query', '--json', ...priced.args, 'go'], { env: priced.env });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    assert.ok(Math.abs(result.metadata.cost_usd - 0.00072) < 1e-9, JSON.stringify(result.metadata));
    const unknown = await openai('gpt-test', [{ parts: [{ text: 'Unpriced.' }], usage: { input: 1000, output: 200 } }]);
    const other = await runJp(sandbox, ['query', '--json', '--new', ...unknown.args, 'go'], { env: unknown.env });
    assert.equal(other.code, 0, other.stderr);
    assert.equal(JSON.parse(other.stdout.trim().split('\n').at(-1)!).metadata.cost_usd, null);
  });
});
