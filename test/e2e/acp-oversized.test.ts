/**
 * `jp acp` and a line too large to read (DESIGN §14; issue 35, attack 9): a 50 MB message is answered
 * with a JSON-RPC error for its id (or id null when its start does not say), never buffered whole,
 * and the agent keeps serving the editor; on main it closed the connection and exited 0 saying nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually, startJp, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

describe('jp acp and an oversized line', () => {
  it('answers a 50 MB message with a JSON-RPC error and keeps going', async () => {
    const sandbox = cleanup.sandbox();
    const child = startJp(sandbox, ['acp'], { stdin: 'open-pipe' });
    cleanup.add(() => child.kill('SIGKILL'));
    const replies: Record<string, any>[] = [];
    let buffered = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
        replies.push(JSON.parse(buffered.slice(0, newline)));
        buffered = buffered.slice(newline + 1);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stdin!.on('error', () => {});
    const send = (message: unknown): boolean => child.stdin!.write(`${JSON.stringify(message)}\n`);
    const initialize = (id: number) =>
      send({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } });

    initialize(1);
    await eventually('initialize answered', () => replies.some((reply) => reply.id === 1));
    const filler = 'a'.repeat(50 * 1024 * 1024);
    child.stdin!.write(
      `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[],"x":"${filler}"}}\n`,
    );
    child.stdin!.write(`{"params":{"x":"${filler}"},"jsonrpc":"2.0","id":3,"method":"session/new"}\n`);
    initialize(4);
    await eventually('the message after them answered', () => replies.some((reply) => reply.id === 4), 60_000);

    const refused = replies.filter((reply) => reply.error);
    assert.deepEqual(
      refused.map((reply) => [reply.id, reply.error.code]),
      [
        [2, -32600],
        [null, -32600],
      ],
    );
    assert.match(
      refused[0]!.error.message,
      /^Invalid Request: this message is 524288\d\d bytes, over the 33554432 bytes/,
    );
    assert.equal(replies.find((reply) => reply.id === 4)!.result.agentInfo.name, 'jp');
    child.stdin!.end();
    assert.equal(await exited, 0, stderr);
  });
});
