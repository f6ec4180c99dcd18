/**
 * An inquiry's answer is typed (src/inquiry/answer.ts): every answer of every kind reads from its
 * JSON form and writes back to it unchanged; anything else from a client is refused with an error
 * that says what was expected; and a log written before answers were typed still reads, and its
 * sealed answers are still reused on resume.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { ConversationEvent, EventOf } from '../../src/conversation/events.ts';
import { LogSeal } from '../../src/conversation/seal.ts';
import { loadConfig } from '../../src/config/load.ts';
import { encodeAnswer, parseAnswer, type InquiryAnswer } from '../../src/inquiry/answer.ts';
import type { Inquiry, Question } from '../../src/inquiry/types.ts';
import { InquiryResolver } from '../../src/turn/inquiries.ts';
import { rememberedDecisions } from '../../src/turn/resumed-turn.ts';
import { RecordingHost } from '../support/recording-host.ts';
import { repositoryRoot } from '../support/jp.ts';

const run: Inquiry = { kind: 'run_tool', tool: 'run_command', arguments: { command: 'ls' } };
const escalate: Inquiry = {
  kind: 'escalate',
  tool: 'run_command',
  arguments: { command: 'curl x' },
  needs: 'network',
  justification: 'fetch it',
};
const deliver: Inquiry = { kind: 'deliver_tool_result', tool: 'fs_read_file', result: 'text' };
const question = (fields: Omit<Question, 'id' | 'exclusive' | 'text'>): Inquiry => ({
  kind: 'tool_question',
  tool: 'ask_user',
  question: { id: 'q', text: 'Which?', exclusive: false, ...fields },
});
const boolean = question({ answer_type: 'boolean' });
const select = question({ answer_type: 'select', options: ['red', 'blue'] });
const text = question({ answer_type: 'text' });
const form = question({
  answer_type: 'form',
  fields: [{ name: 'age', type: 'integer', required: true, minimum: 0 }],
});

/** Every answer a client may give, as it crosses the wire, and the typed answer it is. */
const valid: [string, Inquiry, unknown, InquiryAnswer][] = [
  ['run once', run, 'run', { decision: 'approve', scope: 'once' }],
  ['run for the turn', run, 'run_always', { decision: 'approve', scope: 'turn' }],
  ['skip once', run, 'skip', { decision: 'deny', scope: 'once' }],
  ['skip for the turn', run, 'skip_always', { decision: 'deny', scope: 'turn' }],
  ['edited arguments', run, { edit: { command: 'ls -l' } }, { decision: 'edit', arguments: { command: 'ls -l' } }],
  ['run outside the sandbox', escalate, 'run', { decision: 'approve', scope: 'once' }],
  ['keep it in the sandbox', escalate, 'skip', { decision: 'deny', scope: 'once' }],
  ['deliver', deliver, 'deliver', { decision: 'deliver' }],
  ['withhold', deliver, 'skip', { decision: 'deny', scope: 'once' }],
  ['edited result', deliver, { edit: 'less text' }, { decision: 'edit', result: 'less text' }],
  ['yes/no', boolean, false, { decision: 'answer', value: false }],
  ['an option', select, 'blue', { decision: 'answer', value: 'blue' }],
  ['a text', text, 'Ada', { decision: 'answer', value: 'Ada' }],
  [
    'a filled form',
    form,
    { action: 'accept', content: { age: 7 } },
    { decision: 'answer', value: { action: 'accept', content: { age: 7 } } },
  ],
  ['a declined form', form, { action: 'decline' }, { decision: 'answer', value: { action: 'decline' } }],
  ['a cancelled form', form, { action: 'cancel' }, { decision: 'answer', value: { action: 'cancel' } }],
];

