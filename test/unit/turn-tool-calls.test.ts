/**
 * A tool call's stages (src/turn/tool-calls.ts) and the replay of a resumed call
 * (src/turn/tool-call-replay.ts), run in-process on the real engine: each state an interrupted
 * turn can leave a call in, resumed; each permission outcome. The logs resumed here are real
 * logs, cut where a crash would cut them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationEvent, EventOf } from '../../src/conversation/events.ts';
import { LogSeal } from '../../src/conversation/seal.ts';
import type { Question } from '../../src/inquiry/types.ts';
import { callsThenAnswers, cutAfter, runTurn, scriptedTool } from '../support/in-process-turn.ts';
import { declines, RecordingHost } from '../support/recording-host.ts';

const callId = 'test_call_0_1';

function responseOf(events: readonly ConversationEvent[], id = callId): EventOf<'tool_call_response'> | undefined {
  return events.find(
    (event): event is EventOf<'tool_call_response'> => event.type === 'tool_call_response' && event.id === id,
  );
}

function ofType<T extends ConversationEvent['type']>(events: readonly ConversationEvent[], type: T): EventOf<T>[] {
  return events.filter((event): event is EventOf<T> => event.type === type);
}

const deployScript = callsThenAnswers([{ name: 'deploy', arguments: { path: 'site' } }]);

/** A whole turn in which the user approved `deploy` and it ran: the log cuts are taken from it. */
async function approvedTurn(options: { sideEffects?: boolean; cfg?: string[] } = {}): Promise<ConversationEvent[]> {
  const { events, outcome } = await runTurn({
    host: new RecordingHost({ answers: ['run'] }),
    script: deployScript,
    tools: [scriptedTool('deploy', options)],
    message: 'deploy it',
    ...(options.cfg ? { cfg: options.cfg } : {}),
  });
  assert.equal(outcome.status, 'completed');
  return events;
}

