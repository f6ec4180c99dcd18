/**
 * Long runs against a model with a small context window (issue 28): a fake provider that refuses
 * any request above its window with the real providers' context-length errors, a tool loop whose
 * results outgrow that window many times over, compaction, a SIGKILL during a compaction, and the
 * token budget. The fake counts a request's tokens as its body's bytes / 4.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  startFakeProvider,
  textStep,
  toolStep,
  type RecordedRequest,
  type ScriptedStep,
  type WireFormat,
} from '../support/fake-provider.ts';
import {
  collect,
  conversationIds,
  eventually,
  fakeModelArguments,
  readEvents,
  runJp,
  startJp,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';

type ProviderKind = 'openai' | 'anthropic' | 'llama.cpp';

const wireOf: Record<ProviderKind, WireFormat> = {
  openai: 'openai-responses',
  anthropic: 'anthropic',
  'llama.cpp': 'openai-chat',
};

/** The tokens the fake charges for a request. */
function tokensOf(request: RecordedRequest): number {
  return Math.ceil(JSON.stringify(request.body).length / 4);
}

/** Each provider's own context-length refusal (HTTP 400), as its API sends it. */
function refusal(kind: ProviderKind, tokens: number, window: number): ScriptedStep {
  const body =
    kind === 'openai'
      ? {
          error: {
            message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded',
          },
        }
      : kind === 'anthropic'
        ? {
            type: 'error',
            error: {
              type: 'invalid_request_error',
              message: `prompt is too long: ${tokens} tokens > ${window} maximum`,
            },
          }
        : {
            error: {
              code: 400,
              message: `request (${tokens} tokens) exceeds the available context size (${window} tokens), try increasing it`,
              type: 'exceed_context_size_error',
              n_prompt_tokens: tokens,
              n_ctx: window,
            },
          };
  return { status: 400, body: JSON.stringify(body) };
}

function modelArguments(kind: ProviderKind, baseUrl: string): { args: string[]; env: NodeJS.ProcessEnv } {
  if (kind === 'llama.cpp')
    return { args: ['-m', 'llama/qwen3-8b', '-c', `providers.openai-compatible.llama.base_url="${baseUrl}"`], env: {} };
  return fakeModelArguments(wireOf[kind], baseUrl);
}

function isSummaryRequest(request: RecordedRequest): boolean {
  return request.messages.some(
    (message) => message.role === 'system' && message.text.includes('You are compacting the history'),
  );
}

/** Files the model reads, 3,000 characters each: a result is a fifth of a 16,000-token window's worth of bytes. */
function writeFiles(sandbox: Sandbox): void {
  for (let index = 0; index < 10; index++)
    sandbox.write(`data/f${index}.txt`, `file ${index}\n${`${index}`.repeat(79)}\n`.repeat(37));
}

interface LoopProvider {
  baseUrl: string;
  requests: RecordedRequest[];
  refused: number[];
  rounds(): number;
  close(): Promise<void>;
}

/**
 * A model that reads `rounds` files one call at a time, then answers; summaries are answered as
 * asked; requests above `window` are refused. `holdSummary` makes the first summary request wait
 * (a compaction in flight) and calls back.
 */
async function loopProvider(
  kind: ProviderKind,
  window: number,
  rounds: number,
  options: { holdSummary?: () => void; wire?: WireFormat; holdAnswer?: boolean } = {},
): Promise<LoopProvider> {
  let done = 0;
  let summaries = 0;
  const refused: number[] = [];
  const provider = await startFakeProvider({
    wire: options.wire ?? wireOf[kind],
    steps: (request, index) => {
      const tokens = tokensOf(request);
      if (tokens > window) {
        refused.push(index);
        return refusal(kind, tokens, window);
      }
      const usage = { input: tokens, output: 20 };
      if (isSummaryRequest(request)) {
        summaries++;
        const text = `Summary ${summaries}: the user asked to read the data files one by one; the model has read ${done} so far and keeps going.`;
        if (summaries === 1 && options.holdSummary) {
          options.holdSummary();
          return { parts: [{ delayMs: 120_000 }, { text }], usage };
        }
        return { parts: [{ text }], usage };
      }
      if (done >= rounds && options.holdAnswer) return { parts: [{ delayMs: 120_000 }, { text: 'late' }], usage };
      if (done >= rounds) return { ...textStep(`All ${rounds} reads are done.`), usage } as ScriptedStep;
      done++;
      return {
        ...toolStep([{ id: `call_${done}`, name: 'fs_read_file', arguments: { path: `data/f${done % 10}.txt` } }]),
        usage,
      } as ScriptedStep;
    },
  });
  return {
    baseUrl: provider.baseUrl,
    requests: provider.requests,
    refused,
    rounds: () => done,
    close: () => provider.close(),
  };
}

