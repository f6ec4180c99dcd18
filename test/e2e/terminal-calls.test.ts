/**
 * A tool call as the person at the terminal sees it, on the rendered screen at 100×30 and 60×20,
 * dark and light: each call has one header whatever the provider's wire sends between the call and
 * its prompt (a `usage` event), Ctrl+C at an open prompt leaves no stray line and the prompt reads
 * answered, and arguments edited with `e` are said in the scrollback.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WireFormat } from '../support/fake-provider.ts';
import {
  conversationIds,
  fakeModel,
  readEvents,
  runJp,
  testProvider,
  useCleanup,
  createFileCall,
} from '../support/jp.ts';
import { keys, jpScreens } from '../support/screen.ts';
import { terminals } from '../support/terminals.ts';

const cleanup = useCleanup();

const jp = jpScreens(cleanup);

describe('one header per call', () => {
  const wires: WireFormat[] = ['openai-chat', 'openai-responses', 'anthropic', 'openai-chat'];
  terminals.forEach((terminal, index) => {
    const wire = wires[index]!;
    const noServer = index === 3;
    it(`${terminal.name}, ${wire}${noServer ? ' --no-server' : ''}: the header of a call is drawn once, by its prompt, though a usage event comes between the call and the prompt`, async () => {
      const sandbox = cleanup.sandbox();
      const model = await fakeModel(
        cleanup,
        [
          { parts: [{ toolCall: { name: 'run_command', arguments: { command: 'ls' } } }] },
          { parts: [{ text: 'Listed.' }] },
        ],
        wire,
      );
      const screen = jp(
        sandbox,
        ['query', ...model.args, ...terminal.themeArguments, ...(noServer ? ['--no-server'] : []), 'list'],
        { env: model.env, ...terminal.size },
      );
      await screen.waitFor('Run run_command?', { on: 'screen' });
      assert.equal(screen.count('⚙ run_command'), 1, `one header before the prompt:\n${screen.text()}`);
      screen.press('n');
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      const [conversationId] = conversationIds(sandbox);
      const types = readEvents(sandbox, conversationId!).map((event) => event.type);
      const call = types.indexOf('tool_call_request');
      assert.ok(
        types.slice(call, types.indexOf('inquiry_request')).includes('usage'),
        `the log has a usage event between the call and its inquiry: ${types.join(' ')}`,
      );
      assert.equal(screen.count('⚙ run_command'), 1, `one header in the whole scrollback:\n${screen.text()}`);
      assert.equal(screen.count('$ ls'), 1, screen.text());
      assert.equal(screen.count('Listed.'), 1);
    });
  });
});

describe('Ctrl+C at an open prompt', () => {
  for (const terminal of terminals) {
    it(`${terminal.name}: no stray "does nothing here" line; after stop the prompt line reads answered`, async () => {
      const sandbox = cleanup.sandbox();
      const script = testProvider(sandbox, {
        steps: [{ parts: [createFileCall('a.txt')] }, { parts: [{ text: 'Done.' }] }],
      });
      const screen = jp(sandbox, ['query', ...script, ...terminal.themeArguments, 'go'], terminal.size);
      await screen.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen' });
      screen.press(keys.ctrlC);
      await screen.waitFor('continue: keep going', { on: 'screen' });
      assert.equal(screen.count('does nothing here'), 0, `no stray line:\n${screen.text()}`);
      screen.press(keys.enter);
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 130, screen.text());
      assert.equal(screen.count('does nothing here'), 0, `no stray line:\n${screen.text()}`);
      assert.equal(screen.count('[y/Y/a/n/N/p/e]'), 0, `no prompt is left open on the screen:\n${screen.text()}`);
      assert.match(screen.text(), /^Run fs_create_file\? Ctrl\+C \(interrupted\)$/m, screen.text());
      assert.equal(sandbox.exists('a.txt'), false);
    });
  }
});

describe('arguments edited with e', () => {
  terminals.forEach((terminal, index) => {
    const resumed = index % 2 === 1;
    it(`${terminal.name}${resumed ? ', a resumed turn (--continue)' : ''}: the live scrollback says the call runs with the arguments you edited`, async () => {
      const sandbox = cleanup.sandbox();
      const editor = sandbox.write('editor.sh', `printf '%s' '{"path":"edited.txt","content":"edited"}' > "$1"\n`);
      const script = testProvider(sandbox, {
        steps: [{ parts: [createFileCall('original.txt', 'original')] }, { parts: [{ text: 'Edited and done.' }] }],
      });
      let args = ['query', ...script, ...terminal.themeArguments, 'go'];
      if (resumed) {
        const deferred = await runJp(sandbox, [
          'query',
          ...script,
          '-c',
          'conversation.tools.defaults.detached="defer"',
          'go',
        ]);
        assert.equal(deferred.code, 4, deferred.stderr);
        args = ['query', '--continue', `--id=${conversationIds(sandbox)[0]}`, ...script, ...terminal.themeArguments];
      }
      const screen = jp(sandbox, args, { env: { EDITOR: `sh ${editor}` }, ...terminal.size });
      await screen.waitFor('[y/Y/a/n/N/p/e]', { on: 'screen' });
      screen.press('e');
      const exit = await screen.exited;
      assert.equal(exit.exitCode, 0, screen.text());
      assert.equal(sandbox.read('edited.txt'), 'edited');
      assert.match(
        screen.flowedText(),
        /✎ fs_create_file runs with the arguments you edited: \{"path":"edited\.txt","content":"edited"\}/,
        screen.text(),
      );
      const lines = screen.lines();
      const edited = lines.findIndex((line) => line.includes('✎ fs_create_file'));
      const result = lines.findIndex((line) => line.includes('↳ fs_create_file: ok'));
      assert.ok(edited !== -1 && edited < result, `the edit is said before the result:\n${screen.text()}`);
    });
  });
});
