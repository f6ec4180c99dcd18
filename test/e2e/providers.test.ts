/**
 * The built jp against local servers speaking the real streaming wire formats of OpenAI Chat
 * Completions, OpenAI Responses and Anthropic Messages. The model calls fs_create_file; inside a
 * pseudo-terminal with stdin and stdout both piped, the prompt appears on the terminal, `y` runs
 * the tool, the file exists, and stdout holds the final answer with no chrome.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, textStep, toolStep, type FakeProvider, type WireFormat } from '../support/fake-provider.ts';
import { fakeModelArguments, jpBinary, useCleanup } from '../support/jp.ts';
import { runInTerminal, shellQuote } from '../support/pty.ts';

const wires: WireFormat[] = ['openai-chat', 'openai-responses', 'anthropic'];

describe('a tool call with its prompt on the terminal, for each provider wire format', () => {
  const cleanup = useCleanup();

  for (const wire of wires) {
    it(`${wire}: prompt on /dev/tty, y runs fs_create_file, stdout has only the answer`, async () => {
      const provider: FakeProvider = await startFakeProvider({
        wire,
        steps: [
          toolStep(
            [{ name: 'fs_create_file', arguments: { path: 'notes/hello.txt', content: 'hello from the model\n' } }],
            'I will create the file.',
          ),
          textStep('The file notes/hello.txt now exists.'),
        ],
      });
      const sandbox = cleanup.sandbox();
      cleanup.add(() => provider.close());
      const model = fakeModelArguments(wire, provider.baseUrl);
      const command = [
        'echo "context from stdin" |',
        `(node ${shellQuote(jpBinary)} query ${model.args.map(shellQuote).join(' ')} "create the file"; echo $? > code.txt) |`,
        'cat > out.txt',
      ].join(' ');
      const terminal = runInTerminal(sandbox, command, { env: model.env });
      await terminal.waitFor('Run fs_create_file?');
      terminal.write('y');
      await terminal.exited;

      assert.equal(readFileSync(path.join(sandbox.workspace, 'code.txt'), 'utf8').trim(), '0', terminal.text());
      assert.equal(sandbox.read('notes/hello.txt'), 'hello from the model\n');
      assert.equal(sandbox.read('out.txt'), 'I will create the file.\nThe file notes/hello.txt now exists.\n');
      // The prompt and the chrome went to the terminal, not to stdout.
      assert.match(
        terminal.text(),
        /⚙ fs_create_file notes\/hello.txt[\s\S]*\+ hello from the model[\s\S]*Run fs_create_file\? y \(run\)/,
      );
      assert.match(terminal.text(), /fs_create_file: ok/);
      // stdin was query content, sent before the message.
      assert.equal(provider.requests.length, 2);
      const firstUser = provider.requests[0]!.messages.find((message) => message.role === 'user');
      assert.equal(firstUser?.text, 'context from stdin\n\ncreate the file');
      // The tool result went back to the model.
      const results = provider.requests[1]!.messages.flatMap((message) => message.toolResults);
      assert.equal(results.length, 1);
      assert.match(results[0]!.content, /created notes\/hello\.txt/);
    });
  }
});
