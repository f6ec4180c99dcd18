/**
 * MCP elicitations (`elicitation/create`) from server-everything's trigger-elicitation-request tool:
 * each is a question inquiry of the calling tool, routed by route(). With no human, under each
 * detached policy (never a hang): auto lets the model answer (never an exclusive question, and only
 * with an answer that fits the requested schema), defaults uses the schema's defaults, deny
 * declines, defer cancels the call, persists the question and exits 4; `--continue` then asks the
 * human at a terminal and runs the tool again. At a terminal the question is a form on the screen;
 * an attached client gets it too. The server's own report of what it received is the proof.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  startFakeProvider,
  stepByToolResults,
  textStep,
  toolStep,
  type FakeProvider,
  type RecordedRequest,
  type ScriptedStep,
} from '../support/fake-provider.ts';
import {
  conversationIds,
  eventually,
  fakeModelArguments,
  readEvents,
  runJp,
  sleep,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';
import { createAjv, schemaProblem } from '../support/schemas.ts';
import { everythingStdio, killServers, writeUserConfig } from '../support/mcp.ts';
import { keys, Screen } from '../support/screen.ts';

const tool = 'mcp__everything__trigger-elicitation-request';
const size = { columns: 200, rows: 50 };

function userMessage(request: RecordedRequest): string {
  return request.messages.find((entry) => entry.role === 'user')?.text ?? '';
}

/** What the model's structured answer to the form is, by the keyword in the user's message. */
function modelAnswer(request: RecordedRequest): string {
  if (userMessage(request).includes('answer:invalid')) return JSON.stringify({ answer: { name: null, integer: 500 } });
  return JSON.stringify({ answer: { name: 'Ada Lovelace', check: null, integer: 7 } });
}

