/**
 * What a turn did (src/turn/summary.ts summarizeTurn), from the events the real engine recorded
 * in-process: the JSON result and `wait` are built from this.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent } from '../../../src/conversation/events.ts';
import type { Question } from '../../../src/inquiry/types.ts';
import { summarizeTurn } from '../../../src/turn/summary.ts';
import { callsThenAnswers, runTurn, scriptedTool } from '../../support/in-process-turn.ts';
import { RecordingHost } from '../../support/recording-host.ts';

const at = '2026-01-01T00:00:00.000Z';

describe('the summary of a turn', () => {
  it('a call the policy refused is a permission denial with its input; one the user declined is not; the answer is the last step', async () => {
    const { events } = await runTurn({
      host: new RecordingHost(),
      script: callsThenAnswers([{ name: 'deploy', arguments: { path: 'site' }, id: 'a' }], 'Could not deploy.'),
      tools: [scriptedTool('deploy')],
      message: 'deploy',
    });
    const summary = summarizeTurn(events);
    assert.equal(summary.answer, 'Could not deploy.');
    assert.deepEqual(
      summary.tools.map((tool) => [tool.id, tool.status]),
      [['a', 'denied']],
    );
    assert.equal(summary.permission_denials.length, 1);
    assert.deepEqual(
      { ...summary.permission_denials[0], reason: undefined },
      { tool_name: 'deploy', tool_call_id: 'a', kind: 'run_tool', tool_input: { path: 'site' }, reason: undefined },
    );
    assert.match(summary.permission_denials[0]!.reason, /^not run: no user is available to approve it/);
    assert.equal(summary.pending_inquiry, null);

    const declined = summarizeTurn(
      (
        await runTurn({
          host: new RecordingHost({ answers: ['skip'] }),
          script: callsThenAnswers([{ name: 'deploy' }]),
          tools: [scriptedTool('deploy')],
          message: 'deploy',
        })
      ).events,
    );
    assert.deepEqual(declined.permission_denials, []);
    assert.equal(declined.tools[0]!.status, 'denied');
  });

  it('a question no one could answer is listed as unanswered', async () => {
    const question: Question = { id: 'confirm', text: 'Deploy now?', answer_type: 'boolean', exclusive: false };
    const tool = scriptedTool('deploy', { run: () => ({ kind: 'needs_input', question }) });
    const { events } = await runTurn({
      host: new RecordingHost(),
      script: callsThenAnswers([{ name: 'deploy', id: 'a' }]),
      tools: [tool],
      cfg: ['conversation.tools.deploy.run="unattended"'],
      message: 'deploy',
    });
    const summary = summarizeTurn(events);
    assert.deepEqual(
      summary.unanswered.map((entry) => [entry.tool_name, entry.tool_call_id, entry.question_id, entry.question]),
      [['deploy', 'a', 'confirm', 'Deploy now?']],
    );
    assert.deepEqual(summary.permission_denials, []);
  });

  it('a deferred turn names its pending inquiry; its call is deferred (e2e resume: defer round trip, pending_inquiry)', async () => {
    const { events, outcome } = await runTurn({
      host: new RecordingHost(),
      script: callsThenAnswers([{ name: 'deploy', id: 'a' }]),
      tools: [scriptedTool('deploy')],
      message: 'deploy',
      builtinDetached: 'defer',
    });
    assert.equal(outcome.status, 'deferred');
    const summary = summarizeTurn(events);
    assert.deepEqual(
      { ...summary.pending_inquiry, id: undefined },
      {
        id: undefined,
        tool_call_id: 'a',
        tool: 'deploy',
        kind: 'run_tool',
        inquiry: { kind: 'run_tool', tool: 'deploy', arguments: {} },
      },
    );
    assert.equal(summary.tools[0]!.status, 'deferred');
  });

  it("an abandoned cut-off step is not in the answer; sources are kept once; the provider's own calls are not tools", () => {
    const events: ConversationEvent[] = [
      { type: 'turn_start', timestamp: at },
      { type: 'chat_request', timestamp: at, content: 'q' },
      {
        type: 'chat_response',
        timestamp: at,
        message: 'half',
        incomplete: true,
        sources: [{ url: 'https://a.example' }],
      },
      {
        type: 'tool_call_request',
        timestamp: at,
        id: 'web',
        name: 'web_search',
        arguments: {},
        provider_executed: true,
      },
      {
        type: 'tool_call_response',
        timestamp: at,
        id: 'web',
        content: 'r',
        is_error: false,
        outcome: 'ok',
        provider_executed: true,
      },
      { type: 'chat_request', timestamp: at, content: 'continue' },
      {
        type: 'chat_response',
        timestamp: at,
        message: 'The whole answer.',
        sources: [{ url: 'https://b.example' }, { url: 'https://b.example', title: 'again' }],
      },
      { type: 'turn_end', timestamp: at, status: 'completed' },
    ];
    const summary = summarizeTurn(events);
    assert.equal(summary.answer, 'The whole answer.');
    assert.deepEqual(summary.sources, [{ url: 'https://b.example' }]);
    assert.deepEqual(summary.tools, []);
  });
});