describe('a resumed call, from each state an interrupted turn leaves it in', () => {
  it('requested, not approved: the same inquiry is asked again under its recorded id, then the tool runs once', async () => {
    const log = cutAfter(await approvedTurn(), (event) => event.type === 'inquiry_request');
    const recordedId = ofType(log, 'inquiry_request')[0]!.id;
    const host = new RecordingHost({ answers: ['run'] });
    const tool = scriptedTool('deploy');
    const { outcome, events } = await runTurn({ host, script: deployScript, tools: [tool], events: log });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(
      host.asked.map((entry) => entry.id),
      [recordedId],
    );
    assert.equal(ofType(events, 'inquiry_request').length, 1, 'asked again, not recorded twice');
    assert.deepEqual(tool.runs, [{ path: 'site' }]);
    assert.equal(responseOf(events)?.content, 'deploy ran');
  });

  it('approved, not run: the recorded approval is reused (nobody is asked, no policy decides) and the tool runs once', async () => {
    const log = cutAfter(await approvedTurn(), (event) => event.type === 'inquiry_response');
    const host = new RecordingHost();
    const tool = scriptedTool('deploy');
    const { events } = await runTurn({
      host,
      script: deployScript,
      tools: [tool],
      events: log,
      builtinDetached: 'deny',
    });
    assert.deepEqual(host.asked, []);
    assert.deepEqual(tool.runs, [{ path: 'site' }]);
    assert.equal(responseOf(events)?.outcome, 'ok');
    assert.equal(ofType(events, 'inquiry_response').length, 1);
  });

  it('approved in a log edited by someone without the seal key: not reused, asked again under its id (attacker)', async () => {
    const declined = await runTurn({
      host: new RecordingHost({ answers: ['skip'] }),
      script: deployScript,
      tools: [scriptedTool('deploy')],
      message: 'deploy it',
    });
    const log = cutAfter(declined.events, (event) => event.type === 'inquiry_response').map((event) =>
      event.type === 'inquiry_response' ? { ...event, answer: 'run' } : event,
    );
    const host = new RecordingHost({ answers: ['skip'] });
    const tool = scriptedTool('deploy');
    const { events } = await runTurn({ host, script: deployScript, tools: [tool], events: log });
    assert.deepEqual(
      host.asked.map((entry) => entry.id),
      [ofType(log, 'inquiry_request')[0]!.id],
    );
    assert.deepEqual(tool.runs, [], 'the forged approval ran nothing');
    assert.equal(responseOf(events)?.outcome, 'denied');
  });

  it('a call in a log another jp sealed is never run and never prompted for (attacker)', async () => {
    const log = cutAfter(await approvedTurn(), (event) => event.type === 'inquiry_response');
    const host = new RecordingHost({ answers: [] });
    const tool = scriptedTool('deploy');
    const { events } = await runTurn({
      host,
      script: deployScript,
      tools: [tool],
      events: log,
      seal: new LogSeal(Buffer.alloc(32, 9)),
    });
    assert.deepEqual(tool.runs, []);
    assert.deepEqual(host.asked, []);
    assert.equal(responseOf(events)?.outcome, 'skipped');
    assert.match(responseOf(events)!.content, /your jp did not record it/);
  });

  it('ran without a result, side effects: "outcome unknown", never run again (e2e resume: SIGTERM while a tool runs)', async () => {
    const log = cutAfter(await approvedTurn(), (event) => event.type === 'tool_call_start');
    const tool = scriptedTool('deploy');
    const { events, outcome } = await runTurn({
      host: new RecordingHost(),
      script: deployScript,
      tools: [tool],
      events: log,
    });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(tool.runs, []);
    const response = responseOf(events)!;
    assert.equal(response.outcome, 'unknown');
    assert.equal(response.is_error, true);
    assert.equal(
      response.content,
      'Outcome unknown: jp stopped while deploy was running, so it may or may not have taken effect. It was not run again; check its effect before retrying.',
    );
  });

  it('ran without a result, no side effects: run again', async () => {
    const log = cutAfter(await approvedTurn({ sideEffects: false }), (event) => event.type === 'tool_call_start');
    const tool = scriptedTool('deploy', { sideEffects: false });
    const { events } = await runTurn({ host: new RecordingHost(), script: deployScript, tools: [tool], events: log });
    assert.deepEqual(tool.runs, [{ path: 'site' }]);
    assert.equal(responseOf(events)?.outcome, 'ok');
  });

  it('completed: not run, not asked; the model gets its recorded result and the turn goes on', async () => {
    const log = cutAfter(await approvedTurn(), (event) => event.type === 'tool_call_response');
    const host = new RecordingHost();
    const tool = scriptedTool('deploy');
    const { events, model, outcome } = await runTurn({ host, script: deployScript, tools: [tool], events: log });
    assert.equal(outcome.status, 'completed');
    assert.deepEqual(tool.runs, []);
    assert.deepEqual(host.asked, []);
    assert.equal(ofType(events, 'tool_call_response').length, 1);
    const last = model.requests[0]!.messages.at(-1)!;
    assert.deepEqual(last, {
      role: 'tool',
      results: [{ id: callId, name: 'deploy', content: 'deploy ran', isError: false }],
    });
    const answer = ofType(events, 'chat_response').at(-1);
    assert.equal(answer && 'message' in answer ? answer.message : undefined, 'Done.');
  });

  it('interrupted to reply: a started call with side effects is "outcome unknown", one not started is "not run"', async () => {
    const script = callsThenAnswers([
      { name: 'deploy', id: 'first' },
      { name: 'deploy', id: 'second' },
    ]);
    const whole = await runTurn({
      host: new RecordingHost({ answers: ['run', 'run'] }),
      script,
      tools: [scriptedTool('deploy')],
      message: 'deploy twice',
    });
    const log = cutAfter(whole.events, (event) => event.type === 'tool_call_start' && event.id === 'first');
    const tool = scriptedTool('deploy');
    const { events } = await runTurn({
      host: new RecordingHost(),
      script,
      tools: [tool],
      events: log,
      reply: 'stop, do not deploy',
    });
    assert.deepEqual(tool.runs, []);
    // What the reply settles, before the model hears it (the script then calls the tools anew).
    const settled = events
      .slice(log.length, log.length + 3)
      .map((event) =>
        'content' in event ? [event.type, 'outcome' in event ? event.outcome : undefined, event.content] : [event.type],
      );
    assert.deepEqual(settled, [
      [
        'tool_call_response',
        'unknown',
        'Outcome unknown: the user interrupted while this tool was running; it may or may not have taken effect.',
      ],
      ['tool_call_response', 'skipped', 'Not run: the user interrupted the turn to reply.'],
      ['chat_request', undefined, 'stop, do not deploy'],
    ]);
  });
});

