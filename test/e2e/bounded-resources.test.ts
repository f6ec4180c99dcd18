/**
 * What a hostile peer or config can make jp hold is bounded, and going over says what and why:
 * a viewer that never reads, an MCP message over the SDK's buffer, an endless provider stream,
 * thousands of ignored MCP servers in an untrusted config.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { eventually, fakeModelArguments, runCapability, runJp, testProvider, useCleanup } from '../support/jp.ts';
import { writeUserConfig } from '../support/mcp.ts';

const cleanup = useCleanup();

describe('a viewer that never reads', () => {
  it('is dropped, with the reason in the log, once large messages put it over the 8 MiB backlog', async () => {
    const sandbox = cleanup.sandbox();
    const big = (index: number): unknown => ({
      tool_call: { name: 'no_such_tool', arguments: { payload: `${index}`.repeat(6 * 1024 * 1024) } },
    });
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { tool_call: { name: 'run_command', arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done' } } },
          ],
        },
        { parts: [big(1), big(2), big(3), big(4)] },
        { parts: [{ text: 'done' }] },
      ],
    });
    const traceLog = path.join(sandbox.root, 'trace.log');
    const detached = await runJp(sandbox, [
      'query',
      '--detach',
      '-vv',
      '--log-file',
      traceLog,
      ...script,
      '-c',
      'conversation.tools.run_command.run="unattended"',
      '-c',
      'conversation.tools.run_command.detached="auto"',
      'go',
    ]);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const entryFile = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.json`);
    const entry = await eventually(
      'the run is registered',
      () => existsSync(entryFile) && JSON.parse(readFileSync(entryFile, 'utf8')),
    );

    // A read-only viewer that says hello, then never reads again.
    const viewer = net.connect(entry.socket_path);
    cleanup.add(() => viewer.destroy());
    viewer.write(
      JSON.stringify({
        type: 'hello',
        version: 2,
        capability: runCapability(sandbox, conversationId),
        can_prompt: false,
        read_only: true,
      }) + '\n',
    );
    await new Promise<void>((resolve) => viewer.once('data', () => resolve()));
    viewer.pause();
    const viewerClosed = new Promise<void>((resolve) => viewer.once('close', () => resolve()));
    writeFileSync(path.join(sandbox.workspace, 'go'), '');

    assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationId], { timeoutMs: 120_000 })).code, 0);
    const log = readFileSync(traceLog, 'utf8');
    assert.match(
      log,
      /client dropped.*client too slow: \d+ bytes unread, over the 8 MiB backlog a client may fall behind/,
    );
    viewer.resume();
    await viewerClosed;
  });
});

/**
 * A minimal MCP server over stdio (newline-delimited JSON-RPC): one tool, `flood`, whose reply is
 * `bytes` long.
 */
function floodingServer(bytes: number): string {
  return `
const reply = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\\n');
let buffered = '';
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf('\\n')) !== -1) {
    const message = JSON.parse(buffered.slice(0, newline));
    buffered = buffered.slice(newline + 1);
    if (message.method === 'initialize') reply(message.id, { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'flood', version: '1' } });
    else if (message.method === 'tools/list') reply(message.id, { tools: [{ name: 'flood', description: 'a reply too large', inputSchema: { type: 'object' } }] });
    else if (message.method === 'tools/call') reply(message.id, { content: [{ type: 'text', text: 'x'.repeat(${bytes}) }] });
  }
});
`;
}

describe('an MCP reply over the SDK buffer (10 MiB)', () => {
  it('fails the call at once, saying what was too large, not at the tool time limit', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('flood-server.mjs', floodingServer(11 * 1024 * 1024));
    writeUserConfig(
      sandbox,
      `[mcp.servers.flood]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(path.join(sandbox.workspace, 'flood-server.mjs'))}]\n`,
    );
    const script = testProvider(sandbox, {
      steps: [{ parts: [{ tool_call: { name: 'mcp__flood__flood', arguments: {} } }] }, { parts: [{ text: 'done' }] }],
    });
    const run = await runJp(
      sandbox,
      ['query', '--json', ...script, '-c', 'conversation.tools.mcp__flood__flood.run="unattended"', 'flood'],
      { timeoutMs: 60_000 },
    );
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    assert.match(
      result.tools[0].result,
      /the MCP server flood stopped while mcp__flood__flood was running: it sent a message larger than 10 MiB, the most jp reads from an MCP server/,
    );
  });
});

describe('an endless provider stream', () => {
  it('is ended by jp at its limit of one response, as cut at a limit, and the request is closed', async () => {
    let requestClosed: () => void;
    const closed = new Promise<void>((resolve) => (requestClosed = resolve));
    // An OpenAI chat completions stream that never finishes: 1 KiB pieces as fast as they are read.
    const server = http.createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const piece = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'y'.repeat(1024) }, finish_reason: null }] })}\n\n`;
      const pump = (): void => {
        while (!response.destroyed && response.write(piece));
        if (!response.destroyed) response.once('drain', pump);
      };
      response.on('close', () => requestClosed());
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
    cleanup.add(() => server.closeAllConnections());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments(
      'openai-chat',
      `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1`,
    );
    const run = await runJp(sandbox, ['query', '--json', ...model.args, 'talk forever'], {
      env: model.env,
      timeoutMs: 120_000,
    });
    assert.equal(run.code, 0, run.stderr);
    await closed;
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const result = lines.at(-1);
    assert.equal(result.metadata.finish_reason, 'length');
    assert.equal(result.answer.length, 4 * 1024 * 1024, 'the answer is cut exactly at the limit');
    assert.ok(
      result.warnings.some((warning: { message: string }) =>
        /cut at jp's limit of one response \(4 MiB/.test(warning.message),
      ),
      JSON.stringify(result.warnings),
    );
  });
});

describe('an untrusted config with 5,000 MCP servers', () => {
  it('is ignored quickly enough for the server to get ready, with a one-line warning that summarises the keys', async () => {
    const sandbox = cleanup.sandbox();
    const servers = Array.from(
      { length: 5000 },
      (_, index) => `[mcp.servers.s${index}]\ncommand = "/bin/true"\nargs = ["a", "b"]\nenv = { X = "y" }\n`,
    );
    sandbox.write('.jp/config.toml', servers.join('\n'));
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'hello back' }] }] });
    const run = await runJp(sandbox, ['query', ...script, 'hello'], { timeoutMs: 60_000 });
    assert.equal(run.code, 0, run.stderr.slice(0, 2000));
    const warning = run.stderr.split('\n').find((line) => line.includes('not trusted'));
    assert.ok(warning, run.stderr.slice(0, 2000));
    assert.match(
      warning,
      /ignoring mcp\.servers\.s0, .* and 4990 more in .*config\.toml: this workspace config is not trusted/,
    );
    assert.ok(warning.length < 1000, `the warning is ${warning.length} characters`);
  });
});
