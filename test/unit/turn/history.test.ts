/**
 * What goes back to the model (src/turn/history.ts buildPrompt), seen where the model sees it: the
 * requests the real engine sends, in-process, and logs with the shapes a run leaves behind.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent } from '../../../src/conversation/events.ts';
import { buildPrompt, summaryMessage } from '../../../src/turn/history.ts';
import { StopRequest } from '../../../src/turn/host.ts';
import { callsThenAnswers, runTurn, scriptedTool } from '../../support/in-process-turn.ts';
import { RecordingHost } from '../../support/recording-host.ts';

const at = '2026-01-01T00:00:00.000Z';

describe('what goes back to the model', () => {
  it("a discarded turn is left out of the next turn's request (the turn was stopped with abort)", async () => {
    const stop = new AbortController();
    const tool = scriptedTool('deploy', {
      run: () => {
        stop.abort(new StopRequest('SIGINT', { discard: true }));
        return { kind: 'success', content: 'never delivered' };
      },
    });
    const first = await runTurn({
      host: new RecordingHost({ answers: ['run'] }),
      script: callsThenAnswers([{ name: 'deploy' }]),
      tools: [tool],
      message: 'deploy the site',
      signal: stop.signal,
    });
    assert.equal(first.outcome.status, 'interrupted');
    const last = first.events.at(-1);
    assert.equal(last?.type === 'turn_end' ? last.status : last?.type, 'discarded');
    const second = await runTurn({
      host: new RecordingHost(),
      script: { steps: [{ parts: [{ text: 'Hi.' }] }] },
      events: first.events,
      message: 'just say hi',
    });
    assert.deepEqual(second.model.requests[0]!.messages, [
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'just say hi' },
    ]);
  });

  it('a step of tool calls goes back with all its results in one tool message, a refused call as an error', async () => {
    const { model } = await runTurn({
      host: new RecordingHost({ answers: ['run', 'skip'] }),
      script: callsThenAnswers([
        { name: 'deploy', arguments: { path: 'a' }, id: 'a' },
        { name: 'deploy', arguments: { path: 'b' }, id: 'b' },
      ]),
      tools: [scriptedTool('deploy')],
      message: 'deploy both',
    });
    assert.deepEqual(model.requests[1]!.messages.slice(1), [
      { role: 'user', content: 'deploy both' },
      {
        role: 'assistant',
        text: '',
        toolCalls: [
          { id: 'a', name: 'deploy', arguments: { path: 'a' } },
          { id: 'b', name: 'deploy', arguments: { path: 'b' } },
        ],
      },
      {
        role: 'tool',
        results: [
          { id: 'a', name: 'deploy', content: 'deploy ran', isError: false },
          { id: 'b', name: 'deploy', content: 'The user declined to run this tool.', isError: true },
        ],
      },
    ]);
  });

  it('the compaction summary comes first after the system prompt, instead of the turns it replaces (e2e context: jp conversation compact)', () => {
    const events: ConversationEvent[] = [
      { type: 'turn_start', timestamp: at },
      { type: 'chat_request', timestamp: at, content: 'old question' },
      { type: 'chat_response', timestamp: at, message: 'old answer' },
      { type: 'turn_end', timestamp: at, status: 'completed' },
      {
        type: 'compaction',
        timestamp: at,
        summary: 'They talked about old things.',
        replaces: [0, 3],
        reason: 'threshold',
      },
      { type: 'turn_start', timestamp: at },
      { type: 'chat_request', timestamp: at, content: 'new question' },
    ];
    assert.deepEqual(buildPrompt(events, 'system'), [
      { role: 'system', content: 'system' },
      { role: 'user', content: summaryMessage('They talked about old things.'), summary: true },
      { role: 'user', content: 'new question' },
    ]);
    assert.match(
      summaryMessage('x'),
      /^\[Summary of the earlier conversation, written when it grew too long for the context window\]\n\nx$/,
    );
  });

  it('a compaction inside a discarded turn is not in force', () => {
    const events: ConversationEvent[] = [
      { type: 'turn_start', timestamp: at },
      { type: 'chat_request', timestamp: at, content: 'kept question' },
      { type: 'chat_response', timestamp: at, message: 'kept answer' },
      { type: 'turn_end', timestamp: at, status: 'completed' },
      { type: 'turn_start', timestamp: at },
      { type: 'compaction', timestamp: at, summary: 'dropped', replaces: [0, 3], reason: 'threshold' },
      { type: 'turn_end', timestamp: at, status: 'discarded' },
      { type: 'turn_start', timestamp: at },
      { type: 'chat_request', timestamp: at, content: 'next question' },
    ];
    assert.deepEqual(buildPrompt(events, undefined), [
      { role: 'user', content: 'kept question' },
      { role: 'assistant', text: 'kept answer', toolCalls: [] },
      { role: 'user', content: 'next question' },
    ]);
  });

  it("a cut-off answer is never sent back; the provider's own calls are not; a call without a result gets one (e2e provider-cut: --continue)", () => {
    const events: ConversationEvent[] = [
      { type: 'turn_start', timestamp: at },
      { type: 'chat_request', timestamp: at, content: 'question' },
      { type: 'chat_response', timestamp: at, message: 'half an ans', incomplete: true },
      {
        type: 'turn_end',
        timestamp: at,
        status: 'error',
        error: { code: 'provider_stream_cut', message: 'cut' },
        exit_code: 6,
      },
      {
        type: 'tool_call_request',
        timestamp: at,
        id: 'web',
        name: 'web_search',
        arguments: { query: 'x' },
        provider_executed: true,
      },
      {
        type: 'tool_call_response',
        timestamp: at,
        id: 'web',
        content: 'results',
        is_error: false,
        outcome: 'ok',
        provider_executed: true,
      },
      { type: 'tool_call_request', timestamp: at, id: 'lost', name: 'deploy', arguments: 'not json' },
    ];
    assert.deepEqual(buildPrompt(events, undefined), [
      { role: 'user', content: 'question' },
      { role: 'assistant', text: '', toolCalls: [{ id: 'lost', name: 'deploy', arguments: { _raw: 'not json' } }] },
      {
        role: 'tool',
        results: [{ id: 'lost', name: 'deploy', content: 'No result was recorded for this tool call.', isError: true }],
      },
    ]);
  });

  it("signed reasoning goes back with its metadata, in front of the step's text", () => {
    const metadata = { anthropic: { signature: 'sig' } };
    const events: ConversationEvent[] = [
      { type: 'turn_start', timestamp: at },
      { type: 'chat_request', timestamp: at, content: 'q' },
      { type: 'chat_response', timestamp: at, reasoning: 'think ' },
      { type: 'chat_response', timestamp: at, reasoning: 'more', provider_metadata: metadata },
      { type: 'chat_response', timestamp: at, message: 'answer' },
      { type: 'turn_end', timestamp: at, status: 'completed' },
      { type: 'turn_start', timestamp: at },
      { type: 'chat_request', timestamp: at, content: 'next' },
    ];
    assert.deepEqual(buildPrompt(events, undefined)[1], {
      role: 'assistant',
      text: 'answer',
      toolCalls: [],
      reasoning: [{ text: 'think more', metadata }],
    });
  });
});
