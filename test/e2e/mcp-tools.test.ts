/**
 * MCP tools through the built binary, against server-everything (a real MCP server from the npm
 * registry) over stdio and over streamable HTTP on 127.0.0.1, with the LLM a local fake provider.
 * What the model receives is checked in the next request the provider gets.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { startFakeProvider, stepByToolResults, textStep, toolStep, type FakeProvider, type RecordedRequest, type ScriptedStep } from '../support/fake-provider.ts';
import { conversationIds, fakeModelArguments, readEvents, runJp, useCleanup, type Sandbox } from '../support/jp.ts';
import { everythingStdio, httpServer, killServers, startEverythingHttp, writeUserConfig, type HttpEverything } from '../support/mcp.ts';

/** What the model calls, by the keyword that ends the user's message. */
const calls: Record<string, { name: string; arguments: unknown }> = {
  echo: { name: 'mcp__everything__echo', arguments: { message: 'hello from the model' } },
  structured: { name: 'mcp__everything__get-structured-content', arguments: { location: 'New York' } },
  image: { name: 'mcp__everything__get-tiny-image', arguments: {} },
  links: { name: 'mcp__everything__get-resource-links', arguments: { count: 2 } },
  invalid: { name: 'mcp__everything__echo', arguments: { text: 'no message field' } },
  env: { name: 'mcp__everything__get-env', arguments: {} },
  progress: { name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 1.5, steps: 3 } },
  slow: { name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 60, steps: 60 } },
  toggle: { name: 'mcp__everything__toggle-simulated-logging', arguments: {} },
};

function keywordOf(request: RecordedRequest): string {
  const message = userMessage(request);
  return Object.keys(calls).find((keyword) => message.endsWith(`call:${keyword}`)) ?? 'echo';
}

function userMessage(request: RecordedRequest): string {
  return request.messages.find((entry) => entry.role === 'user')?.text ?? '';
}

/** The tool result the model received in the sandbox's conversation (its last request's last tool message). */
function toolResultSeenByModel(provider: FakeProvider, sandbox: Sandbox): { content: string; isError?: boolean } | undefined {
  const requests = provider.requests.filter((request) => userMessage(request).startsWith(sandbox.root) && request.messages.some((message) => message.toolResults.length > 0));
  const last = requests[requests.length - 1];
  return last?.messages.flatMap((message) => message.toolResults).pop();
}

