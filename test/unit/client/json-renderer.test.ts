import { Secrets } from '../../../src/redact.ts';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { JsonRenderer } from '../../../src/client/json-renderer.ts';
import { SafeWriter } from '../../../src/output/channels.ts';
import { TerminalOutput } from '../../../src/client/terminal-output.ts';
import { buildErrorResult } from '../../../src/report/result.ts';
import { JpError } from '../../../src/errors.ts';

function capture(): { writer: SafeWriter; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { writer: new SafeWriter(stream as unknown as NodeJS.WriteStream), text: () => text };
}

describe('JsonRenderer', () => {
  it('never stamps a line earlier than one before it, the result included (the server stamped it on its own clock)', async () => {
    const stdout = capture();
    const stderr = capture();
    const output = new TerminalOutput({
      stdout: stdout.writer,
      stderr: stderr.writer,
      statusLine: false,
      color: false,
    });
    const renderer = new JsonRenderer(output, 'jp-c1');
    renderer.delta('message', 'streamed text');
    const result = buildErrorResult({
      secrets: new Secrets(),
      conversationId: 'jp-c1',
      query: 'q',
      error: new JpError('error', 'x', 'failed'),
      model: null,
      startedAt: Date.now(),
    });
    renderer.finish({ ...result, ts: '2000-01-01T00:00:00.000Z' });
    await renderer.flush();
    await new Promise((resolve) => setImmediate(resolve));
    const stamps = stdout
      .text()
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { ts: string }).ts);
    assert.equal(stamps.length, 2);
    assert.ok(stamps[1]! >= stamps[0]!, `the result's ts ${stamps[1]} is not before the text's ${stamps[0]}`);
  });
});
