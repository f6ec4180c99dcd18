/**
 * Output channels and standard input through the built binary with no terminal: stdout carries
 * only the answer (or JSON), stderr the chrome, tracing only the log file; standard input is
 * content, never an answer, and an open pipe that never writes cannot hang a run.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, stepByToolResults, textStep, toolStep } from '../support/fake-provider.ts';
import {
  collect,
  conversationIds,
  fakeModelArguments,
  readEvents,
  runJp,
  startJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { createAjv, schemaProblem } from '../support/schemas.ts';

describe('with the default config and no terminal', () => {
  const cleanup = useCleanup();

  it('a model that calls fs_modify_file leaves the file untouched, is told why, exit 3, status denied', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: stepByToolResults([
        toolStep([
          {
            name: 'fs_modify_file',
            arguments: { path: 'app.conf', old_string: 'debug = false', new_string: 'debug = true' },
          },
        ]),
        textStep('I could not change it.'),
      ]),
    });
    const sandbox = cleanup.sandbox();
    cleanup.add(() => provider.close());
    sandbox.write('app.conf', 'debug = false\n');
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const result = await runJp(sandbox, ['query', '--json', ...model.args, 'turn debug on'], { env: model.env });
    assert.equal(result.code, 3, result.stderr);
    assert.equal(sandbox.read('app.conf'), 'debug = false\n');
    const final = JSON.parse(result.stdout.trim().split('\n').pop()!);
    assert.equal(final.status, 'denied');
    assert.equal(final.exit_code, 3);
    assert.equal(final.permission_denials.length, 1);
    assert.equal(final.permission_denials[0].tool_name, 'fs_modify_file');
    assert.deepEqual(final.permission_denials[0].tool_input, {
      path: 'app.conf',
      old_string: 'debug = false',
      new_string: 'debug = true',
    });
    assert.equal(final.tools[0].status, 'denied');
    // The model was told in plain words, with the key that would change it.
    const toolResult = provider.requests[1]!.messages.flatMap((message) => message.toolResults)[0]!;
    assert.match(toolResult.content, /not run: no user is available to approve it/);
    assert.match(toolResult.content, /conversation\.tools\.fs_modify_file\.detached\.run = "auto"/);
  });
});

describe('standard input', () => {
  const cleanup = useCleanup();

  it('an open pipe that never writes does not hang a run that has a MESSAGE', async () => {
    const sandbox = cleanup.sandbox();
    const args = [
      'query',
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'answer without stdin' }] }] }),
      'a message',
    ];
    const child = startJp(sandbox, args, { stdin: 'open-pipe' });
    const result = await collect(child, args, 30_000);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'answer without stdin\n');
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    assert.equal(events.find((event) => event.type === 'chat_request')!.content, 'a message');
  });

  it('with no MESSAGE, stdin is the message; with one, stdin comes first as context', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    let result = await runJp(sandbox, ['query', '--new', ...script], { stdin: 'the whole message\n' });
    assert.equal(result.code, 0, result.stderr);
    result = await runJp(sandbox, ['query', '--new', ...script, 'the question'], { stdin: 'some context\n' });
    assert.equal(result.code, 0, result.stderr);
    const [first, second] = conversationIds(sandbox);
    assert.equal(
      readEvents(sandbox, first!).find((event) => event.type === 'chat_request')!.content,
      'the whole message',
    );
    assert.equal(
      readEvents(sandbox, second!).find((event) => event.type === 'chat_request')!.content,
      'some context\n\nthe question',
    );
  });

  it('"y" on stdin never answers a prompt: it is content, and the inquiry follows the policy', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'x.txt', content: 'x' } } }] },
        { parts: [{ text: 'done' }] },
      ],
    });
    const result = await runJp(sandbox, ['query', ...script, 'create x'], { stdin: 'y\ny\n' });
    assert.equal(result.code, 3);
    assert.equal(existsSync(path.join(sandbox.workspace, 'x.txt')), false);
  });

  it('no MESSAGE and nothing on stdin is a usage error (exit 2)', async () => {
    const sandbox = cleanup.sandbox();
    const result = await runJp(sandbox, ['query', ...testProvider(sandbox, { steps: [{ parts: [{ text: 'x' }] }] })], {
      stdin: 'null',
    });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /no message/);
    assert.equal(result.stdout, '');
  });
});

describe('channels and formats', () => {
  const cleanup = useCleanup();
  const script = {
    steps: [
      {
        parts: [
          { text: '# Title\n\nSome **bold** text.\n\n' },
          { tool_call: { name: 'fs_read_file', arguments: { path: 'a.txt' } } },
        ],
      },
      { parts: [{ text: 'Final words.' }] },
    ],
  };

  it('text: stdout has only the assistant text; tool chrome is on stderr', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'A');
    const result = await runJp(sandbox, ['query', ...testProvider(sandbox, script), 'go']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '# Title\n\nSome **bold** text.\n\nFinal words.\n');
    assert.match(result.stderr, /\[tool\] fs_read_file/);
    assert.match(result.stderr, /test provider/);
    assert.doesNotMatch(result.stdout, /\u001b\[/, 'no ANSI on a pipe');
  });

  it('text-pretty renders markdown with ANSI; NO_COLOR removes colour from chrome', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'A');
    const pretty = await runJp(sandbox, ['query', '--format', 'text-pretty', ...testProvider(sandbox, script), 'go'], {
      env: { FORCE_COLOR: '1' },
    });
    assert.equal(pretty.code, 0, pretty.stderr);
    assert.doesNotMatch(pretty.stdout, /\*\*bold\*\*/, 'markdown was rendered');
    assert.match(pretty.stdout, /bold/);
    assert.match(pretty.stderr, /\u001b\[/, 'chrome coloured with FORCE_COLOR');
    const plain = await runJp(
      sandbox,
      ['query', '--new', '--format', 'text-pretty', ...testProvider(sandbox, script), 'go'],
      { env: { NO_COLOR: '1', FORCE_COLOR: '1' } },
    );
    assert.doesNotMatch(plain.stderr, /\u001b\[3[0-9]m/, 'NO_COLOR wins');
  });

  it('-vvv puts no tracing on stdout or stderr; it goes to the log file; --log-file=- sends it to stderr', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'A');
    const quiet = await runJp(sandbox, ['query', '-vvv', '--json', ...testProvider(sandbox, script), 'go']);
    assert.equal(quiet.code, 0, quiet.stderr);
    for (const line of [...quiet.stdout.trim().split('\n'), ...quiet.stderr.trim().split('\n')]) {
      const parsed = JSON.parse(line);
      assert.equal(parsed.v, 1, `not a jp output line: ${line}`);
      assert.equal(parsed.level, undefined, `tracing leaked: ${line}`);
    }
    const log = readFileSync(path.join(sandbox.dataHome, 'jp', 'logs', 'jp.log'), 'utf8');
    assert.match(log, /INFO/);
    const loud = await runJp(sandbox, [
      'query',
      '--new',
      '-vvv',
      '--log-file=-',
      ...testProvider(sandbox, script),
      'go',
    ]);
    assert.match(loud.stderr, /INFO/);
    assert.equal(loud.stdout, '# Title\n\nSome **bold** text.\n\nFinal words.\n');
  });
});

