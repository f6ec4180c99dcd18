/**
 * The life of a run's MCP servers, with server-everything over stdio: they start with the run and
 * end with it (kill, kill --force), a server that fails to start is a warning and the run goes on,
 * a server that crashes mid-call gives that call a tool error and the run goes on without it,
 * `jp mcp ls` shows each server's state and tools, and a bad `[mcp.servers]` entry is exit 2.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import {
  startFakeProvider,
  stepByToolResults,
  textStep,
  toolStep,
  type FakeProvider,
  type RecordedRequest,
} from '../support/fake-provider.ts';
import {
  conversationIds,
  eventually,
  fakeModelArguments,
  readEvents,
  runJp,
  startJp,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';
import { createAjv, schemaProblem } from '../support/schemas.ts';
import { keys, Screen } from '../support/screen.ts';
import { everythingStdio, killServers, serverProcesses, writeUserConfig } from '../support/mcp.ts';

const longCall = { name: 'mcp__everything__trigger-long-running-operation', arguments: { duration: 120, steps: 120 } };
const unattended = '\n[conversation.tools."mcp__everything__trigger-long-running-operation"]\nrun = "unattended"\n';

describe('MCP server lifecycle', { concurrency: 4 }, () => {
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
      steps: (request: RecordedRequest) => {
        const message = request.messages.find((entry) => entry.role === 'user')?.text ?? '';
        if (message.endsWith('call:long'))
          return stepByToolResults([toolStep([longCall]), textStep('Carried on.')])(request);
        if (message.endsWith('call:short'))
          return stepByToolResults([
            toolStep([{ ...longCall, arguments: { duration: 3, steps: 3 } }]),
            textStep('Carried on.'),
          ])(request);
        return textStep('An answer without tools.');
      },
    });
    cleanup.add(() => provider.close());
  });

  function model() {
    return fakeModelArguments('openai-chat', provider.baseUrl);
  }

  async function detachLongCall(sandbox: Sandbox): Promise<string> {
    const { args, env } = model();
    const detached = await runJp(sandbox, ['query', '--detach', ...args, `${sandbox.root} call:long`], { env });
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    await eventually(
      'the long call to be running',
      () => readEvents(sandbox, conversationId).some((event) => event.type === 'tool_call_start'),
      60_000,
    );
    assert.equal(serverProcesses(sandbox.root).length, 1, 'one server process for the run');
    return conversationId;
  }

  for (const force of [false, true]) {
    it(`kill${force ? ' --force' : ''} ends the run's MCP server with it, even one that ignores EOF and SIGTERM`, async () => {
      const sandbox = sandboxed();
      writeUserConfig(sandbox, everythingStdio('everything', sandbox.root, '', { stubborn: true }) + unattended);
      const conversationId = await detachLongCall(sandbox);
      const killed = await runJp(sandbox, ['conversation', 'kill', ...(force ? ['--force'] : []), conversationId]);
      assert.equal(killed.code, 0, killed.stderr);
      await eventually('no server process of the run', () => serverProcesses(sandbox.root).length === 0);
    });
  }

  it('--no-server: Ctrl+C at the terminal opens the menu and the MCP server lives on (its own process group); continue finishes the call', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root) + unattended);
    const { args, env } = model();
    const screen = Screen.jp(sandbox, ['query', '--no-server', ...args, `${sandbox.root} call:short`], {
      env,
      columns: 150,
      cleanup,
    });
    await screen.waitFor('progress 1/3');
    screen.press(keys.ctrlC);
    await screen.waitFor('continue: keep going', { on: 'screen' });
    screen.press(keys.down + keys.down + keys.enter);
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    assert.match(
      screen.text(),
      /↳ mcp__everything__trigger-long-running-operation: ok — Long running operation completed/,
    );
    assert.doesNotMatch(screen.text(), /stopped/);
  });

  it('--no-server: kill --force ends its MCP server too (registered as a process group of the run)', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root, '', { stubborn: true }) + unattended);
    const { args, env } = model();
    const child = startJp(sandbox, ['query', '--no-server', ...args, `${sandbox.root} call:long`], {
      env: { ...env, CI: 'true' },
    });
    child.stdout!.resume();
    child.stderr!.resume();
    await eventually(
      'the long call to be running',
      () =>
        conversationIds(sandbox).length === 1 &&
        readEvents(sandbox, conversationIds(sandbox)[0]!).some((event) => event.type === 'tool_call_start'),
      60_000,
    );
    assert.equal(serverProcesses(sandbox.root).length, 1);
    const killed = await runJp(sandbox, ['conversation', 'kill', '--force', conversationIds(sandbox)[0]!]);
    assert.equal(killed.code, 0, killed.stderr);
    await eventually('no server process of the run', () => serverProcesses(sandbox.root).length === 0);
  });

  it('a resumed turn starts the servers again', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root) + unattended);
    const conversationId = await detachLongCall(sandbox);
    assert.equal((await runJp(sandbox, ['conversation', 'kill', conversationId])).code, 0);
    await eventually('no server process of the run', () => serverProcesses(sandbox.root).length === 0);
    const { args, env } = model();
    const resumed = await runJp(sandbox, ['query', '--continue', '--id', conversationId, ...args], {
      env: { ...env, CI: 'true' },
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    // The call may have had effects, so it is reported as "outcome unknown", not re-run; the
    // server still starts (its stderr is in the resumed run's log), because the turn may call it.
    const outcome = readEvents(sandbox, conversationId).find((event) => event.type === 'tool_call_response');
    assert.equal(outcome?.outcome, 'unknown');
    const runLog = readFileSync(path.join(sandbox.userDirectory(), 'processes', `${conversationId}.log`), 'utf8');
    assert.match(runLog, /\[mcp everything\] Starting default \(STDIO\) server/);
    assert.equal(serverProcesses(sandbox.root).length, 0, 'ended with the run');
  });

  it('a server that crashes mid-call: the call gets a tool error, a warning names it, and the run goes on without it', async () => {
    const sandbox = sandboxed();
    writeUserConfig(sandbox, everythingStdio('everything', sandbox.root) + unattended);
    const { args, env } = model();
    const child = startJp(sandbox, ['query', ...args, `${sandbox.root} call:long`], { env: { ...env, CI: 'true' } });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.resume();
    await eventually('progress of the long call', () => stderr.includes('progress 1/120'), 60_000);
    const [pid] = serverProcesses(sandbox.root);
    assert.ok(pid, 'the server runs');
    process.kill(pid, 'SIGKILL');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, stderr);
    assert.match(stderr, /the MCP server everything stopped \(it exited \(signal SIGKILL\)/);
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    const response = events.find((event) => event.type === 'tool_call_response')!;
    assert.equal(response.is_error, true);
    assert.match(
      response.content,
      /the MCP server everything stopped while mcp__everything__trigger-long-running-operation was running/,
    );
    const next = provider.requests
      .filter((request) => request.messages.some((message) => message.text.startsWith(sandbox.root)))
      .pop()!;
    assert.match(next.messages.flatMap((message) => message.toolResults).pop()!.content, /stopped while/);
    assert.ok(!next.toolNames.some((name) => name.startsWith('mcp__everything__')), 'its tools are no longer offered');
  });

  it('a server that fails to start is a warning naming it; the run goes on without its tools', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      [
        '[mcp.servers.missing]\ncommand = "/nonexistent/jp-test-mcp-server"\n',
        `[mcp.servers.exits]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ["-e", "console.error('cannot open the database'); process.exit(3)"]\n`,
        `[mcp.servers.silent]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ["-e", "setInterval(() => {}, 1000)"]\nstartup_timeout_secs = 1\n`,
        everythingStdio('everything', sandbox.root),
      ].join('\n'),
    );
    const { args, env } = model();
    const run = await runJp(sandbox, ['query', ...args, `${sandbox.root} no tools needed`], {
      env: { ...env, CI: 'true' },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'An answer without tools.\n');
    assert.match(
      run.stderr,
      /the MCP server missing failed to start: spawn \/nonexistent\/jp-test-mcp-server ENOENT: no such program/,
    );
    assert.match(run.stderr, /the MCP server exits failed to start: .*cannot open the database/);
    assert.match(
      run.stderr,
      /the MCP server silent failed to start: it did not answer within 1 s \(mcp\.servers\.silent\.startup_timeout_secs\)/,
    );
    const request = provider.requests.find((entry) =>
      entry.messages.some((message) => message.text.startsWith(sandbox.root)),
    )!;
    assert.ok(request.toolNames.includes('mcp__everything__echo'), 'the good server serves');
    assert.ok(!request.toolNames.some((name) => /^mcp__(missing|exits|silent)__/.test(name)));
    assert.deepEqual(serverProcesses(sandbox.root), [], 'nothing left running');
  });

  it("a workspace config's MCP server starts only once its user trusts the config (jp trust)", async () => {
    const sandbox = sandboxed();
    sandbox.write('.jp/config.toml', everythingStdio('everything', sandbox.root, 'trust_annotations = true\n'));
    const { args, env } = model();
    const untrusted = await runJp(sandbox, ['query', ...args, `${sandbox.root} untrusted`], {
      env: { ...env, CI: 'true' },
    });
    assert.equal(untrusted.code, 0, untrusted.stderr);
    assert.match(untrusted.stderr, /mcp\.servers\.everything.* this workspace config is not trusted/);
    const offered = (text: string): string[] =>
      provider.requests.find((request) =>
        request.messages.some((message) => message.text === `${sandbox.root} ${text}`),
      )!.toolNames;
    assert.ok(!offered('untrusted').some((name) => name.startsWith('mcp__')), 'no MCP tool offered');
    // Listed (exit 0), never started: its state says why it offers nothing, and what starts it.
    const listedUntrusted = await runJp(sandbox, ['mcp', 'ls']);
    assert.equal(listedUntrusted.code, 0, listedUntrusted.stderr);
    assert.match(
      listedUntrusted.stdout,
      /^everything\s+stdio\s+untrusted: not started: .*\.jp\/config\.toml:\d+ is not trusted; review it, then `jp trust` starts it\n$/,
    );
    const listedJson = JSON.parse((await runJp(sandbox, ['mcp', 'ls', '--json'])).stdout);
    assert.deepEqual(
      listedJson.servers.map((server: { name: string; state: string; tools: unknown[] }) => [
        server.name,
        server.state,
        server.tools.length,
      ]),
      [['everything', 'untrusted', 0]],
    );
    assert.equal((await runJp(sandbox, ['trust'])).code, 0);
    assert.match((await runJp(sandbox, ['mcp', 'ls'])).stdout, /^everything\s+stdio\s+ready/m);
    const trusted = await runJp(sandbox, ['query', '--new', ...args, `${sandbox.root} trusted`], {
      env: { ...env, CI: 'true' },
    });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.ok(offered('trusted').includes('mcp__everything__echo'));
  });

  it('jp mcp ls shows each server, its transport, its state and its tools (text and --json)', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      [
        everythingStdio('everything', sandbox.root),
        '[mcp.servers.missing]\ncommand = "/nonexistent/jp-test-mcp-server"\n',
        '[mcp.servers.off]\nurl = "http://127.0.0.1:9/mcp"\nenabled = false\n',
      ].join('\n'),
    );
    const text = await runJp(sandbox, ['mcp', 'ls']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^everything\s+stdio\s+ready\s+\d+ tools$/m);
    assert.match(text.stdout, /^ {2}mcp__everything__echo\s+Echoes back the input string$/m);
    assert.match(text.stdout, /^missing\s+stdio\s+failed: spawn \/nonexistent\/jp-test-mcp-server ENOENT/m);
    assert.match(text.stdout, /^off\s+http\s+disabled$/m);
    assert.match(
      text.stderr,
      /^starting 2 MCP servers everything, missing \(at most \d+ s\)…$/m,
      'progress before the wait',
    );
    const json = await runJp(sandbox, ['mcp', 'ls', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const line = JSON.parse(json.stdout) as Record<string, any>;
    assert.equal(line.type, 'mcp_servers');
    assert.equal(schemaProblem(createAjv(), 'output-line.schema.json', line), undefined);
    const everything = line.servers.find((server: any) => server.name === 'everything');
    assert.equal(everything.state, 'ready');
    assert.ok(
      everything.tools.some((tool: any) => tool.name === 'mcp__everything__trigger-elicitation-request'),
      'elicitation is declared, so the server offers its elicitation tool',
    );
    assert.equal(line.servers.find((server: any) => server.name === 'missing').state, 'failed');
    assert.equal(line.servers.find((server: any) => server.name === 'off').state, 'disabled');
    assert.deepEqual(serverProcesses(sandbox.root), [], 'ls ends the servers it started');
  });

  it('a url server whose bearer_token_env is not set fails to start, saying which variable', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      '[mcp.servers.remote]\nurl = "http://127.0.0.1:9/mcp"\nbearer_token_env = "JP_TEST_MCP_TOKEN"\n',
    );
    const listed = await runJp(sandbox, ['mcp', 'ls']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(
      listed.stdout,
      /^remote\s+http\s+failed: the variable JP_TEST_MCP_TOKEN \(mcp\.servers\.remote\.bearer_token_env\) is not set$/m,
    );
  });

  it('--no-tools starts no server; enable = false keeps a tool from the model', async () => {
    const sandbox = sandboxed();
    writeUserConfig(
      sandbox,
      everythingStdio('everything', sandbox.root) + '\n[conversation.tools.mcp__everything__echo]\nenable = false\n',
    );
    const { args, env } = model();
    const withTools = await runJp(sandbox, ['query', ...args, `${sandbox.root} with tools`], {
      env: { ...env, CI: 'true' },
    });
    assert.equal(withTools.code, 0, withTools.stderr);
    const offered = provider.requests.find((request) =>
      request.messages.some((message) => message.text === `${sandbox.root} with tools`),
    )!.toolNames;
    assert.ok(offered.includes('mcp__everything__get-sum'));
    assert.ok(!offered.includes('mcp__everything__echo'));
    const noTools = await runJp(sandbox, ['query', '--new', '--no-tools', ...args, `${sandbox.root} no tools`], {
      env: { ...env, CI: 'true' },
    });
    assert.equal(noTools.code, 0, noTools.stderr);
    const conversationId = conversationIds(sandbox).pop()!;
    const runLog = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.log`);
    assert.ok(
      !existsSync(runLog) || !readFileSync(runLog, 'utf8').includes('[mcp everything]'),
      'no server was started',
    );
  });

  it('a bad [mcp.servers] entry is exit 2 naming the file, the line and the key; nothing runs', async () => {
    const sandbox = sandboxed();
    const file = writeUserConfig(sandbox, '[mcp.servers.x]\ncommand = "a"\nagrs = ["b"]\n');
    const { args, env } = model();
    const unknownKey = await runJp(sandbox, ['query', ...args, 'hi'], { env });
    assert.equal(unknownKey.code, 2);
    assert.match(
      unknownKey.stderr,
      new RegExp(`${file.replace(/[.]/g, '\\.')}:3: unknown key mcp\\.servers\\.x\\.agrs`),
    );
    writeUserConfig(sandbox, '[mcp.servers.x]\nstartup_timeout_secs = 5\n');
    const neither = await runJp(sandbox, ['query', ...args, 'hi'], { env });
    assert.equal(neither.code, 2);
    assert.match(
      neither.stderr,
      new RegExp(`${file.replace(/[.]/g, '\\.')}:1: mcp\\.servers\\.x has neither command nor url`),
    );
    writeUserConfig(sandbox, '[mcp.servers.x]\nurl = "http://127.0.0.1:9/mcp"\nargs = ["b"]\n');
    const mixed = await runJp(sandbox, ['mcp', 'ls'], { env });
    assert.equal(mixed.code, 2);
    assert.match(mixed.stderr, /:3: mcp\.servers\.x\.args applies only to a server started with command/);
  });
});
