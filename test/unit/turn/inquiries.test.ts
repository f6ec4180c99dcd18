/**
 * Questions a tool asks (src/turn/inquiries.ts through the real route()), run in-process on the
 * real engine: who answers under each setting, what the tool and the model are told.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent, EventOf } from '../../../src/conversation/events.ts';
import type { Question } from '../../../src/inquiry/types.ts';
import type { ToolAnswer } from '../../../src/tools/tool.ts';
import { callsThenAnswers, runTurn, scriptedTool } from '../../support/in-process-turn.ts';
import { RecordingHost } from '../../support/recording-host.ts';

const color: Question = {
  id: 'color',
  text: 'Which color?',
  answer_type: 'select',
  options: ['red', 'green', 'blue'],
  exclusive: false,
};
const script = callsThenAnswers([{ name: 'paint' }]);
const unattended = 'conversation.tools.paint.run="unattended"';

/** Returns the question until it has an answer, then paints with it (a local command tool's needs_input). */
function asking(question: Question, options: { tellsWhoAnswered?: boolean } = {}) {
  return scriptedTool('paint', {
    ...options,
    run: (_arguments, context) =>
      context.answers[question.id] === undefined
        ? { kind: 'needs_input', question }
        : {
            kind: 'success',
            content: `painted ${JSON.stringify(context.answers[question.id])} by ${context.answeredBy[question.id]}`,
          },
  });
}

function response(events: readonly ConversationEvent[]): EventOf<'tool_call_response'> {
  return events.find((event): event is EventOf<'tool_call_response'> => event.type === 'tool_call_response')!;
}

function answers(events: readonly ConversationEvent[]): EventOf<'inquiry_response'>[] {
  return events.filter((event): event is EventOf<'inquiry_response'> => event.type === 'inquiry_response');
}

describe('a question a tool asks', () => {
  it("detached defaults: its default answers it; the result says so, naming the setting (e2e decided-without-human: a local tool's question)", async () => {
    const { events } = await runTurn({
      host: new RecordingHost(),
      script,
      tools: [asking({ ...color, default: 'green' })],
      cfg: [unattended, 'conversation.tools.paint.detached.tool="defaults"'],
      message: 'go',
    });
    assert.match(
      response(events).content,
      /^painted "green" by policy\n\n\[jp: decided without a human\] The question "Which color\?" was answered with the question's default: no user is available, and conversation\.tools\.paint\.detached\.tool = "defaults".* \(answer: "green"\)\.$/,
    );
  });

  it('a tool that says who answered gets no second note', async () => {
    const { events } = await runTurn({
      host: new RecordingHost(),
      script,
      tools: [asking({ ...color, default: 'green' }, { tellsWhoAnswered: true })],
      cfg: [unattended, 'conversation.tools.paint.detached.tool="defaults"'],
      message: 'go',
    });
    assert.equal(response(events).content, 'painted "green" by policy');
  });

  it('default_option = "last" from the config picks the last option; one matching no option is named in the refusal', async () => {
    const last = await runTurn({
      host: new RecordingHost(),
      script,
      tools: [asking(color)],
      cfg: [
        unattended,
        'conversation.tools.paint.detached.tool="defaults"',
        'conversation.tools.paint.questions.color.default_option="last"',
      ],
      message: 'go',
    });
    assert.match(response(last.events).content, /^painted "blue" by policy/);
    const wrong = await runTurn({
      host: new RecordingHost(),
      script,
      tools: [asking(color)],
      cfg: [
        unattended,
        'conversation.tools.paint.detached.tool="defaults"',
        'conversation.tools.paint.questions.color.default_option="purple"',
      ],
      message: 'go',
    });
    assert.equal(response(wrong.events).outcome, 'denied');
    assert.match(
      response(wrong.events).content,
      /default_option "purple" matches none of the options \["red","green","blue"\].*Choose a safe path, or report that input is required\.$/,
    );
  });

  it('target = "assistant": the model answers with a structured request; the answer is recorded as the assistant\'s', async () => {
    const { events, model } = await runTurn({
      host: new RecordingHost({ answers: [] }),
      script: { ...script, inquiry_answer: 'red' },
      tools: [asking(color)],
      cfg: [unattended, 'conversation.tools.paint.questions.color.target="assistant"'],
      message: 'go',
    });
    assert.deepEqual(
      answers(events).map((answer) => [answer.answer, answer.by, answer.action]),
      [['red', 'assistant', 'LlmInquiry']],
    );
    const structured = model.requests.find((request) => request.responseFormat);
    assert.deepEqual(structured?.responseFormat?.schema, {
      type: 'object',
      properties: { answer: { type: 'string', enum: ['red', 'green', 'blue'] } },
      required: ['answer'],
      additionalProperties: false,
    });
    assert.match(response(events).content, /^painted "red" by assistant/);
  });

  it("detached auto, but the question is exclusive: never the model's to answer; the model is told (e2e mcp-elicitation: exclusive)", async () => {
    const { events, model } = await runTurn({
      host: new RecordingHost(),
      script: { ...script, inquiry_answer: 'red' },
      tools: [asking({ ...color, exclusive: true })],
      cfg: [unattended, 'conversation.tools.paint.detached.tool="auto"'],
      message: 'go',
    });
    assert.equal(model.requests.filter((request) => request.responseFormat).length, 0);
    assert.equal(response(events).outcome, 'denied');
    assert.match(
      response(events).content,
      /^unanswered: no user is available to answer "Which color\?", and the question is exclusive .*Choose a safe path, or report that input is required\.$/,
    );
  });

  it('the model giving an answer outside the options is no answer', async () => {
    const { events } = await runTurn({
      host: new RecordingHost(),
      script: { ...script, inquiry_answer: 'purple' },
      tools: [asking(color)],
      cfg: [unattended, 'conversation.tools.paint.detached.tool="auto"'],
      message: 'go',
    });
    assert.equal(answers(events)[0]?.answer, null);
    assert.match(
      response(events).content,
      /^unanswered: the assistant was asked "Which color\?" but gave no valid answer\./,
    );
  });

  it("a client's answer that is not one of the options is ignored and asked again (attacker)", async () => {
    const host = new RecordingHost({ answers: ['purple', 'blue'] });
    const { events } = await runTurn({ host, script, tools: [asking(color)], cfg: [unattended], message: 'go' });
    assert.equal(host.asked.length, 2);
    assert.deepEqual(
      host.notices.map((notice) => notice.level),
      ['warning'],
    );
    assert.deepEqual(
      answers(events).map((answer) => [answer.answer, answer.by]),
      [['blue', 'user']],
    );
    assert.equal(response(events).content, 'painted "blue" by user');
  });

  it('asked while the tool runs and refused by the policy: the tool hears why, the result says it was told the user declined', async () => {
    const told: ToolAnswer[] = [];
    const tool = scriptedTool('paint', {
      async run(_arguments, context) {
        told.push(await context.ask(color));
        return { kind: 'success', content: 'painted nothing' };
      },
    });
    const { events } = await runTurn({
      host: new RecordingHost(),
      script,
      tools: [tool],
      cfg: [unattended],
      message: 'go',
      builtinDetached: 'deny',
    });
    assert.equal(told.length, 1);
    assert.equal(told[0]!.kind, 'unanswered');
    assert.match(
      (told[0] as { reason: string }).reason,
      /^unanswered: no user is available to answer "Which color\?", and the detached policy is "deny"/,
    );
    assert.match(
      response(events).content,
      /^painted nothing\n\n\[jp: decided without a human\] Unanswered: no user is available .*; the tool was told the user declined\.$/,
    );
  });
});