describe('--format json validates against schema/', () => {
  const cleanup = useCleanup();

  it('echo "fix it" | jp query --format json -vvv (no terminal): every stdout and stderr line is a valid jp line; the last is the result', async () => {
    const ajv = createAjv();
    const sandbox = cleanup.sandbox();
    sandbox.write('app.conf', 'debug = false\n');
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { reasoning: 'Thinking about it.' },
            { text: 'Let me check.\n\n' },
            { tool_call: { name: 'fs_read_file', arguments: { path: 'app.conf' } } },
            {
              tool_call: {
                name: 'fs_modify_file',
                arguments: { path: 'app.conf', old_string: 'false', new_string: 'true' },
              },
            },
          ],
        },
        { parts: [{ text: 'I could not modify it.' }] },
      ],
    });
    const result = await runJp(sandbox, ['query', '--format', 'json', '-vvv', ...script], { stdin: 'fix it\n' });
    assert.equal(result.code, 3, result.stderr);
    const stdoutLines = result.stdout.trim().split('\n');
    const stderrLines = result.stderr.trim().split('\n');
    assert.ok(stdoutLines.length >= 6);
    for (const [stream, lines] of [
      ['stdout', stdoutLines],
      ['stderr', stderrLines],
    ] as const) {
      for (const line of lines) {
        const value = JSON.parse(line);
        assert.equal(schemaProblem(ajv, 'output-line.schema.json', value), undefined, `${stream}: ${line}`);
        assert.equal(
          schemaProblem(ajv, `output-line.schema.json#/$defs/${stream}_line`, value),
          undefined,
          `${line} belongs on ${stream}`,
        );
      }
    }
    const last = JSON.parse(stdoutLines[stdoutLines.length - 1]!);
    assert.equal(last.type, 'result');
    assert.equal(last.status, 'denied');
    assert.equal(last.query, 'fix it');
    assert.equal(stdoutLines.filter((line) => JSON.parse(line).type === 'result').length, 1);
    for (const event of readEvents(sandbox, conversationIds(sandbox)[0]!)) {
      assert.equal(schemaProblem(ajv, 'event.schema.json', event), undefined, JSON.stringify(event));
    }
    const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
    assert.equal(schemaProblem(ajv, 'conversation-list.schema.json', JSON.parse(listed.stdout)), undefined);
  });

  it('a usage error in json mode still ends stdout with a result line', async () => {
    const ajv = createAjv();
    const sandbox = cleanup.sandbox();
    for (const args of [
      ['query', '--json', '--bogus-flag', 'x'],
      ['query', '--json', '-c', 'assistant.nope=1', 'x'],
      ['query', '--json', '-m', 'openai/x', 'x'],
    ]) {
      const result = await runJp(sandbox, args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      const last = JSON.parse(result.stdout.trim().split('\n').pop()!);
      assert.equal(schemaProblem(ajv, 'output-line.schema.json', last), undefined);
      assert.deepEqual([last.type, last.status, last.exit_code], ['result', 'usage', 2]);
      for (const line of result.stderr.trim().split('\n'))
        assert.equal(schemaProblem(ajv, 'output-line.schema.json', JSON.parse(line)), undefined, line);
    }
  });
});
