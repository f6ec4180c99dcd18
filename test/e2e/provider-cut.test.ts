/**
 * A step is complete only when the provider's finish arrived. Recorded streams cut after N events
 * (the connection then ended cleanly, destroyed, or left open and silent): retried from scratch
 * while nothing was shown, otherwise saved as an incomplete step and exit 6 (retryable) with the
 * resume hint; `--continue` asks again and the turn completes with the final answer once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readEvents, runJp, useCleanup } from '../support/jp.ts';
import {
  eventsThrough,
  loadRecording,
  recordedText,
  replayModelArguments,
  startReplayProvider,
  type Recording,
} from '../support/replay-provider.ts';
import { checkJson, replayRun, stderrLines, writeUserConfig } from '../support/replay-run.ts';

const openaiText = loadRecording('vercel-ai/openai/chat/openai-text.chunks.txt')[0]!;
const anthropicJsonTool = loadRecording('vercel-ai/anthropic/anthropic-json-tool.2.chunks.txt')[0]!;
const anthropicText = loadRecording('vercel-ai/anthropic/anthropic-text.chunks.txt')[0]!;
/** OpenAI Responses: a reasoning summary, then "Received your test message. How can I help you today?" in 12 deltas. */
const responsesText = loadRecording('dcdpr-jp/openai/test_chat_completion_stream.yml')[0]!;
/** llama.cpp (OpenAI-compatible): a role-only first chunk, reasoning_content deltas, then the answer; no usage. */
const llamacppText = loadRecording('dcdpr-jp/llamacpp/test_chat_completion_stream.yml')[0]!;

