/**
 * Who gets a connection to a query server (DESIGN §8): idle connections that never say hello can
 * not lock a real client out (the oldest silent one is pushed out, and each times out), and a
 * connection the server does refuse is told so in words, which `attach` reports.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  collect,
  eventually,
  readEvents,
  runCapability,
  runJp,
  startJp,
  testProvider,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';

const cleanup = useCleanup();

interface Raw {
  socket: net.Socket;
  /** Messages received so far. */
  messages: Record<string, any>[];
  closed: Promise<void>;
  isClosed(): boolean;
}

function connect(socketPath: string, hello?: Record<string, unknown>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    const messages: Record<string, any>[] = [];
    let buffered = '';
    let closed = false;
    const done = new Promise<void>((settle) =>
      socket.on('close', () => {
        closed = true;
        settle();
      }),
    );
    socket.on('data', (chunk) => {
      buffered += chunk.toString();
      for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
        messages.push(JSON.parse(buffered.slice(0, newline)));
        buffered = buffered.slice(newline + 1);
      }
    });
    socket.on('error', () => {});
    socket.once('error', reject);
    socket.once('connect', () => {
      if (hello) socket.write(JSON.stringify(hello) + '\n');
      resolve({ socket, messages, closed: done, isClosed: () => closed });
    });
  });
}

/** A detached run that waits (a long pause of the test provider) until the test kills it. */
async function waitingRun(sandbox: Sandbox): Promise<{ id: string; socketPath: string }> {
  const script = testProvider(sandbox, {
    steps: [{ parts: [{ text: 'Waiting.\n\n' }, { delay_ms: 120_000 }, { text: 'never' }] }],
  });
  const detached = await runJp(sandbox, ['query', '--detach', ...script, 'wait for the test']);
  assert.equal(detached.code, 0, detached.stderr);
  const id = detached.stdout.trim();
  const entry = JSON.parse(readFileSync(path.join(sandbox.userDirectory(), 'processes', `${id}.json`), 'utf8')) as {
    socket_path: string;
  };
  return { id, socketPath: entry.socket_path };
}

/** Connections made to a Unix socket path, accepted by the server or still waiting to be (from /proc/net/unix). */
function connectionsTo(socketPath: string): number {
  return (
    readFileSync('/proc/net/unix', 'utf8')
      .split('\n')
      .filter((line) => line.endsWith(` ${socketPath}`)).length - 1
  );
}

describe('connections to a query server', () => {
  it('64 idle connections do not block a real attach', async () => {
    const sandbox = cleanup.sandbox();
    const run = await waitingRun(sandbox);
    const idle: Raw[] = [];
    for (let index = 0; index < 64; index++) idle.push(await connect(run.socketPath));

    const args = ['conversation', 'attach', '--read-only', '--json', run.id];
    const attach = startJp(sandbox, args);
    const attached = collect(attach, args, 60_000);
    let stdout = '';
    attach.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    // The attach replays the current turn once it is in: its user message shows it was greeted.
    await eventually('the attach to replay the turn', () => stdout.includes('"type":"user_message"'));
    const killed = await runJp(sandbox, ['conversation', 'kill', run.id]);
    assert.equal(killed.code, 0, killed.stderr);
    const result = await attached;
    assert.doesNotMatch(result.stderr, /stopped without a result/);
    const final = JSON.parse(result.stdout.trim().split('\n').pop()!);
    assert.equal(final.type, 'result');
    assert.equal(final.status, 'interrupted');
    // The oldest silent connections were pushed out, each told why; the run's end closed the rest.
    await eventually('every idle connection to be closed', () => idle.every((connection) => connection.isClosed()));
    const pushedOut = idle.filter((connection) => connection.messages[0]?.code === 'connection_idle');
    assert.ok(pushedOut.length >= 32, `${pushedOut.length} pushed out`);
    assert.match(
      pushedOut[0]!.messages[0]!.message,
      /^closed: this connection sent nothing while others waited to connect/,
    );
  });

  it('a connection that never says hello is closed with a reason', async () => {
    const sandbox = cleanup.sandbox();
    const run = await waitingRun(sandbox);
    const silent = await connect(run.socketPath);
    await silent.closed;
    assert.deepEqual(
      silent.messages.map((message) => message.code),
      ['hello_timeout'],
    );
    assert.match(silent.messages[0]!.message, /closed: no hello within \d+ s of connecting/);
    assert.equal((await runJp(sandbox, ['conversation', 'kill', run.id])).code, 0);
  });

  it('a refused connection says it was refused', async () => {
    const sandbox = cleanup.sandbox();
    const run = await waitingRun(sandbox);
    const viewers: Raw[] = [];
    for (let index = 0; index < 64; index++)
      viewers.push(
        await connect(run.socketPath, {
          type: 'hello',
          version: 2,
          capability: runCapability(sandbox, run.id),
          can_prompt: false,
          read_only: true,
        }),
      );
    await eventually('64 viewers greeted', () =>
      viewers.every((viewer) => viewer.messages.some((message) => message.type === 'hello')),
    );
    const refused = await runJp(sandbox, ['conversation', 'attach', '--read-only', run.id]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /error: refused: this query server already has 64 clients connected/);
    assert.doesNotMatch(refused.stderr, /stopped without a result/);
    // Two left: there is room again for an attach (and then for `kill`, a client too).
    for (const viewer of viewers.slice(0, 2)) {
      viewer.socket.destroy();
      await viewer.closed;
    }
    const args = ['conversation', 'attach', '--read-only', '--json', run.id];
    const attach = startJp(sandbox, args);
    const attached = collect(attach, args, 60_000);
    let stdout = '';
    attach.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await eventually('the attach to replay the turn', () => stdout.includes('"type":"user_message"'));
    assert.equal((await runJp(sandbox, ['conversation', 'kill', run.id])).code, 0);
    assert.equal(JSON.parse((await attached).stdout.trim().split('\n').pop()!).status, 'interrupted');
    for (const viewer of viewers) viewer.socket.destroy();
  });

  it('a server that dies while an attach connects: attach says what is true now, not that a server stopped without a result', async () => {
    const sandbox = cleanup.sandbox();
    const run = await waitingRun(sandbox);
    const entry = JSON.parse(
      readFileSync(path.join(sandbox.userDirectory(), 'processes', `${run.id}.json`), 'utf8'),
    ) as { pid: number };
    await eventually('the turn to start', () =>
      readEvents(sandbox, run.id).some((event) => event.type === 'chat_response'),
    );
    // Stopped, the server cannot greet: the attach's connection waits in the socket's backlog.
    process.kill(entry.pid, 'SIGSTOP');
    const args = ['conversation', 'attach', '--read-only', run.id];
    const attached = collect(startJp(sandbox, args), args, 60_000);
    await eventually('the attach to connect', () => connectionsTo(run.socketPath) > 0);
    process.kill(entry.pid, 'SIGKILL');
    const result = await attached;
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(`error: no running process for ${run.id}; it has an incomplete turn: interrupted`),
    );
    assert.doesNotMatch(result.stderr, /stopped without a result/);
  });
});