describe('MCP tools', { concurrency: 4 }, () => {
  const cleanup = useCleanup();
  const sandboxed = (): Sandbox => {
    const sandbox = cleanup.sandbox();
    cleanup.add(() => killServers(sandbox.root));
    return sandbox;
  };
  let provider: FakeProvider;
  let http: HttpEverything;
  before(async () => {
    provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: (request): ScriptedStep => stepByToolResults([toolStep([calls[keywordOf(request)]!]), textStep('Finished.')])(request),
    });
    http = await startEverythingHttp();
    cleanup.add(() => provider.close());
    cleanup.add(() => http.close());
  });

  async function query(sandbox: Sandbox, keyword: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const run = await runJp(sandbox, ['query', '--json', ...model.args, ...args, `${sandbox.root} call:${keyword}`], { env: { ...model.env, CI: 'true', ...env } });
    const lines = run.stdout.trim().split('\n');
    const result = JSON.parse(lines[lines.length - 1]!) as Record<string, any>;
    return { ...run, result, events: readEvents(sandbox, conversationIds(sandbox)[0]!) };
  }

  for (const transport of ['stdio', 'http'] as const) {
    const configFor = (sandbox: Sandbox, extra = ''): string =>
      (transport === 'stdio' ? everythingStdio('everything', sandbox.root) : httpServer('everything', http.url)) + '\n' + extra;

    it(`${transport}: with no human, a call is denied by default (exit 3) and the model is told why`, async () => {
      const sandbox = sandboxed();
      writeUserConfig(sandbox, configFor(sandbox));
      const run = await query(sandbox, 'echo');
      assert.equal(run.code, 3, run.stderr);
      assert.equal(run.result.status, 'denied');
      assert.equal(run.result.permission_denials.length, 1);
      assert.equal(run.result.permission_denials[0].tool_name, 'mcp__everything__echo');
      const seen = toolResultSeenByModel(provider, sandbox);
      assert.ok(seen, 'the model received a tool result');
      assert.match(seen.content, /not run: no user is available/);
      assert.match(seen.content, /conversation\.tools\.mcp__everything__echo\.detached\.run = "auto"/);
      assert.ok(!run.events.some((event) => event.type === 'tool_call_start'), 'the tool never started');
    });

    it(`${transport}: a per-tool policy lets it run, and the server's answer reaches the model`, async () => {
      const sandbox = sandboxed();
      writeUserConfig(sandbox, configFor(sandbox, '[conversation.tools.mcp__everything__echo]\ndetached = { run = "auto" }\n'));
      const run = await query(sandbox, 'echo');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.result.status, 'success');
      const offered = provider.requests.find((request) => userMessage(request).startsWith(sandbox.root) && request.body.tools?.some((tool: any) => tool.function?.name === 'mcp__everything__echo'));
      assert.ok(offered, 'the tool was offered under its mcp__ name');
      const schema = offered.body.tools.find((tool: any) => tool.function.name === 'mcp__everything__echo').function.parameters;
      assert.deepEqual(schema.required, ['message'], "the server's JSON Schema");
      assert.match(toolResultSeenByModel(provider, sandbox)!.content, /^Echo: hello from the model\n\n\[jp: decided without a human\] Run without a user's approval/);
    });
  }

  it('results: structured content, an image as a short description, resource links', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root, '') + '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n');
    const structured = await query(sandbox, 'structured', ['--new']);
    assert.equal(structured.code, 0, structured.stderr);
    assert.match(toolResultSeenByModel(provider, sandbox)!.content, /"temperature"/);
    const image = await query(sandbox, 'image', ['--new']);
    assert.equal(image.code, 0, image.stderr);
    const imageText = toolResultSeenByModel(provider, sandbox)!.content;
    assert.match(imageText, /\[image: image\/png, \d+ bytes; not shown to the model\]/);
    assert.ok(imageText.length < 500, 'no base64 reaches the model');
    const links = await query(sandbox, 'links', ['--new']);
    assert.equal(links.code, 0, links.stderr);
    assert.match(toolResultSeenByModel(provider, sandbox)!.content, /\[resource link: .+ <demo:\/\/resource\/dynamic\/\w+\/1>/);
  });

  it('invalid arguments go back to the model as a message it can act on, without calling the server', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root, '') + '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n');
    const run = await query(sandbox, 'invalid');
    assert.equal(run.code, 0, run.stderr);
    const seen = toolResultSeenByModel(provider, sandbox)!;
    assert.match(seen.content, /Invalid arguments for mcp__everything__echo: .*message/);
    assert.ok(!run.events.some((event) => event.type === 'tool_call_start'), 'the server was not called');
  });

  it('a server gets its env and env_vars, never the provider keys jp holds', async () => {
    const sandbox = sandboxed();
    sandbox.write(
      '.jp/config.toml',
      everythingStdio('everything', sandbox.root, 'env = { GREETING = "from-config" }\nenv_vars = ["PASSED_THROUGH"]\n') +
        '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
    assert.equal((await runJp(sandbox, ['trust'])).code, 0, 'MCP servers of a workspace config count once it is trusted');
    const run = await query(sandbox, 'env', [], { PASSED_THROUGH: 'from-environment', NOT_NAMED: 'stays-with-jp', ANTHROPIC_API_KEY: 'sk-ant-never-leaves-0000000000' });
    assert.equal(run.code, 0, run.stderr);
    const seen = toolResultSeenByModel(provider, sandbox)!.content;
    assert.match(seen, /from-config/);
    assert.match(seen, /from-environment/);
    assert.doesNotMatch(seen, /stays-with-jp/);
    assert.doesNotMatch(seen, /OPENAI_API_KEY|ANTHROPIC_API_KEY|sk-test-key|sk-ant/);
  });

  it('trust_annotations = true: a tool the server marks read-only runs without asking; others still ask (exit 3 with no human)', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root, 'trust_annotations = true\n'));
    const readOnly = await query(sandbox, 'echo', ['--new']);
    assert.equal(readOnly.code, 0, readOnly.stderr);
    assert.ok(!readOnly.events.some((event) => event.type === 'inquiry_request'), 'no inquiry for a trusted read-only tool');
    assert.match(toolResultSeenByModel(provider, sandbox)!.content, /^Echo: hello from the model$/);
    const notReadOnly = await query(sandbox, 'toggle', ['--new']);
    assert.equal(notReadOnly.code, 3, notReadOnly.stderr);
    assert.equal(notReadOnly.result.permission_denials[0].tool_name, 'mcp__everything__toggle-simulated-logging');
    const effective = await runJp(sandbox, ['config', 'show', '--effective', 'mcp__everything__echo']);
    assert.equal(effective.code, 0, effective.stderr);
    assert.match(effective.stdout, /run \(attached\)\s+= unattended\s+set by built-in \(readOnlyHint of the MCP server everything, trusted by mcp\.servers\.everything\.trust_annotations\)/);
  });

  it('without trust_annotations the same read-only tool asks, and config show says annotations count for nothing', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root));
    const effective = await runJp(sandbox, ['config', 'show', '--effective', 'mcp__everything__echo']);
    assert.equal(effective.code, 0, effective.stderr);
    assert.match(effective.stdout, /its annotations relax nothing/);
    assert.match(effective.stdout, /run \(attached\)\s+= ask\s/);
    const unknown = await runJp(sandbox, ['config', 'show', '--effective', 'mcp__nowhere__echo']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no MCP server of that name is configured/);
  });

  it('tool_timeout_secs: a call that takes longer is cancelled and the model told; the run goes on', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root, 'tool_timeout_secs = 1\n') + '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n');
    const run = await query(sandbox, 'slow');
    assert.equal(run.code, 0, run.stderr);
    assert.match(toolResultSeenByModel(provider, sandbox)!.content, /timed out after 1 s and was cancelled \(mcp\.servers\.everything\.tool_timeout_secs\)/);
  });

  it('progress of a long call shows as status lines with --json (and the result arrives)', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root, '') + '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n');
    const run = await query(sandbox, 'progress');
    assert.equal(run.code, 0, run.stderr);
    const statuses = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>)
      .filter((line) => line.type === 'status')
      .map((line) => String(line.message));
    // (The SDK may drop the last notification when it arrives together with the result.)
    assert.ok(statuses.some((message) => /^mcp__everything__trigger-long-running-operation: progress [12]\/3$/.test(message)), statuses.join('\n'));
    assert.match(toolResultSeenByModel(provider, sandbox)!.content, /Long running operation completed/);
  });
});