/** The text a Chat Completions recording streams in its first `events` events. */
function chatTextOf(recording: Recording, events: number): string {
  return recording.events
    .slice(0, events)
    .filter((event) => event.startsWith('data: {'))
    .map(
      (event) =>
        (JSON.parse(event.slice('data: '.length)) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta
          ?.content ?? '',
    )
    .join('');
}

const fullAnswer = chatTextOf(openaiText, openaiText.events.length);

function messageText(events: Record<string, any>[]): string {
  return events
    .filter((event) => event.type === 'chat_response' && typeof event.message === 'string')
    .map((event) => event.message)
    .join('');
}

describe('a stream cut before its finish', () => {
  const cleanup = useCleanup();
  const sandbox = () => {
    const made = cleanup.sandbox();
    writeUserConfig(made);
    return made;
  };

  for (const close of ['end', 'destroy'] as const) {
    for (const writes of ['event', 'byte'] as const) {
      it(`after text was shown (connection ${close === 'end' ? 'ended cleanly' : 'destroyed'}, ${writes} writes): exit 6, the partial text kept and marked incomplete`, async () => {
        const box = sandbox();
        const replay = await replayRun(box, {
          kind: 'openai-chat',
          replies: [{ recording: openaiText, cutAfterEvents: 12, close }],
          writes,
        });
        const result = checkJson(replay);
        assert.equal(replay.code, 6, replay.stderr);
        assert.deepEqual([result.status, result.exit_code, result.error.code], ['retryable', 6, 'stream_broken']);
        assert.match(result.error.message, /the connection to OpenAI broke while streaming/);
        assert.match(result.error.hint, /jp query --continue/);
        assert.equal(replay.provider.requests.length, 1, 'not retried: its text was already shown');
        assert.equal(result.metadata.finish_reason, null);
        const partial = chatTextOf(openaiText, 12);
        assert.ok(partial.length > 0);
        assert.equal(result.answer, partial);
        assert.equal(messageText(replay.events), partial, 'the partial text is in the log');
        const responses = replay.events.filter((event) => event.type === 'chat_response');
        assert.equal(responses[responses.length - 1]!.incomplete, true, 'the step is marked incomplete');
        const end = replay.events[replay.events.length - 1]!;
        assert.deepEqual([end.type, end.status, end.exit_code], ['turn_end', 'error', 6]);
        const listed = await runJp(box, ['conversation', 'ls', '--json']);
        assert.equal(JSON.parse(listed.stdout)[0].status, 'interrupted (awaiting LLM response)');
      });
    }
  }

  it('text mode: the partial answer on stdout, the error and the resume command on stderr', async () => {
    const replay = await replayRun(sandbox(), {
      kind: 'openai-chat',
      replies: [{ recording: openaiText, cutAfterEvents: 12, close: 'end' }],
      mode: 'text',
    });
    assert.equal(replay.code, 6);
    assert.equal(replay.stdout, `${chatTextOf(openaiText, 12)}\n`);
    assert.match(replay.stderr, /error: openai\/\S+: the connection to OpenAI broke while streaming/);
    assert.match(replay.stderr, /Resume with: jp query --continue --id=jp-c\d+/);
    assert.doesNotMatch(replay.stderr, /Failed to process successful response/);
  });

  it('inside Anthropic tool input: exit 6 and no tool call, never run', async () => {
    const firstInput = anthropicJsonTool.events.findIndex((event) => event.includes('input_json_delta'));
    const replay = await replayRun(sandbox(), {
      kind: 'anthropic',
      replies: [{ recording: anthropicJsonTool, cutAfterEvents: firstInput + 2, close: 'destroy' }],
    });
    checkJson(replay);
    assert.equal(replay.code, 6, replay.stderr);
    assert.equal(replay.result!.status, 'retryable');
    assert.deepEqual(replay.result!.tools, []);
    assert.ok(
      !replay.events.some((event) => event.type.startsWith('tool_call')),
      'no tool call from an incomplete step',
    );
    assert.match(messageText(replay.events), /^I'll invoke/);
    assert.equal(replay.events.filter((event) => event.type === 'chat_response').pop()!.incomplete, true);
  });

  it('before anything was shown: retried from scratch, and the answer arrives once (exit 0)', async () => {
    const replay = await replayRun(sandbox(), {
      kind: 'anthropic',
      replies: [{ recording: anthropicText, cutAfterEvents: 2, close: 'destroy' }, { recording: anthropicText }],
    });
    checkJson(replay);
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.provider.requests.length, 2);
    assert.match(replay.result!.answer, /^Hello! I'm doing well/);
    assert.equal(messageText(replay.events), replay.result!.answer);
    assert.ok(!replay.events.some((event) => event.incomplete));
    assert.match(replay.stderr, /the connection to Anthropic broke while streaming.*retrying in/);
  });

  it('a stall past the idle timeout after text was shown: exit 6, incomplete', async () => {
    const replay = await replayRun(sandbox(), {
      kind: 'openai-chat',
      replies: [{ recording: openaiText, cutAfterEvents: 12, close: 'stall' }],
      args: ['-c', 'assistant.request.idle_timeout_secs=1'],
    });
    checkJson(replay);
    assert.equal(replay.code, 6, replay.stderr);
    assert.equal(replay.result!.error.code, 'provider_timeout');
    assert.equal(replay.result!.answer, chatTextOf(openaiText, 12));
    assert.equal(replay.events.filter((event) => event.type === 'chat_response').pop()!.incomplete, true);
  });

  it('--continue against a server that then answers completes the turn: the partial stays marked, the answer comes once', async () => {
    const box = sandbox();
    const provider = await startReplayProvider({
      replies: [{ recording: openaiText, cutAfterEvents: 12, close: 'end' }, { recording: openaiText }],
    });
    cleanup.add(() => provider.close());
    const cut = await replayRun(
      box,
      { kind: 'openai-chat', replies: [], message: 'tell me about a holiday' },
      provider,
    );
    checkJson(cut);
    assert.equal(cut.code, 6, cut.stderr);

    const model = replayModelArguments('openai-chat', provider.baseUrl);
    const resumed = await runJp(box, ['query', '--continue', ...model.args], { env: model.env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, `${fullAnswer}\n`, 'the final answer, once');
    assert.equal(provider.requests.length, 2);
    const asked = provider.requests[1]!.body.messages as { role: string; content: unknown }[];
    assert.deepEqual(
      asked.map((message) => message.role),
      ['system', 'user'],
      'the partial answer is not sent back',
    );
    assert.match(JSON.stringify(asked[1]!.content), /tell me about a holiday/);

    const events = readEvents(box, cut.result!.conversation_id);
    const incomplete = events.findIndex((event) => event.incomplete === true);
    assert.ok(incomplete > 0, 'the partial step is marked in the log');
    assert.equal(messageText(events.slice(0, incomplete + 1)), chatTextOf(openaiText, 12));
    assert.equal(messageText(events.slice(incomplete + 1)), fullAnswer);
    assert.deepEqual(
      events.filter((event) => event.type === 'turn_end').map((event) => event.status),
      ['error', 'completed'],
    );
    assert.equal(events.filter((event) => event.type === 'turn_start').length, 1, 'one turn');
  });
  describe('an OpenAI Responses recording', () => {
    /** Just past the sixth output_text delta: "Received your test message. How" was shown. */
    const afterText = eventsThrough(responsesText, 'response.output_text.delta', 6);
    const partial = recordedText(responsesText, afterText);

    for (const [close, writes] of [
      ['end', 'byte'],
      ['destroy', 'event'],
    ] as const) {
      it(`cut after text was shown (connection ${close === 'end' ? 'ended cleanly' : 'destroyed'}, ${writes} writes): exit 6 retryable, the partial text kept and marked incomplete`, async () => {
        assert.equal(partial, 'Received your test message. How');
        const replay = await replayRun(sandbox(), {
          kind: 'openai-responses',
          replies: [{ recording: responsesText, cutAfterEvents: afterText, close }],
          writes,
        });
        const result = checkJson(replay);
        assert.deepEqual([replay.code, result.status, result.error.code], [6, 'retryable', 'stream_broken']);
        assert.match(result.error.message, /the connection to OpenAI broke while streaming/);
        assert.match(result.error.hint, /jp query --continue/);
        assert.equal(replay.provider.requests.length, 1, 'not retried: its text was already shown');
        assert.equal(result.metadata.finish_reason, null);
        assert.equal(result.answer, partial);
        assert.equal(messageText(replay.events), partial, 'the partial text is in the log, once');
        assert.equal(replay.events.filter((event) => event.type === 'chat_response').pop()!.incomplete, true);
        const end = replay.events[replay.events.length - 1]!;
        assert.deepEqual([end.type, end.status, end.exit_code], ['turn_end', 'error', 6]);
      });
    }

    it('cut after text was shown, text mode: the partial answer on stdout, the error and the resume command on stderr (exit 6)', async () => {
      const replay = await replayRun(sandbox(), {
        kind: 'openai-responses',
        replies: [{ recording: responsesText, cutAfterEvents: afterText, close: 'destroy' }],
        writes: 'byte',
        mode: 'text',
      });
      assert.equal(replay.code, 6, replay.stderr);
      assert.equal(replay.stdout, `${partial}\n`);
      assert.match(replay.stderr, /error: openai\/\S+: the connection to OpenAI broke while streaming/);
      assert.match(replay.stderr, /Resume with: jp query --continue --id=jp-c\d+/);
      assert.equal(replay.provider.requests.length, 1);
    });

    it('cut before anything was shown: retried from scratch, the answer arrives once (exit 0)', async () => {
      const beforeAnything = eventsThrough(responsesText, 'response.output_item.added', 1);
      assert.equal(recordedText(responsesText, beforeAnything), '');
      const replay = await replayRun(sandbox(), {
        kind: 'openai-responses',
        replies: [
          { recording: responsesText, cutAfterEvents: beforeAnything, close: 'destroy' },
          { recording: responsesText },
        ],
      });
      const result = checkJson(replay);
      assert.equal(replay.code, 0, replay.stderr);
      assert.equal(replay.provider.requests.length, 2);
      assert.equal(result.answer, recordedText(responsesText));
      assert.equal(messageText(replay.events), result.answer, 'the answer once in the log');
      assert.ok(!replay.events.some((event) => event.incomplete));
      assert.ok(
        stderrLines(replay).some(
          (line) =>
            line.type === 'warning' && /the connection to OpenAI broke while streaming.*retrying in/.test(line.message),
        ),
        replay.stderr,
      );
    });

    it('a stall before anything was shown (past the idle timeout): retried from scratch, the answer once on stdout (exit 0)', async () => {
      const replay = await replayRun(sandbox(), {
        kind: 'openai-responses',
        replies: [{ recording: responsesText, cutAfterEvents: 1, close: 'stall' }, { recording: responsesText }],
        args: ['-c', 'assistant.request.idle_timeout_secs=1'],
        mode: 'text',
      });
      assert.equal(replay.code, 0, replay.stderr);
      assert.equal(replay.provider.requests.length, 2);
      assert.equal(replay.stdout, `${recordedText(responsesText)}\n`);
      assert.match(replay.stderr, /no data from the provider for 1 s; retrying in/);
      assert.doesNotMatch(replay.stderr, /Resume with/);
    });
  });

  describe('an OpenAI-compatible server recording (llama.cpp)', () => {
    /** Just past the third content delta: "Hello! This" was shown (after the reasoning). */
    const afterText = eventsThrough(llamacppText, '"content":"', 3);
    const partial = recordedText(llamacppText, afterText);

    it('cut after text was shown: exit 6 retryable, the partial text kept and marked incomplete', async () => {
      assert.equal(partial, 'Hello! This');
      const replay = await replayRun(sandbox(), {
        kind: 'compatible:llamacpp',
        replies: [{ recording: llamacppText, cutAfterEvents: afterText, close: 'destroy' }],
        writes: 'byte',
      });
      const result = checkJson(replay);
      assert.deepEqual([replay.code, result.status, result.error.code], [6, 'retryable', 'stream_broken']);
      assert.match(result.error.message, /the connection to llamacpp broke while streaming/);
      assert.equal(replay.provider.requests.length, 1);
      assert.equal(result.answer, partial);
      assert.equal(result.metadata.finish_reason, null);
      assert.equal(messageText(replay.events), partial);
      assert.equal(replay.events.filter((event) => event.type === 'chat_response').pop()!.incomplete, true);
    });

    it('cut after text was shown (connection ended cleanly, no [DONE]), text mode: the partial answer on stdout, exit 6', async () => {
      const replay = await replayRun(sandbox(), {
        kind: 'compatible:llamacpp',
        replies: [{ recording: llamacppText, cutAfterEvents: afterText, close: 'end' }],
        mode: 'text',
      });
      assert.equal(replay.code, 6, replay.stderr);
      assert.equal(replay.stdout, `${partial}\n`);
      assert.match(replay.stderr, /error: llamacpp\/\S+: the connection to llamacpp broke while streaming/);
      assert.match(replay.stderr, /Resume with: jp query --continue --id=jp-c\d+/);
    });

    it('cut before anything was shown: retried from scratch, the answer arrives once (exit 0)', async () => {
      assert.equal(recordedText(llamacppText, 1), '');
      const replay = await replayRun(sandbox(), {
        kind: 'compatible:llamacpp',
        replies: [{ recording: llamacppText, cutAfterEvents: 1, close: 'end' }, { recording: llamacppText }],
      });
      const result = checkJson(replay);
      assert.equal(replay.code, 0, replay.stderr);
      assert.equal(replay.provider.requests.length, 2);
      assert.equal(result.answer, recordedText(llamacppText));
      assert.equal(messageText(replay.events), result.answer);
      assert.ok(!replay.events.some((event) => event.incomplete));
    });
  });

  it('Anthropic: a stall before any text (past the idle timeout) is retried from scratch; the answer arrives once (exit 0)', async () => {
    const replay = await replayRun(sandbox(), {
      kind: 'anthropic',
      replies: [{ recording: anthropicText, cutAfterEvents: 1, close: 'stall' }, { recording: anthropicText }],
      args: ['-c', 'assistant.request.idle_timeout_secs=1'],
    });
    const result = checkJson(replay);
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.provider.requests.length, 2);
    assert.equal(result.answer, recordedText(anthropicText));
    assert.equal(messageText(replay.events), result.answer);
    assert.ok(!replay.events.some((event) => event.incomplete));
    assert.ok(
      stderrLines(replay).some(
        (line) => line.type === 'warning' && /no data from the provider for 1 s; retrying in/.test(line.message),
      ),
      replay.stderr,
    );
  });
});
