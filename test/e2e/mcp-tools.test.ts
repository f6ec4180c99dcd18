/**
 * MCP tools through the built binary, against server-everything (a real MCP server from the npm
 * registry) over stdio and over streamable HTTP on 127.0.0.1, with the LLM a local fake provider.
 * What the model receives is checked in the next request the provider gets.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
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
import { conversationIds, fakeModelArguments, readEvents, runJp, useCleanup, type Sandbox } from '../support/jp.ts';
import {
  everythingStdio,
  httpServer,
  killServers,
  startEverythingHttp,
  writeUserConfig,
  type HttpEverything,
} from '../support/mcp.ts';

/** The bearer token of the HTTP server reached through `bearerFront` (the value of its bearer_token_env). */
const bearerToken = 'mcp-bearer-token-5f3a9c2e7d';

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
  // The server's handler throws for an id below 1 (the schema lets it through): a result with isError.
  failing: { name: 'mcp__everything__get-resource-reference', arguments: { resourceId: 0 } },
  // The server echoes the token back: it must reach neither the model nor jp's output and log.
  token: { name: 'mcp__everything__echo', arguments: { message: `the token is ${bearerToken}` } },
};

interface RecordedHttpRequest {
  method: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * A front on 127.0.0.1 for an HTTP MCP server: records the headers of each request it gets and
 * forwards the request, as it is, to `target` (responses, SSE streams included, go back as they come).
 */
async function startRecordingFront(
  target: string,
): Promise<{ url: string; requests: RecordedHttpRequest[]; close(): Promise<void> }> {
  const targetUrl = new URL(target);
  const requests: RecordedHttpRequest[] = [];
  const server = http.createServer((request, response) => {
    requests.push({ method: request.method ?? '', headers: request.headers });
    const forwarded = http.request(
      {
        host: targetUrl.hostname,
        port: targetUrl.port,
        path: request.url,
        method: request.method,
        headers: request.headers,
      },
      (upstream) => {
        response.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${targetUrl.pathname}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function keywordOf(request: RecordedRequest): string {
  const message = userMessage(request);
  return Object.keys(calls).find((keyword) => message.endsWith(`call:${keyword}`)) ?? 'echo';
}

function userMessage(request: RecordedRequest): string {
  return request.messages.find((entry) => entry.role === 'user')?.text ?? '';
}

/** The tool result the model received in the sandbox's conversation (its last request's last tool message). */
function toolResultSeenByModel(
  provider: FakeProvider,
  sandbox: Sandbox,
): { content: string; isError?: boolean } | undefined {
  const requests = provider.requests.filter(
    (request) =>
      userMessage(request).startsWith(sandbox.root) &&
      request.messages.some((message) => message.toolResults.length > 0),
  );
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
      steps: (request): ScriptedStep =>
        stepByToolResults([toolStep([calls[keywordOf(request)]!]), textStep('Finished.')])(request),
    });
    http = await startEverythingHttp();
    cleanup.add(() => provider.close());
    cleanup.add(() => http.close());
  });

  async function query(sandbox: Sandbox, keyword: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const run = await runJp(sandbox, ['query', '--json', ...model.args, ...args, `${sandbox.root} call:${keyword}`], {
      env: { ...model.env, CI: 'true', ...env },
    });
    const lines = run.stdout.trim().split('\n');
    const result = JSON.parse(lines[lines.length - 1]!) as Record<string, any>;
    return { ...run, result, events: readEvents(sandbox, conversationIds(sandbox)[0]!) };
  }

  for (const transport of ['stdio', 'http'] as const) {
    const configFor = (sandbox: Sandbox, extra = ''): string =>
      (transport === 'stdio' ? everythingStdio('everything', sandbox.root) : httpServer('everything', http.url)) +
      '\n' +
      extra;

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
      writeUserConfig(
        sandbox,
        configFor(sandbox, '[conversation.tools.mcp__everything__echo]\ndetached = { run = "auto" }\n'),
      );
      const run = await query(sandbox, 'echo');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.result.status, 'success');
      const offered = provider.requests.find(
        (request) =>
          userMessage(request).startsWith(sandbox.root) &&
          request.body.tools?.some((tool: any) => tool.function?.name === 'mcp__everything__echo'),
      );
      assert.ok(offered, 'the tool was offered under its mcp__ name');
      const schema = offered.body.tools.find((tool: any) => tool.function.name === 'mcp__everything__echo').function
        .parameters;
      assert.deepEqual(schema.required, ['message'], "the server's JSON Schema");
      assert.match(
        toolResultSeenByModel(provider, sandbox)!.content,
        /^Echo: hello from the model\n\n\[jp: decided without a human\] Run without a user's approval/,
      );
    });
  }

  it('http: the configured headers and the bearer token reach the server with every request; the token is redacted from what the model, stdout and the log get', async () => {
    const sandbox = sandboxed();
    const front = await startRecordingFront(http.url);
    cleanup.add(() => front.close());
    writeUserConfig(
      sandbox,
      httpServer(
        'everything',
        front.url,
        'headers = { "X-Jp-Test" = "header-from-config" }\nbearer_token_env = "EVERYTHING_TOKEN"\n',
      ) + '\n[conversation.tools.mcp__everything__echo]\ndetached = { run = "auto" }\n',
    );
    const logFile = path.join(sandbox.root, 'trace.log');
    const run = await query(sandbox, 'token', ['-vvvvv', `--log-file=${logFile}`], { EVERYTHING_TOKEN: bearerToken });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(front.requests.length > 0, 'jp reached the server through the front');
    for (const request of front.requests) {
      assert.equal(request.headers['x-jp-test'], 'header-from-config', `${request.method}: the configured header`);
      assert.equal(request.headers.authorization, `Bearer ${bearerToken}`, `${request.method}: the bearer token`);
    }
    assert.ok(
      front.requests.some((request) => request.method === 'POST'),
      'the calls went through the front',
    );
    // The echo came back through the server, with the token replaced where jp made the tool result.
    assert.equal(toolResultSeenByModel(provider, sandbox)!.content.split('\n\n')[0], 'Echo: the token is [REDACTED]');
    assert.ok(existsSync(logFile), 'the log was written');
    for (const [where, text] of [
      ['stdout', run.stdout],
      ['stderr', run.stderr],
      ['the log', readFileSync(logFile, 'utf8')],
      ['the conversation', JSON.stringify(run.events)],
    ] as const) {
      assert.ok(!text.includes(bearerToken), `the token is in ${where}`);
    }
  });

  it('http: a bearer_token_env that is not set: the server is not reached, a warning names the variable, the run goes on', async () => {
    const sandbox = sandboxed();
    const front = await startRecordingFront(http.url);
    cleanup.add(() => front.close());
    writeUserConfig(
      sandbox,
      httpServer('everything', front.url, 'bearer_token_env = "EVERYTHING_TOKEN_UNSET"\n') +
        '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
    const run = await query(sandbox, 'echo');
    assert.equal(front.requests.length, 0, 'no request without its token');
    assert.match(
      run.stderr,
      /the MCP server everything failed to start: the variable EVERYTHING_TOKEN_UNSET \(mcp\.servers\.everything\.bearer_token_env\) is not set/,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.result.answer, 'Finished.', 'the run went on without the tools of that server');
  });

  it('a tool result the server flags isError reaches the model as a tool error it can act on (status "error" in the result)', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      everythingStdio('everything', sandbox.root, '') +
        '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
    const run = await query(sandbox, 'failing');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.result.status, 'success', 'a failed tool does not fail the run: the model goes on');
    assert.equal(run.result.answer, 'Finished.');
    assert.equal(run.result.tools.length, 1);
    assert.equal(run.result.tools[0].name, 'mcp__everything__get-resource-reference');
    assert.equal(run.result.tools[0].status, 'error');
    assert.match(run.result.tools[0].result, /Invalid resourceId: 0\. Must be a finite positive integer\./);
    const response = run.events.find((event) => event.type === 'tool_call_response');
    assert.equal(response?.is_error, true, 'the conversation records a tool error');
    assert.match(
      toolResultSeenByModel(provider, sandbox)!.content,
      /Invalid resourceId: 0\. Must be a finite positive integer\./,
      "the server's error text is in the next request to the model",
    );
  });

  it('results: structured content, an image as a short description, resource links', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      everythingStdio('everything', sandbox.root, '') +
        '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
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
    assert.match(
      toolResultSeenByModel(provider, sandbox)!.content,
      /\[resource link: .+ <demo:\/\/resource\/dynamic\/\w+\/1>/,
    );
  });

  it('invalid arguments go back to the model as a message it can act on, without calling the server', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      everythingStdio('everything', sandbox.root, '') +
        '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
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
      everythingStdio(
        'everything',
        sandbox.root,
        'env = { GREETING = "from-config" }\nenv_vars = ["PASSED_THROUGH"]\n',
      ) + '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
    assert.equal(
      (await runJp(sandbox, ['trust'])).code,
      0,
      'MCP servers of a workspace config count once it is trusted',
    );
    const run = await query(sandbox, 'env', [], {
      PASSED_THROUGH: 'from-environment',
      NOT_NAMED: 'stays-with-jp',
      ANTHROPIC_API_KEY: 'sk-ant-never-leaves-0000000000',
    });
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
    assert.ok(
      !readOnly.events.some((event) => event.type === 'inquiry_request'),
      'no inquiry for a trusted read-only tool',
    );
    assert.match(toolResultSeenByModel(provider, sandbox)!.content, /^Echo: hello from the model$/);
    const notReadOnly = await query(sandbox, 'toggle', ['--new']);
    assert.equal(notReadOnly.code, 3, notReadOnly.stderr);
    assert.equal(notReadOnly.result.permission_denials[0].tool_name, 'mcp__everything__toggle-simulated-logging');
    const effective = await runJp(sandbox, ['config', 'show', '--effective', 'mcp__everything__echo']);
    assert.equal(effective.code, 0, effective.stderr);
    assert.match(
      effective.stdout,
      /run \(attached\)\s+= unattended\s+set by built-in \(readOnlyHint of the MCP server everything, trusted by mcp\.servers\.everything\.trust_annotations\)/,
    );
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
    writeUserConfig(
      sandbox,
      everythingStdio('everything', sandbox.root, 'tool_timeout_secs = 1\n') +
        '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
    const run = await query(sandbox, 'slow');
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      toolResultSeenByModel(provider, sandbox)!.content,
      /timed out after 1 s and was cancelled \(mcp\.servers\.everything\.tool_timeout_secs\)/,
    );
  });

  it('progress of a long call shows as status lines with --json (and the result arrives)', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      everythingStdio('everything', sandbox.root, '') +
        '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
    const run = await query(sandbox, 'progress');
    assert.equal(run.code, 0, run.stderr);
    const statuses = run.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>)
      .filter((line) => line.type === 'status')
      .map((line) => String(line.message));
    // (The SDK may drop the last notification when it arrives together with the result.)
    assert.ok(
      statuses.some((message) => /^mcp__everything__trigger-long-running-operation: progress [12]\/3$/.test(message)),
      statuses.join('\n'),
    );
    assert.match(toolResultSeenByModel(provider, sandbox)!.content, /Long running operation completed/);
  });
});
