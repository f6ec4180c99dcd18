/**
 * Local model servers as they are (issue 36): exchanges recorded between jp and a real llama.cpp
 * `llama-server` and `llama-cpp-python` (test/fixtures/provider-streams/llama-server, see its
 * README) replayed byte for byte through the built jp, with their status codes and headers: what jp
 * sends them (tool_choice, the tool-call message they validate), how it takes their refusals, empty
 * bodies and model names, and what it says when a server is not running or a proxy will not tunnel.
 */
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  collect,
  conversationIds,
  eventually,
  readEvents,
  runJp,
  sleep,
  startJp,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';
import { keys, Screen } from '../support/screen.ts';
import { loadRecording, replayModelArguments, startReplayProvider, type Reply } from '../support/replay-provider.ts';
import { checkJson, replayRun, stderrLines, writeUserConfig, type ReplayRunOptions } from '../support/replay-run.ts';

const recorded = (exchange: string): string => `llama-server/${exchange}-resp.sse`;
const reply = (exchange: string): Reply => ({ recording: loadRecording(recorded(exchange))[0]! });

describe('OpenAI-compatible servers as they are', () => {
  const cleanup = useCleanup();
  const run = (options: ReplayRunOptions, sandbox: Sandbox = cleanup.sandbox()) => replayRun(sandbox, options);

  it('tools go with tool_choice "auto" (llama-cpp-python offers none without it); none with --no-tools', async () => {
    const withTools = await run({ kind: 'compatible:llamacpp', replies: [recorded('042')] });
    const body = withTools.provider.requests[0]!.body;
    assert.ok(body.tools.length > 0);
    assert.equal(body.tool_choice, 'auto');
    const without = await run({ kind: 'compatible:llamacpp', replies: [recorded('042')], args: ['--no-tools'] });
    assert.equal(without.provider.requests[0]!.body.tools, undefined);
    assert.equal(without.provider.requests[0]!.body.tool_choice, undefined);
  });

  it('the tool-call message goes back with "content": "" which llama-cpp-python accepts (it refuses null with HTTP 500); arguments that are not JSON are said so to the model', async () => {
    // The server's validation as recorded: an assistant message whose content is not a string is
    // refused with the recorded 500 (064); one it accepts is answered (042).
    const validated = (request: { body: any }): Reply => {
      const assistant = request.body.messages.find((message: any) => message.role === 'assistant');
      return typeof assistant.content === 'string' ? reply('042') : reply('064');
    };
    const provider = await startReplayProvider({
      replies: (index) => (index === 0 ? reply('063') : validated(provider.requests[index]!)),
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox);
    const replay = await replayRun(
      sandbox,
      { kind: 'compatible:llamacpp', replies: [], model: 'stories260k', message: 'Read the file notes.txt' },
      provider,
    );
    const result = checkJson(replay);
    assert.equal(result.status, 'success', replay.stderr);
    assert.equal(provider.requests.length, 2, 'no retry of a refused request');
    const [assistant, tool] = provider.requests[1]!.body.messages.slice(-2);
    assert.equal(assistant.role, 'assistant');
    assert.equal(assistant.content, '');
    assert.equal(assistant.tool_calls[0].function.name, 'fs_read_file');
    assert.equal(tool.role, 'tool');
    assert.match(tool.content, /^Invalid arguments for fs_read_file: the arguments were not valid JSON: /);
    assert.match(tool.content, /they were "\{ \\"path\\" : \\" it said\.\\n\\"/);
    assert.doesNotMatch(tool.content, /expected object/);
  });

  it("an HTTP 500 whose body says the request is invalid is not retried: exit 1 with the first lines of the server's words", async () => {
    const replay = await run({
      kind: 'compatible:llamacpp',
      replies: [recorded('064')],
      model: 'stories260k',
      args: ['-c', 'assistant.request.max_retries=4'],
    });
    const result = checkJson(replay);
    assert.equal(replay.provider.requests.length, 1);
    assert.equal(result.status, 'error');
    assert.equal(result.error.code, 'provider_rejected_request');
    assert.match(result.error.message, /rejected the request as invalid \(HTTP 500\): 7 validation errors:/);
    assert.ok(result.error.message.length < 800, result.error.message);
    assert.doesNotMatch(`${result.error.message}${result.error.hint}`, /failing or overloaded/);
  });

  it('an empty 200 of a request well inside the window is a broken stream that says so, retried as max_retries says (exit 6)', async () => {
    const replay = await run({
      kind: 'compatible:llamacpp',
      replies: [recorded('049')],
      model: 'stories260k',
      args: ['--no-tools', '-c', 'assistant.request.max_retries=2'],
    });
    const result = checkJson(replay);
    assert.equal(replay.provider.requests.length, 3);
    assert.equal(result.status, 'retryable');
    assert.equal(result.error.code, 'stream_broken');
    assert.match(result.error.message, /answered HTTP 200 with an empty body/);
    assert.match(result.error.hint, /context window/);
  });
});

describe('the model that answered', () => {
  const cleanup = useCleanup();

  for (const mode of ['json', 'text'] as const) {
    it(`llama-server answers "gpt-4o-mini" as its one model "stories260k": recorded, and one warning names both (${mode})`, async () => {
      const sandbox = cleanup.sandbox();
      const replay = await replayRun(sandbox, {
        kind: 'compatible:llamacpp',
        replies: [recorded('083')],
        model: 'gpt-4o-mini',
        mode,
        args: ['--no-tools'],
      });
      const warning =
        /asked for the model "gpt-4o-mini", but llamacpp answered as "stories260k".*-m llamacpp\/stories260k/;
      if (mode === 'json') {
        const result = checkJson(replay);
        assert.equal(result.metadata.response_model, 'stories260k');
        assert.deepEqual(
          result.warnings.filter((item: any) => item.code === 'model_mismatch').length,
          1,
          JSON.stringify(result.warnings),
        );
        assert.match(result.warnings.find((item: any) => item.code === 'model_mismatch').message, warning);
        assert.equal(stderrLines(replay).filter((line) => warning.test(line.message ?? '')).length, 1);
      } else {
        assert.equal(replay.code, 0, replay.stderr);
        assert.equal(replay.stderr.split('\n').filter((line) => warning.test(line)).length, 1, replay.stderr);
      }
      const end = [...replay.events].reverse().find((event) => event.type === 'turn_end');
      assert.equal(end?.response_model, 'stories260k');
    });
  }

  it('llama-cpp-python echoes the name asked for: recorded, no warning', async () => {
    const replay = await replayRun(cleanup.sandbox(), {
      kind: 'compatible:llamacpp',
      replies: [recorded('084')],
      model: 'gpt-4o-mini',
      args: ['--no-tools'],
    });
    const result = checkJson(replay);
    assert.equal(result.metadata.response_model, 'gpt-4o-mini');
    assert.deepEqual(
      result.warnings.map((item: any) => item.code),
      ['output_limit'],
    );
  });
});

describe('an answer cut at a length finish says what filled up', () => {
  const cleanup = useCleanup();

  it('llama-server with no output cap fills its 2,048-token window (1952 + 96): the window is blamed, not max_output_tokens', async () => {
    const replay = await replayRun(cleanup.sandbox(), {
      kind: 'compatible:llamacpp',
      replies: [recorded('001')],
      // No tools: all seven do not fit jp's least estimate of a 2,048-token window (tested below).
      args: ['--no-tools', '-c', 'assistant.context_window=2048'],
    });
    const result = checkJson(replay);
    const warning = result.warnings.find((item: any) => item.code === 'output_limit');
    assert.match(
      warning.message,
      /context window filled up: 1952 tokens of request and 96 of answer took 2048 of the 2048-token window/,
    );
    assert.doesNotMatch(warning.message, /max_output_tokens/);
  });

  it("the same with the window unknown: the provider's limit, and that jp set no cap", async () => {
    const replay = await replayRun(cleanup.sandbox(), { kind: 'compatible:llamacpp', replies: [recorded('001')] });
    const warning = checkJson(replay).warnings.find((item: any) => item.code === 'output_limit');
    assert.match(warning.message, /cut at the provider's output limit after 96 tokens \(jp set no cap/);
    assert.doesNotMatch(warning.message, /raise/);
  });

  it('assistant.max_output_tokens = 60 reached (60 output tokens): that cap is blamed', async () => {
    const replay = await replayRun(cleanup.sandbox(), {
      kind: 'compatible:llamacpp',
      replies: [recorded('017')],
      args: ['--no-tools', '-c', 'assistant.max_output_tokens=60', '-c', 'assistant.context_window=2048'],
      mode: 'text',
    });
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stderr, /jp: the answer was cut at assistant\.max_output_tokens \(60 tokens\); raise it/);
  });
});

describe('a server that is not running', () => {
  const cleanup = useCleanup();

  for (const [name, args, env, server] of [
    ['Ollama', ['-m', 'ollama/llama3'], { OLLAMA_HOST: '127.0.0.7:11434' }, /ollama serve/],
    [
      'llama-server',
      ['-m', 'llamacpp/qwen3', '-c', 'providers.openai-compatible.llamacpp.base_url="http://127.0.0.7:8080/v1"'],
      {},
      /llama-server -m <model\.gguf> --port 8080/,
    ],
    [
      'LM Studio',
      ['-m', 'lmstudio/qwen3', '-c', 'providers.openai-compatible.lmstudio.base_url="http://localhost:1234/v1"'],
      {},
      /LM Studio serves on port 1234/,
    ],
  ] as const) {
    it(`${name}: a refused connection on this machine is not retried; the error names the server to start (exit 1)`, async () => {
      const sandbox = cleanup.sandbox();
      const result = await runJp(
        sandbox,
        ['query', '--json', ...args, '-c', 'assistant.request.max_retries=4', 'hello'],
        { env },
      );
      const last = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(last.error.code, 'server_not_running');
      assert.match(
        last.error.message,
        /nothing is listening at http:\/\/(127\.0\.0\.7|localhost):\d+\/v1 \(connection refused/,
      );
      assert.match(last.error.hint, server);
      assert.doesNotMatch(result.stderr, /retrying/);
    });
  }
});

describe('a proxy that closes the tunnel without answering', () => {
  const cleanup = useCleanup();

  for (const retries of [0, 2]) {
    it(`max_retries = ${retries}: ${retries + 1} connection${retries === 0 ? '' : 's'} to the proxy, not a storm (exit 6)`, async () => {
      let connections = 0;
      const proxy = net.createServer((socket) => {
        connections++;
        socket.on('error', () => {});
        socket.on('data', () => socket.destroy());
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      cleanup.add(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const sandbox = cleanup.sandbox();
      const result = await runJp(
        sandbox,
        [
          'query',
          '-m',
          'openai/gpt-4.1-mini',
          '-c',
          'providers.openai.base_url="https://api.example.com/v1"',
          '-c',
          `assistant.request.max_retries=${retries}`,
          '-c',
          'assistant.request.backoff_base_ms=5',
          '-c',
          'assistant.request.idle_timeout_secs=5',
          'hello',
        ],
        { env: { HTTPS_PROXY: proxyUrl, OPENAI_API_KEY: 'sk-proxy-000000000000' } },
      );
      assert.equal(result.code, 6, result.stderr);
      assert.equal(connections, retries + 1, result.stderr);
      assert.match(result.stderr, /the proxy http:\/\/127\.0\.0\.1:\d+ did not open a tunnel to api\.example\.com:443/);
    });
  }
});

describe('a queued request is not a stalled one', () => {
  const cleanup = useCleanup();

  it('a one-slot server holds the headers longer than the idle timeout: jp says it waits (queued?), never resends, and gets the answer (exit 0)', async () => {
    let release!: () => void;
    const headers = new Promise<void>((resolve) => (release = resolve));
    const provider = await startReplayProvider({ replies: [{ ...reply('097'), headersAfter: headers }] });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const child = startJp(
      sandbox,
      [
        'query',
        ...replayModelArguments('compatible:llamacpp', provider.baseUrl, 'stories260k').args,
        '--no-tools',
        '-c',
        'assistant.request.idle_timeout_secs=1',
        'hi',
      ],
      { env: { REPLAY_KEY: 'replay-key-0000000000' } },
    );
    const done = collect(child, [], 60_000);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await eventually('the notice that jp waits for the server', () =>
      /waiting for the server \(queued\?\)/.test(stderr),
    );
    // Well past the idle timeout after jp said so: the old single timer would have resent by now.
    await sleep(2500);
    assert.equal(provider.requests.length, 1);
    release();
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(provider.requests.length, 1, 'no resend while the server queued the request');
    assert.match(
      result.stderr,
      /jp: waiting for the server \(queued\?\): no answer after 1 s; jp waits up to 600 s for it to begin \(assistant\.request\.headers_timeout_secs\)/,
    );
    assert.match(result.stdout, /^Her/);
  });

  it('headers_timeout_secs bounds the wait for a response that never begins: a clear timeout, retried as max_retries says (exit 6)', async () => {
    const never = new Promise<void>(() => {});
    const provider = await startReplayProvider({ replies: [{ ...reply('097'), headersAfter: never }] });
    cleanup.add(() => provider.close());
    const replay = await replayRun(
      cleanup.sandbox(),
      {
        kind: 'compatible:llamacpp',
        replies: [],
        model: 'stories260k',
        args: ['--no-tools', '-c', 'assistant.request.headers_timeout_secs=1', '-c', 'assistant.request.max_retries=1'],
      },
      provider,
    );
    const result = checkJson(replay);
    assert.equal(result.status, 'retryable');
    assert.equal(result.error.code, 'provider_timeout');
    assert.match(result.error.message, /did not begin to answer within 1 s \(no response headers\)/);
    assert.match(result.error.hint, /headers_timeout_secs/);
    assert.equal(provider.requests.length, 2);
  });
});

describe('an answer made only of reasoning', () => {
  const cleanup = useCleanup();
  const warning = /the model gave no answer, only reasoning \(\d+ characters\)/;

  it('JSON: success with a reasoning_only warning; the reasoning is logged', async () => {
    const replay = await replayRun(cleanup.sandbox(), {
      kind: 'compatible:llamacpp',
      replies: [recorded('055')],
      args: ['--no-tools'],
    });
    const result = checkJson(replay);
    assert.equal(result.status, 'success');
    assert.equal(result.answer, '');
    const codes = result.warnings.map((item: any) => item.code);
    assert.ok(codes.includes('reasoning_only'), JSON.stringify(codes));
    assert.match(result.warnings.find((item: any) => item.code === 'reasoning_only').message, warning);
    assert.ok(replay.events.some((event) => typeof event.reasoning === 'string' && event.reasoning.length > 0));
  });

  it('text mode: stdout is empty and stderr says why (exit 0)', async () => {
    const replay = await replayRun(cleanup.sandbox(), {
      kind: 'compatible:llamacpp',
      replies: [recorded('087')],
      mode: 'text',
      args: ['--no-tools'],
    });
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.stdout, '');
    assert.match(replay.stderr, new RegExp(`^jp: ${warning.source}`, 'm'));
  });

  it('attach (no terminal) says it as the foreground run does', async () => {
    let release!: () => void;
    const headers = new Promise<void>((resolve) => (release = resolve));
    const provider = await startReplayProvider({ replies: [{ ...reply('087'), headersAfter: headers }] });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = replayModelArguments('compatible:llamacpp', provider.baseUrl, 'stories260k');
    const detached = await runJp(sandbox, ['query', '--detach', '--no-tools', ...model.args, 'a story'], {
      env: model.env,
    });
    assert.equal(detached.code, 0, detached.stderr);
    const conversation = /jp-c\d+/.exec(detached.stdout + detached.stderr)![0];
    await eventually('the request reaches the server', () => provider.requests.length === 1);
    const attach = startJp(sandbox, ['conversation', 'attach', conversation], { env: model.env });
    const attached = collect(attach, [], 60_000);
    let stderr = '';
    attach.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    attach.stdout!.on('data', () => {});
    // Connected: it has shown the turn so far from the log (the user's message).
    await eventually('attach shows the turn so far', () => /^> a story$/m.test(stderr));
    release();
    const result = await attached;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, new RegExp(`^jp: ${warning.source}`, 'm'));
  });
});

/** A llama-server with a 2,048-token window, as recorded: summary requests get `summary`, every other request the next of `steps` (the last one again past the end). */
async function smallWindowServer(steps: string[], summary = '003') {
  const queue = [...steps];
  const provider = await startReplayProvider({
    replies: (index) => {
      const body = provider.requests[index]!.body;
      if (isSummaryRequest(body)) return reply(summary);
      // Past the last step, the last one again: the tests count requests.
      return reply(queue.length > 1 ? queue.shift()! : queue[0]!);
    },
  });
  return provider;
}

function isSummaryRequest(body: any): boolean {
  return /^You are compacting/.test(body.messages?.[0]?.content ?? '');
}

/** The user messages of a request, in order. */
function userMessages(body: any): string[] {
  return body.messages.filter((message: any) => message.role === 'user').map((message: any) => message.content);
}

describe('a small window: compaction converges, nothing known too big is sent', () => {
  const cleanup = useCleanup();
  const windowArgs = ['-c', 'assistant.context_window=2048', '--no-tools'];

  async function query(sandbox: Sandbox, baseUrl: string, args: string[], message?: string, stdin?: string) {
    const model = replayModelArguments('compatible:llamacpp', baseUrl, 'stories260k');
    const run = await runJp(
      sandbox,
      [
        'query',
        '--json',
        ...model.args,
        ...args,
        '-c',
        'assistant.request.backoff_base_ms=5',
        ...(message ? [message] : []),
      ],
      { env: model.env, ...(stdin !== undefined ? { stdin } : {}) },
    );
    const lines = run.stdout.trim().split('\n');
    return { ...run, result: JSON.parse(lines[lines.length - 1]!) as Record<string, any> };
  }

  it('follow-ups in a 2,048-token window: the summary request is capped, a long summary is cut, the question follows it, a refusal compacts and --continue still asks the question', async () => {
    // 002: the first answer filled the window (1515 + 533). 083 and 097 are short answers; 004 is
    // llama-server's refusal of a request over its window.
    const provider = await smallWindowServer(['002', '083', '004', '004', '097']);
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const first = await query(
      sandbox,
      provider.baseUrl,
      ['--new', ...windowArgs],
      'Tell me a short story about a cat.',
    );
    assert.equal(first.code, 0, first.stderr);
    const id = first.result.conversation_id as string;

    const second = await query(
      sandbox,
      provider.baseUrl,
      [`--id=${id}`, ...windowArgs],
      'What happened next to the dog?',
    );
    assert.equal(second.code, 0, second.stderr);
    const summaryRequest = provider.requests[1]!.body;
    assert.ok(isSummaryRequest(summaryRequest), 'compacted before sending the follow-up');
    assert.ok(
      summaryRequest.max_tokens > 0 && summaryRequest.max_tokens <= 2048 / 4,
      `max_tokens ${summaryRequest.max_tokens}`,
    );
    const compaction = readEvents(sandbox, id).find((event) => event.type === 'compaction')!;
    // 003 ran to 811 tokens, as a server that ignores the cap would: cut to it.
    assert.match(compaction.summary, /\[… cut to fit the context window\]$/);
    assert.ok(compaction.summary.length < 1500 / 2, `${compaction.summary.length} characters`);
    assert.equal(userMessages(provider.requests[2]!.body).at(-1), 'What happened next to the dog?');

    // Refused (004): compacted and sent once more, said as it is done; refused again, the turn ends (exit 1).
    const third = await query(
      sandbox,
      provider.baseUrl,
      [`--id=${id}`, ...windowArgs],
      'And then what did the cat do?',
    );
    assert.equal(third.code, 1, third.stderr);
    assert.equal(third.result.error.code, 'context_length_exceeded');
    assert.match(third.result.error.message, /exceeds the available context size \(2048 tokens\)/);
    assert.match(
      third.stderr,
      /compacting the conversation[^\n]*\n[^\n]*retrying once the request llamacpp\/stories260k refused as too long/,
    );

    // --continue resumes that turn: whatever was summarised, the question is what the model is asked.
    const resumed = await query(sandbox, provider.baseUrl, [`--id=${id}`, '--continue', ...windowArgs]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const last = provider.requests.at(-1)!.body;
    assert.ok(!isSummaryRequest(last));
    assert.equal(userMessages(last).at(-1), 'And then what did the cat do?');
    for (const request of provider.requests.filter((request) => isSummaryRequest(request.body)))
      assert.ok(request.body.max_tokens > 0, 'every summary request is capped');
  });

  it('13.9 KB of piped input for a 2,048-token window: refused before sending, with the window, the sizes and what to change (exit 2)', async () => {
    const provider = await smallWindowServer(['016']);
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const digits = Array.from({ length: 3000 }, (_, index) => String(index + 1)).join('\n');
    const run = await query(sandbox, provider.baseUrl, ['--new', ...windowArgs], 'Sum these numbers.', digits);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(provider.requests.length, 0, 'nothing was sent');
    assert.equal(run.result.error.code, 'context_window_too_small');
    assert.match(
      run.result.error.message,
      /nothing was sent: the 2048-token context window \(assistant\.context_window\) cannot hold the system prompt and your message: at least \d+ tokens \(the system prompt about \d+ tokens, no tools, your message about \d+\)$/,
    );
    assert.match(run.result.error.hint, /A shorter message/);
    assert.match(run.result.error.hint, /--ctx-size/);
    assert.doesNotMatch(run.stderr, /compacting|retrying/);
  });

  it('every tool in a window too small for their schemas: said before sending, naming --no-tools (exit 2)', async () => {
    const provider = await smallWindowServer(['097']);
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const run = await query(sandbox, provider.baseUrl, ['--new', '-c', 'assistant.context_window=1536'], 'Hi');
    assert.equal(run.code, 2, run.stderr);
    assert.equal(provider.requests.length, 0);
    assert.match(run.result.error.message, /cannot hold the system prompt, the tools and your message/);
    assert.match(run.result.error.message, /\d+ tools about \d+/);
    assert.match(run.result.error.hint, /--no-tools/);
    // Nothing of the turn reached the model: it is dropped, and the message goes again as advised.
    const again = await query(
      sandbox,
      provider.baseUrl,
      [`--id=${run.result.conversation_id}`, '--no-tools', '-c', 'assistant.context_window=1536'],
      'Hi',
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal(provider.requests.length, 1);
    assert.equal(provider.requests[0]!.body.tools, undefined);
  });

  it("the characters per token are learned from the server's usage: a follow-up jp's guess of 3 would send is compacted first", async () => {
    // 083 reported 1,500 prompt tokens for jp's first request: llama-server's tokenizer takes well
    // under 2 characters a token, so the 336 characters this message adds are ~180 tokens, not 112.
    const provider = await smallWindowServer(['083', '097']);
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const first = await query(sandbox, provider.baseUrl, ['--new', ...windowArgs], 'Tell me a story.');
    assert.equal(first.code, 0, first.stderr);
    const usage = readEvents(sandbox, first.result.conversation_id).find((event) => event.type === 'usage')!;
    assert.ok(usage.request_characters / usage.usage.input_tokens < 2, JSON.stringify(usage));
    const second = await query(
      sandbox,
      provider.baseUrl,
      [`--id=${first.result.conversation_id}`, ...windowArgs],
      'And then? '.repeat(32),
    );
    assert.equal(second.code, 0, second.stderr);
    assert.ok(isSummaryRequest(provider.requests[1]!.body), 'compacted before the follow-up was sent');
    assert.equal(userMessages(provider.requests[2]!.body).at(-1), 'And then? '.repeat(32));
  });

  it('an empty 200 from llama-cpp-python for a request estimated past the window threshold is its context overflow: not retried, said so (exit 1)', async () => {
    const provider = await smallWindowServer(['049']);
    cleanup.add(() => provider.close());
    // About 2,000 tokens at jp's guess of 3 characters a token: past 80% of 2,048, under the window at 4.
    const run = await query(cleanup.sandbox(), provider.baseUrl, ['--new', ...windowArgs], 'Go on. '.repeat(570));
    assert.equal(run.code, 1, run.stderr);
    assert.equal(provider.requests.length, 1, 'an overflow is not retried');
    assert.equal(run.result.error.code, 'context_length_exceeded');
    assert.match(
      run.result.error.message,
      /answered HTTP 200 with an empty body, as a server does for a request longer than its context window/,
    );
  });
});

describe('a turn keeps its tools', () => {
  const cleanup = useCleanup();

  /** A local server: the first request streams the start of an answer and then waits; later ones are answered. */
  async function heldServer() {
    const provider = await startReplayProvider({
      replies: (index) => (index === 0 ? { ...reply('097'), cutAfterEvents: 3, close: 'stall' } : reply('097')),
    });
    cleanup.add(() => provider.close());
    return { provider, model: replayModelArguments('compatible:llamacpp', provider.baseUrl, 'stories260k') };
  }

  it("--no-tools, then Ctrl+C → stop: --continue sends no tools, and says it keeps the turn's", async () => {
    const { provider, model } = await heldServer();
    const sandbox = cleanup.sandbox();
    const screen = Screen.jp(sandbox, ['query', '--no-tools', ...model.args, 'Tell me a story.'], {
      env: model.env,
      cleanup,
    });
    // The answer's first line is held by the markdown renderer until it ends: the server's side tells.
    await eventually('the request reached the server', () => provider.requests.length === 1);
    screen.press(keys.ctrlC);
    await screen.waitFor('❯ stop: save what was done and end the turn (resumable)', { on: 'screen' });
    screen.press(keys.enter);
    assert.equal((await screen.exited).exitCode, 130, screen.text());
    const [conversation] = conversationIds(sandbox);
    const start = readEvents(sandbox, conversation!).find((event) => event.type === 'turn_start')!;
    assert.deepEqual(start.tools, { no_tools: true, enabled: [] });
    assert.match(start.seal, /^[0-9a-f]{64}$/);
    assert.equal(provider.requests[0]!.body.tools, undefined);

    const resumed = await runJp(sandbox, ['query', '--continue', `--id=${conversation}`, ...model.args], {
      env: model.env,
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(provider.requests.length, 2);
    assert.equal(provider.requests[1]!.body.tools, undefined, 'the resumed turn offers no tools, as it was started');
    assert.match(resumed.stderr, /jp: the resumed turn keeps the tools it was started with: --no-tools\n/);
  });

  it('--no-tools, then --detach and conversation kill: --continue --tool fs_read_file still sends none, and says the --tool applies only to a new message', async () => {
    const { provider, model } = await heldServer();
    const sandbox = cleanup.sandbox();
    const detached = await runJp(sandbox, ['query', '--detach', '--no-tools', ...model.args, 'Tell me a story.'], {
      env: model.env,
    });
    assert.equal(detached.code, 0, detached.stderr);
    const [conversation] = conversationIds(sandbox);
    await eventually('the request reached the server', () => provider.requests.length === 1);
    const killed = await runJp(sandbox, ['conversation', 'kill', conversation!]);
    assert.equal(killed.code, 0, killed.stderr);
    await eventually('the run stopped', () =>
      readEvents(sandbox, conversation!).some((event) => event.type === 'turn_end'),
    );

    const resumed = await runJp(
      sandbox,
      ['query', '--continue', `--id=${conversation}`, '--tool', 'fs_read_file', ...model.args],
      { env: model.env },
    );
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(provider.requests.at(-1)!.body.tools, undefined);
    assert.match(
      resumed.stderr,
      /jp: the resumed turn keeps the tools it was started with: --no-tools; the configured tools and --tool fs_read_file applies only to a new message/,
    );
  });

  it("a turn_start whose tools this user's jp did not seal (a log edited or committed) decides nothing: --continue offers what the command line and config say, with a warning", async () => {
    const { provider, model } = await heldServer();
    const sandbox = cleanup.sandbox();
    const disabled = ['-c', 'conversation.tools.run_command.enable=false'];
    const detached = await runJp(sandbox, ['query', '--detach', '--no-tools', ...disabled, ...model.args, 'hi'], {
      env: model.env,
    });
    assert.equal(detached.code, 0, detached.stderr);
    const [conversation] = conversationIds(sandbox);
    await eventually('the request reached the server', () => provider.requests.length === 1);
    assert.equal((await runJp(sandbox, ['conversation', 'kill', conversation!])).code, 0);
    await eventually('the run stopped', () =>
      readEvents(sandbox, conversation!).some((event) => event.type === 'turn_end'),
    );
    // The attacker rewrites the recorded tools to enable the tool the user's config disables.
    const file = path.join(sandbox.workspace, '.jp', 'conversations', conversation!, 'events.ndjson');
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const index = lines.findIndex((line) => JSON.parse(line).type === 'turn_start');
    lines[index] = JSON.stringify({
      ...JSON.parse(lines[index]!),
      tools: { no_tools: false, enabled: ['run_command'] },
    });
    writeFileSync(file, `${lines.join('\n')}\n`);

    const resumed = await runJp(sandbox, ['query', '--continue', `--id=${conversation}`, ...disabled, ...model.args], {
      env: model.env,
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    const offered = (provider.requests.at(-1)!.body.tools ?? []).map((tool: any) => tool.function.name);
    assert.ok(offered.length > 0, 'the command line and the config decide: the configured tools');
    assert.ok(!offered.includes('run_command'), offered.join(', '));
    assert.match(resumed.stderr, /the tools recorded for the interrupted turn were not recorded by your jp: ignored/);
  });
});