describe('a resumed call that stopped at a question of the tool', () => {
  const color: Question = {
    id: 'color',
    text: 'Which color?',
    answer_type: 'select',
    options: ['red', 'blue'],
    exclusive: false,
  };
  /** Asks while it runs (an MCP elicitation) and paints with the answer. */
  const painter = (sideEffects = true) =>
    scriptedTool('paint', {
      sideEffects,
      async run(_arguments, context) {
        const answer = await context.ask(color);
        return answer.kind === 'answered'
          ? { kind: 'success', content: `painted ${String(answer.answer)}` }
          : { kind: 'error', message: answer.kind };
      },
    });
  const paintScript = callsThenAnswers([{ name: 'paint' }]);
  const unattended = ['conversation.tools.paint.run="unattended"'];

  it('deferred while it asked: the question is asked again under its id, and the tool runs again with the answer (e2e mcp-elicitation: defer, --continue)', async () => {
    const first = await runTurn({
      host: new RecordingHost(),
      script: paintScript,
      tools: [painter()],
      cfg: unattended,
      message: 'paint',
      builtinDetached: 'defer',
    });
    assert.equal(first.outcome.status, 'deferred');
    assert.equal(responseOf(first.events), undefined);
    const asked = ofType(first.events, 'inquiry_request')[0]!;
    assert.equal(asked.during_call, true);

    const host = new RecordingHost({ answers: ['blue'] });
    const tool = painter();
    const { events } = await runTurn({
      host,
      script: paintScript,
      tools: [tool],
      cfg: unattended,
      events: first.events,
    });
    assert.deepEqual(
      host.asked.map((entry) => entry.id),
      [asked.id],
      'asked once, under the recorded id; the re-run reads the answer',
    );
    assert.equal(tool.runs.length, 1);
    assert.equal(responseOf(events)?.content, 'painted blue');
  });

  it('stopped after the question was answered, side effects: the tool went on after it, so "outcome unknown"', async () => {
    const whole = await runTurn({
      host: new RecordingHost({ answers: ['red'] }),
      script: paintScript,
      tools: [painter()],
      cfg: unattended,
      message: 'paint',
    });
    const log = cutAfter(whole.events, (event) => event.type === 'inquiry_response');
    const tool = painter();
    const { events } = await runTurn({
      host: new RecordingHost(),
      script: paintScript,
      tools: [tool],
      cfg: unattended,
      events: log,
    });
    assert.deepEqual(tool.runs, []);
    assert.equal(responseOf(events)?.outcome, 'unknown');
  });

  it('stopped after the question was answered, no side effects: run again with the recorded answer, nobody asked', async () => {
    const whole = await runTurn({
      host: new RecordingHost({ answers: ['red'] }),
      script: paintScript,
      tools: [painter(false)],
      cfg: unattended,
      message: 'paint',
    });
    const log = cutAfter(whole.events, (event) => event.type === 'inquiry_response');
    const host = new RecordingHost();
    const tool = painter(false);
    const { events } = await runTurn({
      host,
      script: paintScript,
      tools: [tool],
      cfg: unattended,
      events: log,
      builtinDetached: 'deny',
    });
    assert.deepEqual(host.asked, []);
    assert.equal(tool.runs.length, 1);
    assert.equal(responseOf(events)?.content, 'painted red');
  });

  it('a question the tool returned (needs_input), deferred: asked again first; the tool runs once more, with the answer', async () => {
    const confirm: Question = { id: 'confirm', text: 'Deploy now?', answer_type: 'boolean', exclusive: false };
    const confirming = () =>
      scriptedTool('deploy', {
        run: (_arguments, context) =>
          context.answers.confirm === undefined
            ? { kind: 'needs_input', question: confirm }
            : { kind: 'success', content: `confirm=${String(context.answers.confirm)}` },
      });
    const cfg = ['conversation.tools.deploy.run="unattended"'];
    const first = await runTurn({
      host: new RecordingHost(),
      script: deployScript,
      tools: [confirming()],
      cfg,
      message: 'deploy',
      builtinDetached: 'defer',
    });
    assert.equal(first.outcome.status, 'deferred');
    const tool = confirming();
    const host = new RecordingHost({ answers: [true] });
    const { events } = await runTurn({ host, script: deployScript, tools: [tool], cfg, events: first.events });
    assert.equal(host.asked[0]!.id, ofType(first.events, 'inquiry_request')[0]!.id);
    assert.equal(tool.runs.length, 1, 'not run again just to ask the recorded question');
    assert.equal(responseOf(events)?.content, 'confirm=true');
  });

  it('a result waiting to be delivered, deferred: delivered from the record, the tool not run again', async () => {
    const cfg = ['conversation.tools.deploy.run="unattended"', 'conversation.tools.deploy.result="ask"'];
    const first = await runTurn({
      host: new RecordingHost(),
      script: deployScript,
      tools: [scriptedTool('deploy')],
      cfg,
      message: 'deploy',
      builtinDetached: 'defer',
    });
    assert.equal(first.outcome.status, 'deferred');
    const tool = scriptedTool('deploy');
    const host = new RecordingHost({ answers: ['deliver'] });
    const { events } = await runTurn({ host, script: deployScript, tools: [tool], cfg, events: first.events });
    assert.deepEqual(tool.runs, []);
    assert.deepEqual(host.asked[0]!.inquiry, { kind: 'deliver_tool_result', tool: 'deploy', result: 'deploy ran' });
    assert.equal(responseOf(events)?.content, 'deploy ran');
  });
});

