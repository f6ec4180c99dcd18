/**
 * Read-only calls of one batch run at the same time (DESIGN §9), measured by overlap: an MCP
 * server's read-only tool `meet` (test/fixtures/mcp/meeting-server.mjs) says whether another call of
 * it was running at the same moment, which calls made one after another never are. The log still
 * has every call's events in call order, and a call that needs approval is not run alongside.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  conversationIds,
  readEvents,
  repositoryRoot,
  runJp,
  testProvider,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';
import { writeUserConfig } from '../support/mcp.ts';

const cleanup = useCleanup();
const meetingServer = path.join(repositoryRoot, 'test', 'fixtures', 'mcp', 'meeting-server.mjs');

/** `wait`: how long a call waits for another (a call made alone says so after it). */
function meetingConfig(trustAnnotations: boolean, wait: number, extra = ''): string {
  return `[mcp.servers.meeting]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify([meetingServer, String(wait)])}\ntrust_annotations = ${trustAnnotations}\n${extra}`;
}

async function batch(
  sandbox: Sandbox,
  calls: { id: string; name: string; arguments: unknown }[],
  args: string[] = [],
): Promise<Record<string, any>[]> {
  const script = testProvider(sandbox, {
    steps: [{ parts: calls.map((call) => ({ tool_call: call })) }, { parts: [{ text: 'done' }] }],
  });
  const result = await runJp(sandbox, ['query', ...script, ...args, 'go'], { timeoutMs: 120_000 });
  assert.equal(result.code, 0, result.stderr);
  return readEvents(sandbox, conversationIds(sandbox)[0]!);
}

function contentOf(events: Record<string, any>[], id: string): string {
  return events.find((event) => event.type === 'tool_call_response' && event.id === id)!.content;
}

describe('read-only calls of a batch', () => {
  it('run at the same time, and their events reach the log in call order', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('notes.txt', 'some notes\n');
    writeUserConfig(sandbox, meetingConfig(true, 20_000));
    const events = await batch(sandbox, [
      { id: 'call-a', name: 'mcp__meeting__meet', arguments: { name: 'a' } },
      { id: 'call-b', name: 'fs_read_file', arguments: { path: 'notes.txt' } },
      { id: 'call-c', name: 'mcp__meeting__meet', arguments: { name: 'c' } },
      { id: 'call-d', name: 'fs_search', arguments: { pattern: 'notes', glob: '*.txt' } },
    ]);
    assert.equal(contentOf(events, 'call-a'), 'a: met another call');
    assert.equal(contentOf(events, 'call-c'), 'c: met another call');
    assert.equal(contentOf(events, 'call-b'), '1\tsome notes');
    assert.match(contentOf(events, 'call-d'), /^1 match in 1 file:\nnotes\.txt:1: some notes$/);
    const order = events
      .filter((event) => event.type === 'tool_call_start' || event.type === 'tool_call_response')
      .map((event) => `${event.type}:${event.id}`);
    assert.deepEqual(order, [
      'tool_call_start:call-a',
      'tool_call_response:call-a',
      'tool_call_start:call-b',
      'tool_call_response:call-b',
      'tool_call_start:call-c',
      'tool_call_response:call-c',
      'tool_call_start:call-d',
      'tool_call_response:call-d',
    ]);
  });

  it("an MCP tool runs alongside only when its server's annotations are trusted; a call between them that changes things splits the batch", async () => {
    const untrusted = cleanup.sandbox();
    writeUserConfig(
      untrusted,
      meetingConfig(false, 300, '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n'),
    );
    const alone = await batch(untrusted, [
      { id: 'call-a', name: 'mcp__meeting__meet', arguments: { name: 'a' } },
      { id: 'call-b', name: 'mcp__meeting__meet', arguments: { name: 'b' } },
    ]);
    assert.equal(contentOf(alone, 'call-a').split('\n')[0], 'a: ran alone');
    assert.equal(contentOf(alone, 'call-b').split('\n')[0], 'b: ran alone');

    const split = cleanup.sandbox();
    writeUserConfig(split, meetingConfig(true, 300, '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n'));
    const events = await batch(split, [
      { id: 'call-a', name: 'mcp__meeting__meet', arguments: { name: 'a' } },
      { id: 'call-b', name: 'fs_create_file', arguments: { path: 'made.txt', content: 'x' } },
      { id: 'call-c', name: 'mcp__meeting__meet', arguments: { name: 'c' } },
    ]);
    assert.equal(contentOf(events, 'call-a'), 'a: ran alone');
    assert.equal(contentOf(events, 'call-c'), 'c: ran alone');
    assert.equal(split.read('made.txt'), 'x');
  });
});