describe('MCP elicitation', { concurrency: 4 }, () => {
  const cleanup = useCleanup();
  const sandboxed = (): Sandbox => {
    const sandbox = cleanup.sandbox();
    cleanup.add(() => killServers(sandbox.root));
    return sandbox;
  };
  let provider: FakeProvider;
  before(async () => {
    provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: (request): ScriptedStep => {
        if (request.wantsJson) return textStep(modelAnswer(request));
        const message = userMessage(request);
        const calls = message.includes('call:wait-then-elicit')
          ? [
              { name: 'run_command', arguments: { command: 'while [ ! -e go ]; do sleep 0.05; done' } },
              { name: tool, arguments: {} },
            ]
          : [{ name: tool, arguments: {} }];
        return stepByToolResults([toolStep(calls), textStep('Finished.')])(request);
      },
    });
    cleanup.add(() => provider.close());
  });

  function configure(sandbox: Sandbox, policy: string, extra = '', serverExtra = ''): void {
    writeUserConfig(
      sandbox,
      `${everythingStdio('everything', sandbox.root, serverExtra)}\n[conversation.tools."${tool}"]\nrun = "unattended"\ndetached = { tool = "${policy}" }\n${extra}`,
    );
  }

  async function headless(sandbox: Sandbox, words: string) {
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const run = await runJp(sandbox, ['query', '--json', ...model.args, `${sandbox.root} ${words}`], {
      env: { ...model.env, CI: 'true' },
    });
    const lines = run.stdout.trim().split('\n');
    const conversationId = conversationIds(sandbox)[0]!;
    return {
      ...run,
      result: JSON.parse(lines[lines.length - 1]!) as Record<string, any>,
      events: readEvents(sandbox, conversationId),
      conversationId,
    };
  }

  function toolResult(events: Record<string, any>[]): string {
    return events.find((event) => event.type === 'tool_call_response')?.content ?? '';
  }

  function modelWasAsked(sandbox: Sandbox): boolean {
    return provider.requests.some((request) => request.wantsJson && userMessage(request).startsWith(sandbox.root));
  }

  it('auto: the model answers, with a structured call checked against the requested schema (exit 0)', async () => {
    const sandbox = sandboxed();
    configure(sandbox, 'auto');
    const run = await headless(sandbox, 'call:elicit');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.result.unanswered, []);
    const response = run.events.find((event) => event.type === 'inquiry_response')!;
    assert.equal(response.by, 'assistant');
    assert.deepEqual(response.answer, { action: 'accept', content: { name: 'Ada Lovelace', integer: 7 } });
    const request = provider.requests.find((entry) => entry.wantsJson && userMessage(entry).startsWith(sandbox.root))!;
    const schema = request.body.response_format.json_schema.schema.properties.answer;
    assert.deepEqual(schema.properties.integer.anyOf[0], {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      description: 'Integer: Your favorite integer (do not give us your phone number, pin, or other sensitive info)',
    });
    // The server's own report of what it received, and jp's note for the model.
    assert.match(toolResult(run.events), /- Name: Ada Lovelace\n- Favorite Integer: 7/);
    assert.match(
      toolResult(run.events),
      /\[jp: decided without a human\] The question "Please provide inputs for the following fields:" was answered by the assistant: no user is available/,
    );
  });

  it('auto: an answer that does not fit the schema is not sent; the server is told no (exit 3)', async () => {
    const sandbox = sandboxed();
    configure(sandbox, 'auto');
    const run = await headless(sandbox, 'call:elicit answer:invalid');
    assert.equal(run.code, 3, run.stderr);
    assert.equal(run.result.unanswered.length, 1);
    assert.match(run.result.unanswered[0].reason, /the assistant was asked .* but gave no valid answer/);
    assert.match(toolResult(run.events), /User declined to provide the requested information/);
  });

  it('auto: an exclusive question is never answered by the model (exit 3)', async () => {
    const sandbox = sandboxed();
    configure(sandbox, 'auto', `questions.elicitation = { exclusive = true }\n`);
    const run = await headless(sandbox, 'call:elicit');
    assert.equal(run.code, 3, run.stderr);
    assert.equal(run.result.unanswered[0].question_id, 'elicitation');
    assert.match(run.result.unanswered[0].reason, /exclusive/);
    assert.ok(!modelWasAsked(sandbox), 'the model was not asked');
    assert.match(toolResult(run.events), /User declined/);
  });

  it("defaults: the schema's defaults, but a required field without one means decline (exit 3)", async () => {
    const sandbox = sandboxed();
    configure(sandbox, 'defaults');
    const run = await headless(sandbox, 'call:elicit');
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.result.unanswered[0].reason, /the form's required field "name" has no default/);
    assert.match(toolResult(run.events), /User declined/);
    assert.match(
      toolResult(run.events),
      /\[jp: decided without a human\] Unanswered: no user is available .*; the tool was told the user declined\.$/,
    );
  });

  it('deny: declined, and the model is told (exit 3)', async () => {
    const sandbox = sandboxed();
    configure(sandbox, 'deny');
    const run = await headless(sandbox, 'call:elicit');
    assert.equal(run.code, 3, run.stderr);
    assert.equal(run.result.unanswered[0].tool_name, tool);
    assert.match(run.result.unanswered[0].reason, /no user is available .*\.detached\.tool = "deny"/);
    assert.match(toolResult(run.events), /User declined/);
    assert.ok(!modelWasAsked(sandbox));
  });

  it('defer: the call is cancelled, the question persisted (exit 4); --continue asks the human at a terminal and runs the tool again', async () => {
    const sandbox = sandboxed();
    configure(sandbox, 'defer');
    const run = await headless(sandbox, 'call:elicit');
    assert.equal(run.code, 4, run.stderr);
    assert.equal(run.result.status, 'deferred');
    assert.equal(run.result.pending_inquiry.kind, 'tool_question');
    assert.equal(run.result.pending_inquiry.inquiry.question.answer_type, 'form');
    const request = run.events.find((event) => event.type === 'inquiry_request')!;
    assert.equal(request.during_call, true);
    const ajv = createAjv();
    for (const event of run.events)
      assert.equal(schemaProblem(ajv, 'event.schema.json', event), undefined, JSON.stringify(event));
    for (const line of run.stdout.trim().split('\n'))
      assert.equal(schemaProblem(ajv, 'output-line.schema.json', JSON.parse(line)), undefined, line);
    assert.ok(!run.events.some((event) => event.type === 'tool_call_response'), 'the call has no result yet');
    const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
    assert.match(JSON.parse(listed.stdout)[0].status, new RegExp(`waiting-for-input \\(${tool}\\)`));

    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const screen = Screen.jp(sandbox, ['query', '--continue', `--id=${run.conversationId}`, ...model.args], {
      ...size,
      env: model.env,
      cleanup,
    });
    await fillTheForm(screen, 'Grace Hopper');
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    const events = readEvents(sandbox, run.conversationId);
    const answer = events.find((event) => event.type === 'inquiry_response')!;
    assert.equal(answer.by, 'user');
    assert.match(toolResult(events), /- Name: Grace Hopper/);
  });

  it('at a terminal: a form drawn field by field with defaults and bounds; the server receives the answers; the call time limit waits for the human', async () => {
    const sandbox = sandboxed();
    configure(sandbox, 'deny', '', 'tool_timeout_secs = 1\n');
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const screen = Screen.jp(sandbox, ['query', ...model.args, `${sandbox.root} call:elicit`], {
      ...size,
      env: model.env,
      cleanup,
    });
    // The person takes longer than the call's time limit to answer: the limit does not run meanwhile.
    const shown = await fillTheForm(screen, 'Grace Hopper', { thinkMs: 2000 });
    assert.ok(
      shown.some((line) => line.includes(`${tool} asks: Please provide inputs for the following fields:`)),
      shown.join('\n'),
    );
    const integer = shown.find((line) => line.includes('Integer — Your favorite integer'))!;
    assert.ok(integer, shown.join('\n'));
    assert.match(integer, /\(1 to 100, whole number\) \(optional\) \(42\)/, 'bounds and default shown');
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    assert.ok(
      screen.lines().some((line) => /✔ Integer — .* 7$/.test(line)),
      `the answer stays on the screen:\n${screen.text()}`,
    );
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    const response = events.find((event) => event.type === 'inquiry_response')!;
    assert.equal(response.by, 'user');
    assert.equal(response.answer.content.name, 'Grace Hopper');
    assert.match(toolResult(events), /- Name: Grace Hopper\n- Agreed to terms: true\n- Favorite Integer: 7/);
  });

  it('an attached client gets the form; its answer reaches the server', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      `${everythingStdio('everything', sandbox.root)}\n[conversation.tools."${tool}"]\nrun = "unattended"\n[conversation.tools.run_command]\nrun = "unattended"\n`,
    );
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const detached = await runJp(
      sandbox,
      ['query', '--detach', ...model.args, `${sandbox.root} call:wait-then-elicit`],
      { env: model.env },
    );
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const screen = Screen.jp(sandbox, ['conversation', 'attach', conversationId], { ...size, cleanup });
    // The history of the turn is drawn once the client is attached as the prompting client.
    await screen.waitFor('run_command');
    sandbox.write('go', '');
    await screen.waitFor(`${tool} asks: Please provide inputs`);
    screen.press(keys.down); // decline
    screen.press(keys.enter);
    await screen.exited;
    const events = readEvents(sandbox, conversationId);
    const response = events.find((event) => event.type === 'inquiry_response')!;
    assert.equal(response.by, 'user');
    assert.deepEqual(response.answer, { action: 'decline' });
    const results = events.filter((event) => event.type === 'tool_call_response').map((event) => String(event.content));
    assert.ok(
      results.some((content) => content.includes('User declined')),
      results.join('\n'),
    );
    await eventually('the run to end', () =>
      readEvents(sandbox, conversationId).some((event) => event.type === 'turn_end'),
    );
  });
});