describe('inquiry answers', () => {
  for (const [name, inquiry, wire, typed] of valid) {
    it(`${inquiry.kind}: ${name} reads as its typed answer and writes back as it came`, () => {
      assert.deepEqual(parseAnswer(inquiry, wire, 'client'), { ok: true, answer: typed });
      assert.deepEqual(encodeAnswer(typed), wire);
    });
  }

  /** What a client (or a corrupt log) may send instead, and what the error must name. */
  const invalid: [string, Inquiry, unknown, RegExp][] = [
    ['a word it does not know', run, 'yes', /to run a tool \("run", "run_always", .*; got "yes"$/],
    ['no decision (null)', run, null, /got null$/],
    ['nothing at all', run, undefined, /got nothing$/],
    [
      'edited arguments that are a string',
      run,
      { edit: 'ls' },
      /\{"edit": <arguments>\} or \{"approve_always": <rule>\}\) was expected; got \{"edit":"ls"\}$/,
    ],
    ['an escalation for the turn (there is none)', escalate, 'run_always', /outside the sandbox \("run" or "skip"\)/],
    ['a delivery answered as a run', deliver, 'run', /to deliver a result/],
    ['an edited result that is not text', deliver, { edit: { text: 'x' } }, /to deliver a result/],
    ['a yes/no answered with a word', boolean, 'true', /\(true or false\) was expected; got "true"$/],
    ['an option that is not offered', select, 'purple', /one of \["red","blue"\]\) was expected; got "purple"$/],
    ['a text answered with a number', text, 5, /\(a string\) was expected; got 5$/],
    ['a form whose field is invalid', form, { action: 'accept', content: { age: -1 } }, /to a form/],
    ['a form answer without an action', form, { content: { age: 1 } }, /to a form/],
    ['a run answered with a question value', run, { action: 'accept', content: {} }, /to run a tool/],
  ];
  for (const [name, inquiry, wire, error] of invalid) {
    it(`${inquiry.kind}: ${name} is refused, saying what was expected (attacker)`, () => {
      const parsed = parseAnswer(inquiry, wire, 'client');
      assert.equal(parsed.ok, false);
      if (parsed.ok) return;
      assert.match(parsed.error, /^an answer .* was expected; got /);
      assert.match(parsed.error, error);
    });
  }

  it('a very long refused answer is shown cut short', () => {
    const parsed = parseAnswer(text, { x: 'a'.repeat(10_000) }, 'client');
    assert.ok(!parsed.ok && parsed.error.length < 200, JSON.stringify(parsed));
  });

  it('no decision (null) is read from the log for every kind, never from a client', () => {
    for (const inquiry of [run, escalate, deliver, boolean, select, text, form]) {
      assert.deepEqual(parseAnswer(inquiry, null, 'log'), { ok: true, answer: { decision: 'none' } });
      assert.equal(parseAnswer(inquiry, null, 'client').ok, false);
    }
    assert.equal(encodeAnswer({ decision: 'none' }), null);
  });
});

/**
 * A log written by jp's engine before answers were typed (main at df192a7: the resolver given these
 * answers by a client, the deny policy, and a reply that closed a pending run), sealed with the key
 * below. Its answers are the old JSON form, which is unchanged.
 */
const oldLog: ConversationEvent[] = readFileSync(
  path.join(repositoryRoot, 'test', 'fixtures', 'logs', 'answers-before-typed-decisions.ndjson'),
  'utf8',
)
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line));
const oldLogSeal = new LogSeal(Buffer.alloc(32, 1));
const conversationId = 'jp-c1700000000000000';
const place = { conversationId, workspaceId: 'w-000000000000' };
/**
 * The same log with its seals made as jp makes them now, bound to their place (conversation/seal.ts):
 * its answers keep their old JSON form. The fixture's own seals, made before seals were bound to a
 * place, carry no authority any more (checked below).
 */
const resealedLog: ConversationEvent[] = [];
for (const event of oldLog) resealedLog.push(oldLogSeal.at(place).seal(event, resealedLog));

