/**
 * What jp says is what happened: an HTML page is not "a broken stream", a usage error with --json
 * still ends in a result line, a run is found running when its registry entry was removed, a
 * retry with no wait says so.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  conversationIds,
  eventually,
  fakeModelArguments,
  processAlive,
  readEvents,
  runJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();

describe('a provider that answers 200 with an HTML page', () => {
  it('is reported as not an event stream, with its content type, and not retried', async () => {
    let requests = 0;
    const server = http.createServer((request, response) => {
      requests++;
      request.resume();
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<html><body>Please log in to the proxy</body></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments(
      'openai-chat',
      `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1`,
    );
    const run = await runJp(sandbox, ['query', ...model.args, 'hello'], { env: model.env });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /answered with something that is not an event stream \(content-type text\/html\)/);
    assert.doesNotMatch(run.stderr, /broke while streaming|retrying/);
    assert.equal(requests, 1);
  });
});

describe('jp --json with an option of query before it', () => {
  it('prints the error and a result line (status usage, exit 2)', async () => {
    const sandbox = cleanup.sandbox();
    const run = await runJp(sandbox, ['--json', '-m', 'x/y', 'query', 'hello']);
    assert.equal(run.code, 2, run.stderr);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    assert.equal(result.type, 'result');
    assert.equal(result.status, 'usage');
    assert.equal(result.exit_code, 2);
    assert.match(result.error.message, /unknown option '-m'/);
  });
});

describe('a running query whose processes/ directory was removed', () => {
  it('is still listed as running and stopped by kill (found by its lock)', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { tool_call: { name: 'run_command', arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done' } } },
          ],
        },
        { parts: [{ text: 'done' }] },
      ],
    });
    const detached = await runJp(sandbox, [
      'query',
      '--detach',
      ...script,
      '-c',
      'conversation.tools.run_command.run="unattended"',
      '-c',
      'conversation.tools.run_command.detached="auto"',
      'wait',
    ]);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const processes = path.join(sandbox.userDirectory(), 'processes');
    const entry = await eventually(
      'the run is registered',
      () =>
        existsSync(path.join(processes, `${conversationId}.json`)) &&
        JSON.parse(readFileSync(path.join(processes, `${conversationId}.json`), 'utf8')),
    );
    cleanup.add(() => processAlive(entry.pid) && process.kill(entry.pid, 'SIGKILL'));
    await eventually('the tool runs', () =>
      readEvents(sandbox, conversationId).some((event) => event.type === 'tool_call_start'),
    );
    rmSync(processes, { recursive: true, force: true, maxRetries: 5 }); // the run may add a file while it goes

    const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const row = JSON.parse(listed.stdout).find((conversation: { id: string }) => conversation.id === conversationId);
    assert.equal(row.status, `running (pid ${entry.pid})`, JSON.stringify(row));

    const killed = await runJp(sandbox, ['conversation', 'kill', conversationId]);
    assert.equal(killed.code, 0, killed.stderr);
    assert.match(killed.stderr, new RegExp(`Stopped ${conversationId} \\(pid ${entry.pid}, found by its lock`));
    assert.equal(processAlive(entry.pid), false);
    const events = readEvents(sandbox, conversationId);
    assert.equal(events.at(-1)!.type, 'turn_end');
    assert.equal(events.at(-1)!.status, 'interrupted');
    writeFileSync(path.join(sandbox.workspace, 'go'), '');
    assert.deepEqual(conversationIds(sandbox), [conversationId]);
  });
});

describe('a retry with a zero backoff', () => {
  it('says "retrying now", never NaN or 0.0 s', async () => {
    const sandbox = cleanup.sandbox();
    // A server that hangs up on every request: a transient failure that is retried.
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as net.AddressInfo).port;
    const model = fakeModelArguments('openai-chat', `http://127.0.0.1:${port}/v1`);
    const run = await runJp(
      sandbox,
      [
        'query',
        ...model.args,
        '-c',
        'assistant.request.backoff_base_ms=0',
        '-c',
        'assistant.request.max_retries=2',
        'hello',
      ],
      { env: model.env },
    );
    assert.equal(run.code, 6, run.stderr);
    assert.match(run.stderr, /other side closed.*; retrying now \(attempt 1 of 2\)/);
    assert.doesNotMatch(run.stderr, /NaN|in 0\.0 s/);
  });
});
