/**
 * Tool output that helps (DESIGN §9): a command's exit code on a line of its own after its output,
 * and one limit, in one place, for every tool's output: the head and the tail kept, the lines left
 * out counted, the exit code (the last line) kept.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conversationIds, readEvents, runJp, testProvider, useCleanup, type Sandbox } from '../support/jp.ts';
import { writeUserConfig } from '../support/mcp.ts';

const cleanup = useCleanup();

async function callTools(
  sandbox: Sandbox,
  calls: { name: string; arguments: unknown }[],
  args: string[] = [],
): Promise<string[]> {
  const before = new Set(conversationIds(sandbox));
  const script = testProvider(
    sandbox,
    { steps: [{ parts: calls.map((call) => ({ tool_call: call })) }, { parts: [{ text: 'done' }] }] },
    `script-${before.size}.json`,
  );
  const result = await runJp(sandbox, [
    'query',
    '--new',
    ...script,
    '-c',
    'conversation.tools.defaults.run="unattended"',
    ...args,
    'go',
  ]);
  assert.equal(result.code, 0, result.stderr);
  const id = conversationIds(sandbox).find((candidate) => !before.has(candidate))!;
  return readEvents(sandbox, id)
    .filter((event) => event.type === 'tool_call_response')
    .map((event) => event.content as string);
}

describe('tool output', () => {
  it("a command's exit code is a line of its own, after its output", async () => {
    const sandbox = cleanup.sandbox();
    const [counting, failing, silent] = await callTools(sandbox, [
      { name: 'run_command', arguments: { command: 'seq 1 3' } },
      { name: 'run_command', arguments: { command: 'echo out; echo err >&2; exit 3' } },
      { name: 'run_command', arguments: { command: 'true' } },
    ]);
    assert.equal(counting, '1\n2\n3\nexit code 0');
    assert.equal(failing, 'out\n\n[stderr]\nerr\nexit code 3');
    assert.equal(silent, 'exit code 0');
  });

  it('one limit for every tool: head and tail kept, lines left out counted, the exit code kept', async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, '[conversation.tools.counter]\ncommand = "seq 1 5000"\ndescription = "count"\n');
    for (let index = 0; index < 300; index++) sandbox.write(`files/file-${String(index).padStart(3, '0')}.txt`, 'x');
    const results = await callTools(
      sandbox,
      [
        { name: 'run_command', arguments: { command: 'seq 1 5000' } },
        { name: 'fs_list_files', arguments: { path: 'files' } },
        { name: 'counter', arguments: {} },
      ],
      ['-c', 'conversation.tools.defaults.output_limit=1000', '-c', 'conversation.tools.counter.run="unattended"'],
    );
    const mark =
      /\n\[… jp omitted (\d+) lines \((\d+) characters\) here: the output is longer than 1000 characters …\]\n/;
    for (const result of results) {
      assert.ok(result.length <= 1000, `${result.length} characters`);
      assert.match(result, mark);
    }
    const [command, listing, local] = results;
    assert.ok(command!.startsWith('1\n2\n3\n'));
    assert.ok(command!.endsWith('\n4999\n5000\nexit code 0'), command!.slice(-40));
    const kept = command!.split('\n').length - 1;
    assert.equal(Number(mark.exec(command!)![1]), 5001 - kept, 'every line is kept or counted');
    assert.ok(
      listing!.startsWith('300 files under files\nfiles/file-000.txt\n') ||
        listing!.startsWith('300 files under files\nfile-000.txt\n'),
      listing!.slice(0, 80),
    );
    assert.ok(local!.endsWith('\n5000') || local!.endsWith('\n5000\n'), local!.slice(-20));
  });
});