/**
 * Plays the human: answers the form with `name`, yes to the terms, 7 as the integer, and the
 * defaults elsewhere, each key once its prompt is drawn. Returns the screen as it was while the
 * integer field was asked. `thinkMs`: how long the person looks at the form before sending it.
 */
async function fillTheForm(screen: Screen, name: string, options: { thinkMs?: number } = {}): Promise<string[]> {
  const asked = (label: string): Promise<void> => screen.waitFor(`? ${label}`, { on: 'screen' });
  await asked(`${tool} asks: Please provide inputs for the following fields:`);
  screen.press(keys.enter); // answer
  await asked('String — Your full, legal name (required)');
  screen.press(`${name}${keys.enter}`);
  await asked('Boolean — Agree to the terms and conditions (optional)');
  screen.press(keys.down + keys.enter); // "yes"
  for (const field of [
    'String with default',
    'String with email format',
    'String with uri format',
    'String with date format',
  ]) {
    await asked(field);
    screen.press(keys.enter);
  }
  await asked('Integer — Your favorite integer');
  const shown = screen.visibleRows();
  screen.press(`7${keys.enter}`);
  for (const field of [
    'Number in range 1-1000',
    'Untitled Single Select Enum',
    'Untitled Multiple Select Enum',
    'Titled Single Select Enum',
    'Titled Multiple Select Enum',
    'Legacy Titled Single Select Enum',
  ]) {
    await asked(field);
    screen.press(keys.enter);
  }
  await asked('Send these answers');
  if (options.thinkMs) await sleep(options.thinkMs);
  screen.press(keys.enter);
  return shown;
}