const window = 16_000;

describe('a tool loop that outgrows a small context window many times', () => {
  const cleanup = useCleanup();

  for (const kind of ['anthropic', 'openai', 'llama.cpp'] as const) {
    it(`${kind}: 300 rounds complete with compactions, no request over the window, the whole history in print`, async () => {
      const provider = await loopProvider(kind, window, 300);
      cleanup.add(() => provider.close());
      const sandbox = cleanup.sandbox();
      writeFiles(sandbox);
      const model = modelArguments(kind, provider.baseUrl);
      const run = await runJp(
        sandbox,
        [
          'query',
          '--new',
          '--json',
          ...model.args,
          '-c',
          `assistant.context_window=${window}`,
          '--max-turns',
          '400',
          'read the data files',
        ],
        { env: model.env, timeoutMs: 600_000 },
      );
      const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
      assert.equal(run.code, 0, run.stderr.slice(-2000));
      assert.equal(result.answer, 'All 300 reads are done.');
      assert.deepEqual(provider.refused, [], 'no request was over the window');
      assert.ok(provider.requests.every((request) => tokensOf(request) <= window));

      const cid = conversationIds(sandbox)[0]!;
      const events = readEvents(sandbox, cid);
      const compactions = events.filter((event) => event.type === 'compaction');
      assert.ok(compactions.length >= 10, `${compactions.length} compactions`);
      assert.ok(compactions.every((event) => event.reason === 'threshold' && event.replaces[0] === 0));
      // Each compaction covers more of the log than the one before, and only events before it.
      for (const [index, event] of compactions.entries()) {
        assert.ok(event.replaces[1] < events.indexOf(event));
        if (index > 0) assert.ok(event.replaces[1] > compactions[index - 1].replaces[1]);
      }
      assert.equal(
        events.filter((event) => event.type === 'tool_call_response' && event.outcome === 'ok').length,
        300,
        'the log keeps every result',
      );
      // After a compaction, the model is sent its summary and none of the results it replaced.
      const summaryRequests = provider.requests.filter(isSummaryRequest);
      assert.equal(summaryRequests.length, compactions.length);
      const last = provider.requests[provider.requests.length - 1]!;
      assert.ok(last.messages.some((message) => message.text.includes(compactions[compactions.length - 1].summary)));
      assert.ok(!JSON.stringify(last.body).includes('call_1"'), 'the first call is summarised away');
      // Usage: one event per request, summed in the result.
      const usages = events.filter((event) => event.type === 'usage');
      assert.equal(usages.length, provider.requests.length);
      assert.equal(
        result.metadata.usage.input_tokens,
        provider.requests.reduce((sum, request) => sum + tokensOf(request), 0),
      );

      const printed = await runJp(sandbox, ['conversation', 'print', cid], { timeoutMs: 120_000 });
      assert.equal(printed.code, 0, printed.stderr);
      const shown = printed.stdout + printed.stderr;
      assert.equal(shown.match(/\[tool\] fs_read_file/g)?.length, 300, 'print shows every call');
      assert.equal(shown.match(/\[compacted: /g)?.length, compactions.length, 'and marks every compaction point');
      assert.match(shown, /All 300 reads are done\./);
    });
  }
});

describe('a model whose window jp does not know', () => {
  const cleanup = useCleanup();

  it('is assumed to take 32,768 tokens, said once, and compacted to that', async () => {
    const provider = await loopProvider('llama.cpp', 40_000, 60);
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    writeFiles(sandbox);
    const model = modelArguments('llama.cpp', provider.baseUrl);
    const run = await runJp(sandbox, ['query', '--new', ...model.args, '--max-turns', '100', 'read the data files'], {
      env: model.env,
      timeoutMs: 300_000,
    });
    assert.equal(run.code, 0, run.stderr);
    const said =
      run.stderr.match(
        /the context window of llama\/qwen3-8b is not known to jp; assuming 32768 tokens \(set assistant\.context_window to its real size\)/g,
      ) ?? [];
    assert.equal(said.length, 1, run.stderr);
    assert.deepEqual(provider.refused, []);
    assert.ok(provider.requests.every((request) => tokensOf(request) <= 32_768));
    assert.ok(readEvents(sandbox, conversationIds(sandbox)[0]!).some((event) => event.type === 'compaction'));
  });
});

describe('a provider that refuses a request as too long', () => {
  const cleanup = useCleanup();

  for (const kind of ['anthropic', 'openai', 'llama.cpp'] as const) {
    it(`${kind}: its context-length error compacts and retries once, and the run goes on`, async () => {
      // jp believes the window is much larger than the server's: only the refusals tell it.
      const provider = await loopProvider(kind, window, 60);
      cleanup.add(() => provider.close());
      const sandbox = cleanup.sandbox();
      writeFiles(sandbox);
      const model = modelArguments(kind, provider.baseUrl);
      const run = await runJp(
        sandbox,
        [
          'query',
          '--new',
          '--json',
          ...model.args,
          '-c',
          'assistant.context_window=1000000',
          '--max-turns',
          '100',
          'read the data files',
        ],
        {
          env: model.env,
          timeoutMs: 300_000,
        },
      );
      assert.equal(run.code, 0, run.stderr.slice(-2000));
      const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
      const compactions = events.filter((event) => event.type === 'compaction');
      assert.ok(provider.refused.length >= 2, `${provider.refused.length} refusals`);
      assert.ok(compactions.length >= provider.refused.length, 'a compaction for each refusal');
      assert.ok(compactions.every((event) => event.reason === 'context_length'));
      // Each refused request is followed by its summary request(s), then the same step again, which fits.
      for (const index of provider.refused) {
        assert.ok(isSummaryRequest(provider.requests[index + 1]!));
        const retry = provider.requests.slice(index + 1).find((request) => !isSummaryRequest(request))!;
        assert.ok(tokensOf(retry) <= window);
      }
      // Said as it is done: the compaction, then the retry.
      assert.match(
        run.stderr,
        /compacting the conversation: summarising \d+ events.*\n.*retrying once the request \S+ refused as too long for its context window, now compacted/,
      );
    });
  }

  it('a request still too long after compacting fails with context_length_exceeded (exit 1), retried only once', async () => {
    // A window smaller than the tool list and question alone: nothing compaction can do.
    const provider = await loopProvider('anthropic', 200, 5);
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    writeFiles(sandbox);
    sandbox.write('data/big.txt', 'x'.repeat(4000));
    const model = modelArguments('anthropic', provider.baseUrl);
    const run = await runJp(sandbox, ['query', '--new', '--json', ...model.args, 'read the data files'], {
      env: model.env,
    });
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
    assert.equal(run.code, 1);
    assert.equal(result.error.code, 'context_length_exceeded');
    assert.match(result.error.message, /prompt is too long: \d+ tokens > 200 maximum/);
    assert.match(result.error.hint, /assistant\.context_window/);
    // The first request has nothing older to summarise: refused once, never retried in a loop.
    assert.equal(provider.requests.filter((request) => !isSummaryRequest(request)).length, 1);
  });
});

describe('attach to a run that compacted', () => {
  const cleanup = useCleanup();

  it('shows the whole turn, with the compaction point marked where it happened', async () => {
    const provider = await loopProvider('anthropic', window, 30, { holdAnswer: true });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    writeFiles(sandbox);
    const model = modelArguments('anthropic', provider.baseUrl);
    const detached = await runJp(
      sandbox,
      [
        'query',
        '--detach',
        ...model.args,
        '-c',
        `assistant.context_window=${window}`,
        '--max-turns',
        '100',
        'read the data files',
      ],
      { env: model.env },
    );
    assert.equal(detached.code, 0, detached.stderr);
    const cid = detached.stdout.trim();
    // The run now waits for its final answer, after its compactions.
    await eventually(
      'the run to ask for its answer',
      () => provider.requests.filter((request) => !isSummaryRequest(request)).length === 31,
      120_000,
    );
    const compactions = readEvents(sandbox, cid).filter((event) => event.type === 'compaction');
    assert.ok(compactions.length >= 1);
    const viewer = startJp(sandbox, ['conversation', 'attach', '--read-only', cid]);
    let seen = '';
    viewer.stderr!.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    const viewed = collect(viewer, [], 120_000);
    await eventually(
      'the attached history',
      () => (seen.match(/\[tool\] fs_read_file/g)?.length ?? 0) === 30 && seen.includes('[compacted: '),
      60_000,
    );
    const lines = seen.split('\n');
    const marker = lines.findIndex((line) => line.startsWith('[compacted: '));
    const callsBefore = lines.slice(0, marker).filter((line) => line.startsWith('[tool] fs_read_file')).length;
    // The first compaction came after the calls it summarised, and before the ones after it.
    const events = readEvents(sandbox, cid);
    const firstAt = events.indexOf(events.find((event) => event.type === 'compaction')!);
    assert.equal(callsBefore, events.slice(0, firstAt).filter((event) => event.type === 'tool_call_request').length);
    assert.equal(seen.match(/\[compacted: /g)!.length, compactions.length);
    const killed = await runJp(sandbox, ['conversation', 'kill', cid]);
    assert.equal(killed.code, 0, killed.stderr);
    await viewed;
  });
});

describe('a run killed during a compaction', () => {
  const cleanup = useCleanup();

  it('SIGKILL while the summary is being written: --continue compacts again and completes, nothing lost', async () => {
    let held!: () => void;
    const summaryStarted = new Promise<void>((resolve) => (held = resolve));
    const provider = await loopProvider('anthropic', window, 30, { holdSummary: () => held() });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    writeFiles(sandbox);
    const model = modelArguments('anthropic', provider.baseUrl);
    const common = [...model.args, '-c', `assistant.context_window=${window}`, '--no-server'];
    const child = startJp(sandbox, ['query', '--new', '--json', ...common, 'read the data files'], { env: model.env });
    const finished = collect(child, [], 300_000);
    await summaryStarted;
    const cid = await eventually('the conversation', () => conversationIds(sandbox)[0]);
    const before = readEvents(sandbox, cid);
    child.kill('SIGKILL');
    await finished;
    const atKill = readEvents(sandbox, cid);
    assert.ok(!atKill.some((event) => event.type === 'compaction'), 'killed before the summary arrived');
    assert.ok(atKill.length >= before.length);

    const resumed = await runJp(sandbox, ['query', '--continue', `--id=${cid}`, '--json', ...common], {
      env: model.env,
      timeoutMs: 300_000,
    });
    assert.equal(resumed.code, 0, resumed.stderr.slice(-2000));
    const result = JSON.parse(resumed.stdout.trim().split('\n').pop()!);
    assert.equal(result.answer, 'All 30 reads are done.');
    const events = readEvents(sandbox, cid);
    assert.deepEqual(events.slice(0, atKill.length), atKill, 'the log before the kill is kept as it was');
    const compactions = events.filter((event) => event.type === 'compaction');
    assert.ok(compactions.length >= 1);
    assert.equal(events.filter((event) => event.type === 'tool_call_response').length, 30);
    assert.deepEqual(provider.refused, []);
    const printed = await runJp(sandbox, ['conversation', 'print', cid]);
    assert.equal((printed.stdout + printed.stderr).match(/\[tool\] fs_read_file/g)?.length, 30);
  });
});

describe('the token budget of a turn (--max-tokens, assistant.budget.tokens)', () => {
  const cleanup = useCleanup();

  it('ends the turn at a step boundary with budget_exceeded, the exit status of --max-turns, resumable with --continue', async () => {
    let answer = false;
    const provider = await startFakeProvider({
      wire: 'anthropic',
      steps: (_request, index) => {
        if (answer) return textStep('Done reading.', { usage: { input: 1000, output: 10 } });
        return {
          ...toolStep([{ id: `call_${index}`, name: 'fs_read_file', arguments: { path: 'data/f1.txt' } }]),
          usage: { input: 1000, output: 100 },
        } as ScriptedStep;
      },
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    writeFiles(sandbox);
    const model = fakeModelArguments('anthropic', provider.baseUrl);
    const run = await runJp(sandbox, ['query', '--new', '--json', ...model.args, '--max-tokens', '2500', 'read'], {
      env: model.env,
    });
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!);
    assert.equal(run.code, 1);
    assert.equal(result.status, 'error');
    assert.equal(result.error.code, 'budget_exceeded');
    assert.match(result.error.message, /stopped after 3300 tokens \(input \+ output\) of a budget of 2500/);
    assert.equal(result.metadata.usage.input_tokens, 3000);
    assert.equal(result.metadata.usage.output_tokens, 300);
    assert.equal(provider.requests.length, 3, 'no request after the budget was reached');
    assert.equal(result.metadata.iterations, 3);
    const cid = conversationIds(sandbox)[0]!;
    const events = readEvents(sandbox, cid);
    assert.equal(
      events.filter((event) => event.type === 'tool_call_response').length,
      3,
      'the step in progress finished first',
    );
    assert.deepEqual(events[events.length - 1]!.error, { code: 'budget_exceeded', message: result.error.message });

    // --max-turns reaches the same end the same way.
    const turns = await runJp(
      sandbox,
      ['query', '--new', '--json', ...model.args, '-c', 'assistant.budget.tokens=100000', '--max-turns', '1', 'read'],
      { env: model.env },
    );
    const turnsResult = JSON.parse(turns.stdout.trim().split('\n').pop()!);
    assert.equal(turns.code, run.code);
    assert.equal(turnsResult.status, result.status);
    assert.equal(turnsResult.error.code, 'max_turns_exceeded');

    answer = true;
    const resumed = await runJp(sandbox, ['query', '--continue', `--id=${cid}`, '--json', ...model.args], {
      env: model.env,
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(JSON.parse(resumed.stdout.trim().split('\n').pop()!).answer, 'Done reading.');
  });

  it('a budget that is not a positive integer is a usage error (exit 2)', async () => {
    const sandbox = cleanup.sandbox();
    const run = await runJp(sandbox, ['query', '--new', '--max-tokens', '10k', 'hello']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--max-tokens "10k" is not a positive integer/);
    const configured = await runJp(sandbox, ['query', '--new', '-c', 'assistant.budget.tokens=0', 'hello']);
    assert.equal(configured.code, 2);
    assert.match(configured.stderr, /assistant\.budget\.tokens/);
  });
});

/** A request body without its cache breakpoints: what the provider's cache keys on. */
function withoutBreakpoints(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, inner) => (key === 'cache_control' ? undefined : inner)));
}

/** The conversation part of a request body on each wire. */
function historyOf(body: any): unknown[] {
  return body.messages ?? body.input;
}

/** Whether `later` repeats `earlier` byte for byte (breakpoints aside) and only adds after it. */
function extendsPrefix(earlier: RecordedRequest, later: RecordedRequest): boolean {
  const a = withoutBreakpoints(earlier.body) as any;
  const b = withoutBreakpoints(later.body) as any;
  const before = historyOf(a);
  const after = historyOf(b);
  const same = (x: unknown, y: unknown): boolean => JSON.stringify(x) === JSON.stringify(y);
  return (
    same(a.system, b.system) &&
    same(a.instructions, b.instructions) &&
    same(a.tools, b.tools) &&
    after.length > before.length &&
    same(after.slice(0, before.length), before)
  );
}

function breakpointsOf(body: any): string[] {
  const found: string[] = [];
  for (const [index, block] of (body.system ?? []).entries()) if (block.cache_control) found.push(`system ${index}`);
  for (const [index, message] of body.messages.entries()) {
    const content = message.content as any[];
    for (const [part, block] of content.entries())
      if (block.cache_control) found.push(`message ${index}${part === content.length - 1 ? '' : ` part ${part}`}`);
  }
  return found;
}

describe('prompt caching: what the requests of a tool loop carry', () => {
  const cleanup = useCleanup();
  const system = ['-c', 'assistant.system_prompt="You are a careful assistant. Read what you are asked to read."'];

  it("Anthropic: at most four breakpoints, on the system block and the latest turns, each request reading the last one's prefix; byte-identical prefixes over 20 rounds", async () => {
    const provider = await loopProvider('anthropic', 1_000_000, 20);
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    writeFiles(sandbox);
    const model = modelArguments('anthropic', provider.baseUrl);
    const run = await runJp(sandbox, ['query', '--new', '--json', ...model.args, ...system, 'read the data files'], {
      env: model.env,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(provider.requests.length, 21);
    for (const [index, request] of provider.requests.entries()) {
      const body = request.body;
      const marks = breakpointsOf(body);
      assert.ok(JSON.stringify(body).split('"cache_control"').length - 1 <= 4, `request ${index}: ${marks.join(', ')}`);
      assert.equal(marks[0], 'system 0', `request ${index} marks the system block`);
      assert.ok(marks.includes(`message ${body.messages.length - 1}`), `request ${index} marks its last message`);
      if (index > 0) {
        const previous = provider.requests[index - 1]!.body;
        assert.ok(
          marks.includes(`message ${previous.messages.length - 1}`),
          `request ${index} marks where request ${index - 1} ended: ${marks.join(', ')}`,
        );
        assert.ok(
          extendsPrefix(provider.requests[index - 1]!, request),
          `request ${index} repeats request ${index - 1} byte for byte`,
        );
      }
    }
    assert.deepEqual(breakpointsOf(provider.requests[20]!.body), ['system 0', 'message 38', 'message 40']);
  });

  for (const kind of ['openai', 'openai-chat'] as const) {
    it(`OpenAI (${kind === 'openai' ? 'Responses' : 'Chat'}): prompt_cache_key is the conversation id; byte-identical prefixes over 20 rounds`, async () => {
      const wire = kind === 'openai' ? 'openai-responses' : 'openai-chat';
      const provider = await loopProvider('openai', 1_000_000, 20, { wire });
      cleanup.add(() => provider.close());
      const sandbox = cleanup.sandbox();
      writeFiles(sandbox);
      const model = fakeModelArguments(wire, provider.baseUrl);
      const run = await runJp(sandbox, ['query', '--new', '--json', ...model.args, ...system, 'read the data files'], {
        env: model.env,
      });
      assert.equal(run.code, 0, run.stderr);
      const cid = conversationIds(sandbox)[0]!;
      const requests = provider.requests;
      assert.equal(requests.length, 21);
      for (const [index, request] of requests.entries()) {
        assert.equal(request.body.prompt_cache_key, cid, `request ${index}`);
        if (index > 0)
          assert.ok(
            extendsPrefix(requests[index - 1]!, request),
            `request ${index} repeats request ${index - 1} byte for byte`,
          );
      }
    });
  }

  it('compaction rewrites the prefix once: between two compactions every request extends the last', async () => {
    const provider = await loopProvider('anthropic', window, 80);
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    writeFiles(sandbox);
    const model = modelArguments('anthropic', provider.baseUrl);
    const run = await runJp(
      sandbox,
      [
        'query',
        '--new',
        '--json',
        ...model.args,
        ...system,
        '-c',
        `assistant.context_window=${window}`,
        '--max-turns',
        '100',
        'read',
      ],
      { env: model.env },
    );
    assert.equal(run.code, 0, run.stderr);
    const steps = provider.requests.filter((request) => !isSummaryRequest(request));
    const rewrites = steps.slice(1).filter((request, index) => !extendsPrefix(steps[index]!, request)).length;
    const compactions = readEvents(sandbox, conversationIds(sandbox)[0]!).filter(
      (event) => event.type === 'compaction',
    ).length;
    assert.ok(compactions >= 3);
    assert.equal(rewrites, compactions);
    // After a compaction the summary opens the history, marked so the next requests read it from cache.
    const last = steps[steps.length - 1]!.body;
    assert.match(JSON.stringify(last.messages[0]), /Summary of the earlier conversation/);
    assert.ok(breakpointsOf(last).includes('message 0'));
  });
});

describe('jp conversation compact', () => {
  const cleanup = useCleanup();

  it('summarises the turns before the last one now; the next query sends the summary instead of them; print still shows them', async () => {
    const provider = await startFakeProvider({
      wire: 'anthropic',
      steps: (request) =>
        isSummaryRequest(request)
          ? textStep('The user asked about apples and then pears.')
          : textStep(`Answer to: ${request.messages.filter((message) => message.role === 'user').pop()!.text}`),
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('anthropic', provider.baseUrl);
    for (const question of ['tell me about apples', 'and pears?']) {
      const run = await runJp(sandbox, ['query', ...model.args, question], { env: model.env });
      assert.equal(run.code, 0, run.stderr);
    }
    const cid = conversationIds(sandbox)[0]!;
    // Where to reach the provider is never recorded in the conversation: given again (its -c).
    const compacted = await runJp(sandbox, ['conversation', 'compact', cid, '--json', ...model.args.slice(2)], {
      env: model.env,
    });
    assert.equal(compacted.code, 0, compacted.stderr);
    const line = JSON.parse(compacted.stdout.trim());
    assert.equal(line.type, 'compaction');
    assert.equal(line.summary, 'The user asked about apples and then pears.');
    assert.equal(line.reason, 'manual');
    const summaryRequest = provider.requests[provider.requests.length - 1]!;
    assert.ok(isSummaryRequest(summaryRequest));
    assert.match(summaryRequest.messages[1]!.text, /User: tell me about apples/);
    assert.doesNotMatch(summaryRequest.messages[1]!.text, /and pears\?/, 'the last turn stays word for word');

    const events = readEvents(sandbox, cid);
    const secondTurn = events.map((event) => event.type).lastIndexOf('turn_start');
    assert.deepEqual(line.replaces, [0, secondTurn - 1]);

    const next = await runJp(sandbox, ['query', ...model.args, 'and plums?'], { env: model.env });
    assert.equal(next.code, 0, next.stderr);
    const sent = provider.requests[provider.requests.length - 1]!;
    assert.equal(sent.messages[0]!.role, 'system', 'the system prompt stays in front of the summary');
    assert.deepEqual(
      sent.messages.slice(1).map((message) => message.text),
      [
        '[Summary of the earlier conversation, written when it grew too long for the context window]\n\nThe user asked about apples and then pears.and pears?',
        'Answer to: and pears?',
        'and plums?',
      ],
    );
    // Per conversation: ls --json sums every request's usage (the steps and the summary request).
    const usages = readEvents(sandbox, cid).filter((event) => event.type === 'usage');
    assert.equal(usages.length, 4);
    assert.deepEqual(
      usages.map((event) => event.purpose),
      ['step', 'step', 'compaction', 'step'],
    );
    const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
    const entry = JSON.parse(listed.stdout).find((conversation: { id: string }) => conversation.id === cid);
    assert.equal(
      entry.usage.input_tokens,
      usages.reduce((sum, event) => sum + event.usage.input_tokens, 0),
    );
    assert.equal(
      entry.usage.output_tokens,
      usages.reduce((sum, event) => sum + event.usage.output_tokens, 0),
    );
    assert.equal(entry.usage.cached_input_tokens, 0, 'Anthropic reports its cache reads (0 from the fake)');
    // Per turn: print ends each turn with its tokens.
    const printed = await runJp(sandbox, ['conversation', 'print', cid]);
    assert.equal(printed.stderr.match(/\[tokens: \d+ input \(0 cached\), \d+ output\]/g)?.length, 3, printed.stderr);
    assert.match(printed.stdout, /Answer to: tell me about apples/);
    assert.match(
      printed.stderr,
      /\[compacted: the \d+ events above are sent to the model as a summary from here on \(jp conversation compact\)\]/,
    );
  });
});
