/**
 * The pure half of `jp acp` (src/acp/updates.ts, permissions.ts, questions.ts, prompt-content.ts): how a run's end reads as a stop reason, how each
 * inquiry is put to an editor, how streamed and persisted text combine without repeats.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inquiryRequestOf } from '../../src/acp/permissions.ts';
import { messageOfPrompt } from '../../src/acp/prompt-content.ts';
import { elicitationOf, questionAsChoices } from '../../src/acp/questions.ts';
import { stopReasonOf, toolDiffsOf, toolKindOf, UpdateMapper } from '../../src/acp/updates.ts';
import { encodeAnswer } from '../../src/inquiry/answer.ts';
import type { ResultObject } from '../../src/report/result.ts';

function result(
  status: ResultObject['status'],
  fields: { finish?: 'length' | 'stop'; error?: string } = {},
): ResultObject {
  return {
    v: 1,
    type: 'result',
    ts: '',
    conversation_id: 'jp-c1',
    log_file: null,
    status,
    exit_code: 0,
    query: '',
    answer: '',
    sources: [],
    tools: [],
    permission_denials: [],
    unanswered: [],
    hook_answers: [],
    pending_inquiry: null,
    metadata: {
      model: null,
      iterations: 1,
      duration_ms: 1,
      usage: null,
      cost_usd: null,
      finish_reason: fields.finish ?? null,
      response_model: null,
    },
    warnings: [],
    error: fields.error ? { code: fields.error, message: 'x' } : null,
  };
}

describe('acp: stop reasons', () => {
  it('map from how the turn ended; a failed run has none (it is a JSON-RPC error)', () => {
    assert.equal(stopReasonOf(result('success', { finish: 'stop' })), 'end_turn');
    assert.equal(stopReasonOf(result('denied')), 'end_turn');
    assert.equal(stopReasonOf(result('success', { finish: 'length' })), 'max_tokens');
    assert.equal(stopReasonOf(result('interrupted')), 'cancelled');
    assert.equal(stopReasonOf(result('error', { error: 'max_turns_exceeded' })), 'max_turn_requests');
    assert.equal(stopReasonOf(result('error', { error: 'refused' })), 'refusal');
    assert.equal(stopReasonOf(result('error', { error: 'provider_error' })), undefined);
    assert.equal(stopReasonOf(result('retryable')), undefined);
    assert.equal(stopReasonOf(result('usage')), undefined);
  });
});

describe('acp: inquiries', () => {
  it('runs and deliveries are permission requests: allow once, allow for this turn, reject', () => {
    const run = inquiryRequestOf({ kind: 'run_tool', tool: 'run_command', arguments: { command: 'ls' } });
    assert.equal(run.kind, 'permission');
    if (run.kind !== 'permission') return;
    assert.deepEqual(
      run.choices.map((choice) => [choice.option.kind, encodeAnswer(choice.answer)]),
      [
        ['allow_once', 'run'],
        ['allow_always', 'run_always'],
        ['reject_once', 'skip'],
      ],
    );
    const deliver = inquiryRequestOf({ kind: 'deliver_tool_result', tool: 'fs_read_file', result: 'text' });
    if (deliver.kind !== 'permission') return assert.fail('a delivery is a permission request');
    assert.deepEqual(
      deliver.choices.map((choice) => [choice.option.kind, encodeAnswer(choice.answer), choice.remember ?? false]),
      [
        ['allow_once', 'deliver', false],
        ['allow_always', 'deliver', true],
        ['reject_once', 'skip', false],
      ],
    );
    const escalate = inquiryRequestOf({
      kind: 'escalate',
      tool: 'run_command',
      arguments: { command: 'curl x' },
      needs: 'network',
      justification: 'fetch it',
    });
    if (escalate.kind !== 'permission') return assert.fail('an escalation is a permission request');
    assert.deepEqual(
      escalate.choices.map((choice) => [choice.option.kind, encodeAnswer(choice.answer), choice.remember ?? false]),
      [
        ['allow_once', 'run', false],
        ['allow_always', 'run', true],
        ['reject_once', 'skip', false],
      ],
    );
    assert.deepEqual(
      inquiryRequestOf({
        kind: 'tool_question',
        tool: 'ask_user',
        question: { id: 'q', text: 't', answer_type: 'text', exclusive: false },
      }),
      { kind: 'question' },
    );
  });

  it('without forms, a question with a fixed set of answers is a permission request of them; typed input says what it needs', () => {
    const select = questionAsChoices({
      id: 'q',
      text: 'Pick',
      answer_type: 'select',
      options: ['a', 'b'],
      exclusive: false,
    });
    if (!('choices' in select)) return assert.fail('a choice is put as options');
    assert.deepEqual(
      select.choices.map((choice) => [choice.option.name, choice.option.kind, choice.answer]),
      [
        ['a', 'allow_once', 'a'],
        ['b', 'allow_once', 'b'],
      ],
    );
    assert.equal(new Set(select.choices.map((choice) => choice.option.optionId)).size, 2);
    const yesNo = questionAsChoices({ id: 'q', text: 'Sure?', answer_type: 'boolean', exclusive: false });
    if (!('choices' in yesNo)) return assert.fail('yes/no is put as options');
    assert.deepEqual(
      yesNo.choices.map((choice) => [choice.option.name, choice.option.kind, choice.answer]),
      [
        ['Yes', 'allow_once', true],
        ['No', 'reject_once', false],
      ],
    );
    const text = questionAsChoices({ id: 'q', text: 'Name?', answer_type: 'text', exclusive: false });
    assert.ok('unasked' in text && /no text box.*ask_user again with `options`/.test(text.unasked));
    const form = questionAsChoices({ id: 'q', text: 'Form', answer_type: 'form', fields: [], exclusive: false });
    assert.ok('unasked' in form && /no forms/.test(form.unasked));
  });

  it('a question becomes an elicitation form whose reply reads back as the answer', () => {
    const select = elicitationOf({
      id: 'q',
      text: 'Pick',
      answer_type: 'select',
      options: ['a', 'b'],
      exclusive: false,
    });
    assert.deepEqual(select.requestedSchema, {
      type: 'object',
      properties: { answer: { type: 'string', title: 'Pick', enum: ['a', 'b'] } },
      required: ['answer'],
    });
    assert.equal(select.answerOf({ action: 'accept', content: { answer: 'b' } }), 'b');
    assert.equal(select.answerOf({ action: 'decline' }), undefined);
    const form = elicitationOf({
      id: 'f',
      text: 'Details',
      answer_type: 'form',
      fields: [{ name: 'port', type: 'integer', required: true, minimum: 1 }],
      exclusive: true,
    });
    assert.deepEqual(form.requestedSchema.required, ['port']);
    assert.deepEqual(form.answerOf({ action: 'accept', content: { port: 80 } }), {
      action: 'accept',
      content: { port: 80 },
    });
    assert.deepEqual(form.answerOf({ action: 'decline' }), { action: 'decline' });
  });
});

describe('acp: updates', () => {
  it('streamed text is not sent again when the persisted event repeats it; what was not streamed is', () => {
    const mapper = new UpdateMapper('/w');
    const texts = (updates: ReturnType<UpdateMapper['event']>): string[] =>
      updates.map((update) => (update as { content: { text: string } }).content.text);
    assert.deepEqual(texts(mapper.delta('message', 'Hello, ')), ['Hello, ']);
    assert.deepEqual(texts(mapper.delta('message', 'world')), ['world']);
    assert.deepEqual(mapper.event({ type: 'chat_response', timestamp: '', message: 'Hello, ' }, false), []);
    assert.deepEqual(texts(mapper.event({ type: 'chat_response', timestamp: '', message: 'world and more' }, false)), [
      ' and more',
    ]);
    assert.deepEqual(texts(mapper.event({ type: 'chat_response', timestamp: '', reasoning: 'thinking' }, false)), [
      'thinking',
    ]);
    assert.equal(
      mapper.event({ type: 'chat_response', timestamp: '', reasoning: 'x' }, false)[0]!.sessionUpdate,
      'agent_thought_chunk',
    );
  });

  it("the user's messages are sent only on replay; file tools carry kind, locations and diffs", () => {
    const mapper = new UpdateMapper('/w');
    assert.deepEqual(mapper.event({ type: 'chat_request', timestamp: '', content: 'hi' }, false), []);
    assert.equal(
      mapper.event({ type: 'chat_request', timestamp: '', content: 'hi' }, true)[0]!.sessionUpdate,
      'user_message_chunk',
    );
    assert.equal(toolKindOf('run_command'), 'execute');
    assert.equal(toolKindOf('mcp__x__y'), 'other');
    assert.deepEqual(
      toolDiffsOf('fs_modify_file', { path: 'a.ts', edits: [{ old_string: 'x', new_string: 'y' }] }, '/w'),
      [{ type: 'diff', path: '/w/a.ts', oldText: 'x', newText: 'y' }],
    );
    const [call] = mapper.event(
      {
        type: 'tool_call_request',
        timestamp: '',
        id: 'c1',
        name: 'fs_modify_file',
        arguments: { path: 'a.ts', old_string: 'x', new_string: 'y' },
      },
      false,
    );
    assert.deepEqual(call, {
      sessionUpdate: 'tool_call',
      toolCallId: 'c1',
      title: 'fs_modify_file: a.ts',
      kind: 'edit',
      status: 'pending',
      rawInput: { path: 'a.ts', old_string: 'x', new_string: 'y' },
      locations: [{ path: '/w/a.ts' }],
      content: [{ type: 'diff', path: '/w/a.ts', oldText: 'x', newText: 'y' }],
    });
  });

  it('a title shows control characters visibly, never raw', () => {
    const mapper = new UpdateMapper('/w');
    const [call] = mapper.event(
      {
        type: 'tool_call_request',
        timestamp: '',
        id: 'c1',
        name: 'run_command',
        arguments: { command: 'ls\u001b[2J\u0007' },
      },
      false,
    );
    assert.doesNotMatch((call as { title: string }).title, /[\u0000-\u001f]/);
  });

  it('a prompt: text, then resource links and embedded resources as context', () => {
    assert.equal(
      messageOfPrompt([
        { type: 'text', text: 'Look' },
        { type: 'resource_link', uri: 'file:///a', name: 'a' },
        { type: 'resource', resource: { uri: 'file:///b', blob: 'AAAA', mimeType: 'image/png' } },
      ]),
      'Look\n\n[resource: file:///a (a)]\n\n[binary resource: file:///b (image/png)]',
    );
  });
});
