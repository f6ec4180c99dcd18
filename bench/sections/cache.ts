/**
 * Prompt caching: over a 20-round tool loop against the fake Anthropic wire, the share of input
 * tokens Anthropic's caching rules would serve from cache, computed from the requests jp sent, beside
 * the same requests without breakpoints (what main 62a35fd sends: none, so 0%).
 *
 * The rules applied: a request is the sequence of its tools, system blocks and message content
 * blocks; a block with `cache_control` writes the prefix up to it to the cache (when that prefix is
 * at least 1,024 tokens); a request reads the longest prefix that an earlier request wrote, looked up
 * at each of its breakpoints and up to 20 blocks before it. Tokens are bytes / 4.
 */
import { createHash } from 'node:crypto';
import {
  startFakeProvider,
  textStep,
  toolStep,
  type RecordedRequest,
  type ScriptedStep,
} from '../../test/support/fake-provider.ts';
import { createSandbox, fakeModelArguments, runJp } from '../../test/support/jp.ts';
import type { Section } from '../support.ts';

const rounds = 20;
const minimumCacheable = 1024;
const lookback = 20;

function blocksOf(body: any): unknown[] {
  const blocks: unknown[] = [...(body.tools ?? []), ...(body.system ?? [])];
  for (const message of body.messages)
    blocks.push(...(typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content));
  return blocks;
}

/** Input tokens of each request and the part of them read from cache, under Anthropic's rules. */
export function cacheShare(bodies: any[]): { input: number; cached: number } {
  const written = new Set<string>();
  let input = 0;
  let cached = 0;
  for (const body of bodies) {
    const hash = createHash('sha256');
    const prefixes: string[] = [];
    const tokens: number[] = [];
    const marked: number[] = [];
    let total = 0;
    for (const [index, block] of blocksOf(body).entries()) {
      const { cache_control: mark, ...content } = block as Record<string, unknown>;
      const text = JSON.stringify(content);
      hash.update(text);
      prefixes.push(hash.copy().digest('hex'));
      total += Math.ceil(Buffer.byteLength(text) / 4);
      tokens.push(total);
      if (mark) marked.push(index);
    }
    let read = 0;
    for (const point of marked) {
      for (let index = point; index >= Math.max(0, point - lookback); index--) {
        if (written.has(prefixes[index]!)) {
          read = Math.max(read, tokens[index]!);
          break;
        }
      }
    }
    input += total;
    cached += read;
    for (const point of marked) if (tokens[point]! >= minimumCacheable) written.add(prefixes[point]!);
  }
  return { input, cached };
}

function withoutBreakpoints(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body, (key, value) => (key === 'cache_control' ? undefined : value)));
}

const percent = (share: { input: number; cached: number }): string =>
  `${((100 * share.cached) / share.input).toFixed(1)}% (${share.cached} of ${share.input} tokens)`;

const cache: Section = async (bench) => {
  const sandbox = createSandbox();
  for (let index = 0; index < 5; index++)
    sandbox.write(`src/part${index}.ts`, `export const part${index} = ${JSON.stringify('x'.repeat(60))};\n`.repeat(30));
  const provider = await startFakeProvider({
    wire: 'anthropic',
    steps: (_request: RecordedRequest, index: number): ScriptedStep =>
      index < rounds
        ? toolStep(
            [{ id: `call_${index}`, name: 'fs_read_file', arguments: { path: `src/part${index % 5}.ts` } }],
            'Reading the next part.',
          )
        : textStep('All parts read.'),
  });
  try {
    const model = fakeModelArguments('anthropic', provider.baseUrl);
    const run = await runJp(
      sandbox,
      ['query', '--new', ...model.args, '--max-turns', String(rounds + 5), 'read every part of src'],
      { env: model.env, timeoutMs: 300_000 },
    );
    if (run.code !== 0) throw new Error(`the tool loop exited ${run.code}: ${run.stderr}`);
    const bodies = provider.requests.map((request) => request.body);
    const now = cacheShare(bodies);
    const before = cacheShare(bodies.map(withoutBreakpoints));
    bench.report({
      figure: `prompt cache: input tokens Anthropic would read from cache, ${rounds}-round tool loop`,
      value: percent(now),
      floor: `without breakpoints (main 62a35fd): ${percent(before)}`,
      goal: '≥ 85%',
    });
  } finally {
    await provider.close();
    sandbox.cleanup();
  }
};

export default cache;