describe('permission to run', () => {
  async function call(
    answers: (string | object | typeof declines)[] | undefined,
    options: { cfg?: string[]; builtinDetached?: 'deny' | 'defer'; calls?: number } = {},
  ) {
    const host = new RecordingHost(answers ? { answers: answers as never } : {});
    const tool = scriptedTool('deploy');
    const calls = Array.from({ length: options.calls ?? 1 }, (_, index) => ({
      name: 'deploy',
      arguments: { path: 'site' },
      id: `call_${index + 1}`,
    }));
    const run = await runTurn({ host, script: callsThenAnswers(calls), tools: [tool], message: 'deploy', ...options });
    return { ...run, host, tool, responses: calls.map((entry) => responseOf(run.events, entry.id)) };
  }

  it('approved by the user: runs; the result goes to the model without a note', async () => {
    const { tool, responses, model } = await call(['run']);
    assert.deepEqual(tool.runs, [{ path: 'site' }]);
    assert.equal(responses[0]?.content, 'deploy ran');
    assert.deepEqual(model.requests[1]!.messages.at(-1), {
      role: 'tool',
      results: [{ id: 'call_1', name: 'deploy', content: 'deploy ran', isError: false }],
    });
  });

  it('declined by the user: not run, and the model is told', async () => {
    const { tool, responses } = await call(['skip']);
    assert.deepEqual(tool.runs, []);
    assert.deepEqual([responses[0]?.outcome, responses[0]?.content], ['denied', 'The user declined to run this tool.']);
  });

  it('"always" answers hold for the rest of the turn: one prompt for two calls', async () => {
    const always = await call(['run_always'], { calls: 2 });
    assert.equal(always.host.asked.length, 1);
    assert.equal(always.tool.runs.length, 2);
    const never = await call(['skip_always'], { calls: 2 });
    assert.equal(never.host.asked.length, 1);
    assert.deepEqual(
      never.responses.map((response) => response?.content),
      ['The user declined to run this tool.', 'The user declined to run this tool (for the rest of this turn).'],
    );
  });

  it('edited arguments run as edited; invalid ones are refused with what is wrong', async () => {
    const edited = await call([{ edit: { path: 'elsewhere' } }], { cfg: ['conversation.tools.deploy.run="edit"'] });
    assert.equal((edited.host.asked[0]!.inquiry as { edit?: boolean }).edit, true);
    assert.deepEqual(edited.tool.runs, [{ path: 'elsewhere' }]);
    const invalid = await call([{ edit: { path: 42 } }], { cfg: ['conversation.tools.deploy.run="edit"'] });
    assert.deepEqual(invalid.tool.runs, []);
    assert.deepEqual(
      [invalid.responses[0]?.outcome, invalid.responses[0]?.content],
      [
        'error',
        'The user edited the arguments, but they are invalid: Invalid arguments for deploy: expected {"path"?: string}',
      ],
    );
  });

  it('detached deny: not run; the model hears why and the key that lets it through', async () => {
    const { tool, responses, host } = await call(undefined, { builtinDetached: 'deny' });
    assert.deepEqual(tool.runs, []);
    assert.equal(responses[0]?.outcome, 'denied');
    assert.match(
      responses[0]!.content,
      /^Tool call denied: not run: no user is available to approve it, and the detached policy is "deny" \(.*\); to let it run without a user, set conversation\.tools\.deploy\.detached\.run = "auto"\.$/,
    );
    assert.deepEqual(
      host.resolved.map((entry) => entry.by),
      ['policy'],
    );
  });

  it('detached auto: runs, and the result says it ran without a human, naming the setting (e2e decided-without-human: auto)', async () => {
    const { tool, responses } = await call(undefined, { cfg: ['conversation.tools.defaults.detached="auto"'] });
    assert.equal(tool.runs.length, 1);
    assert.match(
      responses[0]!.content,
      /^deploy ran\n\n\[jp: decided without a human\] Run without a user's approval: no user is available, and conversation\.tools\.defaults\.detached = "auto"/,
    );
    assert.match(
      responses[0]!.content,
      /to require a human instead, set conversation\.tools\.deploy\.detached\.run = "deny" or "defer"/,
    );
  });

  it('detached defaults: refused with the advice detached.run = "auto" (e2e decided-without-human: refusals)', async () => {
    const { responses } = await call(undefined, { cfg: ['conversation.tools.defaults.detached="defaults"'] });
    assert.match(
      responses[0]!.content,
      /\("defaults" has no default answer for running a tool\); to let it run without a user, set conversation\.tools\.deploy\.detached\.run = "auto"/,
    );
    assert.doesNotMatch(responses[0]!.content, /"deny" or "defer"/);
  });

  it('detached defer: the turn stops deferred with the inquiry persisted and the call unanswered', async () => {
    const { outcome, tool, responses, events } = await call(undefined, { builtinDetached: 'defer' });
    assert.equal(outcome.status, 'deferred');
    assert.deepEqual(tool.runs, []);
    assert.equal(responses[0], undefined);
    assert.equal(ofType(events, 'inquiry_request')[0]?.inquiry.kind, 'run_tool');
    assert.equal(ofType(events, 'inquiry_response').length, 0);
  });

  it('a client that declines leaves it to the detached policy, and the client is told what that policy does', async () => {
    const { tool, host, responses } = await call([declines], {
      cfg: ['conversation.tools.deploy.detached.run="auto"'],
    });
    assert.equal(host.asked[0]!.ifDetached, 'AutoApprove');
    assert.equal(tool.runs.length, 1);
    assert.match(responses[0]!.content, /\[jp: decided without a human\] Run without a user's approval/);
  });

  it('invalid answers from a client are ignored (three at most), then the policy decides (attacker)', async () => {
    const { host, tool, responses } = await call(['yes', 'sure', { edit: 'rm -rf /' }]);
    assert.equal(host.asked.length, 3);
    assert.equal(host.notices.filter((notice) => /ignored an invalid answer/.test(notice.message)).length, 3);
    assert.deepEqual(tool.runs, []);
    assert.match(responses[0]!.content, /^Tool call denied: not run: no user is available/);
  });

  it('run = "skip" in the config: not run, nobody asked; an unknown tool and invalid arguments are errors the model can act on', async () => {
    const skipped = await call(['run'], { cfg: ['conversation.tools.deploy.run="skip"'] });
    assert.deepEqual(
      [skipped.responses[0]?.outcome, skipped.responses[0]?.content],
      ['skipped', 'Not run: conversation.tools.deploy.run = "skip" in the configuration.'],
    );
    assert.deepEqual(skipped.host.asked, []);

    const host = new RecordingHost();
    const { events } = await runTurn({
      host,
      script: callsThenAnswers([
        { name: 'launch', id: 'a' },
        { name: 'deploy', arguments: { target: 1 }, id: 'b' },
      ]),
      tools: [scriptedTool('deploy')],
      message: 'go',
    });
    assert.equal(responseOf(events, 'a')?.content, 'Unknown tool "launch". Available tools: deploy.');
    assert.equal(responseOf(events, 'b')?.content, 'Invalid arguments for deploy: expected {"path"?: string}');
  });

  it('leaving the sandbox is one question (the escalation is the permission to run it); declined, the model is told it runs confined; approved, it runs unconfined', async () => {
    const escalating = () =>
      scriptedTool('build', {
        confined: true,
        escalation: () => ({ needs: 'network', justification: 'downloads packages' }),
        run: (_arguments, context) => ({ kind: 'success', content: `sandbox ${context.sandbox.settings.mode}` }),
      });
    const script = callsThenAnswers([{ name: 'build' }]);
    const declinedHost = new RecordingHost({ answers: ['skip'] });
    const declined = await runTurn({ host: declinedHost, script, tools: [escalating()], message: 'build' });
    assert.deepEqual(
      declinedHost.asked.map((entry) => entry.inquiry.kind),
      ['escalate'],
    );
    assert.match(
      responseOf(declined.events)!.content,
      /^The user declined to run this command outside the sandbox\. Without "escalate", the command runs in the sandbox \(workspace-write, no network\)\.$/,
    );
    const approved = await runTurn({
      host: new RecordingHost({ answers: ['run'] }),
      script,
      tools: [escalating()],
      message: 'build',
    });
    assert.equal(responseOf(approved.events)?.content, 'sandbox off');
  });
});

describe('delivery of the result', () => {
  const cfg = (mode: string) => [
    `conversation.tools.deploy.run="unattended"`,
    `conversation.tools.deploy.result="${mode}"`,
  ];

  it('asked: withheld when the user says so; edited text replaces it', async () => {
    const withheld = await runTurn({
      host: new RecordingHost({ answers: ['skip'] }),
      script: deployScript,
      tools: [scriptedTool('deploy')],
      cfg: cfg('ask'),
      message: 'go',
    });
    assert.deepEqual(
      [responseOf(withheld.events)?.outcome, responseOf(withheld.events)?.content],
      ['denied', 'The tool ran, but the user chose not to share its result.'],
    );
    const edited = await runTurn({
      host: new RecordingHost({ answers: [{ edit: 'shortened' }] }),
      script: deployScript,
      tools: [scriptedTool('deploy')],
      cfg: cfg('edit'),
      message: 'go',
    });
    assert.equal(responseOf(edited.events)?.content, 'shortened');
  });

  it('delivered by detached auto: the result says it was shared without a human (e2e decided-without-human: a result delivered by auto)', async () => {
    const { events } = await runTurn({
      host: new RecordingHost(),
      script: deployScript,
      tools: [scriptedTool('deploy')],
      cfg: [...cfg('ask'), 'conversation.tools.deploy.detached.deliver="auto"'],
      message: 'go',
    });
    assert.match(
      responseOf(events)!.content,
      /^deploy ran\n\n\[jp: decided without a human\] Result shared without a user's review: no user is available, and conversation\.tools\.deploy\.detached\.deliver = "auto"/,
    );
  });

  it('result = "skip": the model is told the tool ran and its result is withheld', async () => {
    const { events } = await runTurn({
      host: new RecordingHost(),
      script: deployScript,
      tools: [scriptedTool('deploy')],
      cfg: cfg('skip'),
      message: 'go',
    });
    assert.equal(
      responseOf(events)?.content,
      'The tool ran, but its result is withheld: conversation.tools.deploy.result = "skip".',
    );
  });
});