function recordedPairs(
  log: readonly ConversationEvent[] = oldLog,
): { request: EventOf<'inquiry_request'>; response: EventOf<'inquiry_response'> }[] {
  const requests = new Map<string, EventOf<'inquiry_request'>>();
  const pairs: { request: EventOf<'inquiry_request'>; response: EventOf<'inquiry_response'> }[] = [];
  for (const event of log) {
    if (event.type === 'inquiry_request') requests.set(event.id, event);
    if (event.type === 'inquiry_response') pairs.push({ request: requests.get(event.id)!, response: event });
  }
  return pairs;
}

describe('a log written before answers were typed', () => {
  it('holds every kind of answer (the fixture covers them)', () => {
    const pairs = recordedPairs();
    assert.equal(pairs.length, 21);
    assert.deepEqual([...new Set(pairs.map((pair) => pair.request.inquiry.kind))].sort(), [
      'deliver_tool_result',
      'escalate',
      'run_tool',
      'tool_question',
    ]);
  });

  it('reads: every recorded answer parses against its inquiry and writes back byte for byte', () => {
    const decisions = recordedPairs().map(({ request, response }) => {
      const parsed = parseAnswer(request.inquiry, response.answer, 'log');
      assert.ok(parsed.ok, `${JSON.stringify(response.answer)}: ${parsed.ok ? '' : parsed.error}`);
      assert.equal(JSON.stringify(encodeAnswer(parsed.answer)), JSON.stringify(response.answer));
      return parsed.answer.decision;
    });
    assert.deepEqual([...new Set(decisions)].sort(), ['answer', 'approve', 'deliver', 'deny', 'edit', 'none']);
  });

  it('resumes: each sealed answer is reused as it was recorded, nothing asked or appended again', async () => {
    for (const { request, response } of recordedPairs(resealedLog)) {
      const appended: ConversationEvent[] = [];
      const host = new RecordingHost();
      const resolver = new InquiryResolver({
        host,
        config: loadConfig({
          userFile: undefined,
          workspaceFile: undefined,
          environment: {},
          cfgArguments: [],
          flags: [],
        }),
        builtinDetached: () => 'deny',
        signal: new AbortController().signal,
        conversationId,
        seal: oldLogSeal.at(place),
        log: resealedLog,
        append: (event) => void appended.push(event),
        answerWithLlm: async () => undefined,
      });
      const resolution = await resolver.resolve(request.tool_call_id, request.inquiry, { request, response });
      assert.equal(resolution.kind, 'answered');
      if (resolution.kind !== 'answered') return;
      assert.deepEqual(
        [encodeAnswer(resolution.answer), resolution.by, resolution.reason],
        [response.answer, response.by, response.reason],
      );
      assert.deepEqual(appended, []);
      assert.deepEqual(host.asked, []);
    }
  });

  it("remembers its turn's run_always and skip_always decisions, by tool", () => {
    const remembered = rememberedDecisions(
      {
        conversationId,
        seal: oldLogSeal.at(place),
        log: resealedLog,
        host: new RecordingHost(),
        tools: new Map(),
        append: () => {},
      },
      resealedLog,
    );
    assert.deepEqual(
      [...remembered],
      [
        ['tool_2', 'run'],
        ['tool_4', 'skip'],
      ],
    );
  });

  it('its own seals, made before seals were bound to a place, approve nothing: every inquiry is decided anew', async () => {
    for (const { request, response } of recordedPairs()) {
      const appended: ConversationEvent[] = [];
      const resolver = new InquiryResolver({
        host: new RecordingHost(),
        config: loadConfig({
          userFile: undefined,
          workspaceFile: undefined,
          environment: {},
          cfgArguments: [],
          flags: [],
        }),
        builtinDetached: () => 'deny',
        signal: new AbortController().signal,
        conversationId,
        seal: oldLogSeal.at(place),
        log: oldLog,
        append: (event) => void appended.push(event),
        answerWithLlm: async () => undefined,
      });
      const resolution = await resolver.resolve(request.tool_call_id, request.inquiry, { request, response });
      assert.equal(resolution.kind, 'answered');
      if (resolution.kind !== 'answered') return;
      assert.equal(resolution.by, 'policy', `${JSON.stringify(response.answer)} was reused`);
    }
  });
});
