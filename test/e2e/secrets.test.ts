/**
 * Secrets are redacted once, where a text is made: a canary printed by a tool (and quoted in the
 * user's message) appears zero times in stdout JSON, the socket traffic of a detached run (tapped
 * raw and with `attach --read-only --json`), the conversation log, the trace log, the run log, the
 * result, and the next request to the model. Tools get jp's environment without the provider keys
 * unless their config passes one through by name.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, stepByToolResults, textStep, toolStep } from '../support/fake-provider.ts';
import {
  collect,
  eventually,
  fakeModelArguments,
  readEvents,
  runCapability,
  runJp,
  type Sandbox,
  startJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();

const providerKey = 'sk-canary-provider-key-1234567890';
const canary = 'canary-secret-value-4242';

function writeUserConfig(sandbox: Sandbox, text: string): void {
  const directory = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp');
  mkdirSync(directory, { recursive: true });
  writeFileSync(path.join(directory, 'config.toml'), text);
}

function assertNoSecret(where: string, text: string): void {
  assert.equal(text.includes(canary), false, `${where} holds the canary:\n${text.slice(0, 3000)}`);
  assert.equal(text.includes(providerKey), false, `${where} holds the provider key:\n${text.slice(0, 3000)}`);
}

/** Connects to a run's socket as a read-only viewer and keeps every byte the server sends. */
function tapSocket(socketPath: string, capability: string): { greeted: Promise<void>; closed: Promise<string> } {
  const socket = net.connect(socketPath);
  const chunks: Buffer[] = [];
  let greet: () => void;
  const greeted = new Promise<void>((resolve) => (greet = resolve));
  socket.on('connect', () =>
    socket.write(JSON.stringify({ type: 'hello', version: 2, capability, can_prompt: false, read_only: true }) + '\n'),
  );
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    if (Buffer.concat(chunks).includes('"type":"hello"')) greet();
  });
  const closed = new Promise<string>((resolve) =>
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8'))),
  );
  return { greeted, closed };
}

describe('a secret printed by a tool', () => {
  it('appears nowhere: socket traffic, attach --read-only --json, logs, result, metadata, the next request to the model', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: stepByToolResults([
        toolStep(
          [
            {
              name: 'run_command',
              arguments: {
                command: 'while [ ! -f go ]; do sleep 0.05; done; echo "canary=$JP_TEST_CANARY key=$OPENAI_API_KEY"',
              },
            },
          ],
          'Checking.',
        ),
        textStep('All done.'),
      ]),
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox({ config: '[secrets]\nenv_vars = ["JP_TEST_CANARY"]\n' });
    // A workspace's list counts once its user trusts it (it changes what an approval shows).
    assert.equal((await runJp(sandbox, ['trust'])).code, 0);
    writeUserConfig(
      sandbox,
      '[conversation.tools.run_command]\nrun = "unattended"\ndetached = "auto"\nenv_vars = ["OPENAI_API_KEY"]\n',
    );
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const env = { ...model.env, OPENAI_API_KEY: providerKey, JP_TEST_CANARY: canary };
    const traceLog = path.join(sandbox.root, 'trace.log');

    const detached = await runJp(
      sandbox,
      ['query', '--detach', '-vvvvv', '--log-file', traceLog, ...model.args, `is ${canary} safe to print?`],
      { env },
    );
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const entryFile = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.json`);
    const entry = await eventually(
      'the run is registered',
      () => existsSync(entryFile) && JSON.parse(readFileSync(entryFile, 'utf8')),
    );

    const raw = tapSocket(entry.socket_path, runCapability(sandbox, conversationId));
    const attach = startJp(sandbox, ['conversation', 'attach', '--read-only', '--json', conversationId], { env });
    const attached = collect(attach, ['attach'], 60_000);
    let attachOutput = '';
    attach.stdout!.on('data', (chunk: Buffer) => (attachOutput += chunk.toString('utf8')));
    await raw.greeted;
    await eventually('attach replayed the current turn', () => attachOutput.includes('"user_message"'));
    writeFileSync(path.join(sandbox.workspace, 'go'), '');

    const [socketTraffic, attachResult] = await Promise.all([raw.closed, attached]);
    assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationId])).code, 0);

    assert.match(socketTraffic, /"type":"tool_call_response"/);
    assert.match(socketTraffic, /canary=\[REDACTED\] key=\[REDACTED\]/, 'the tool printed both, redacted');
    assertNoSecret('the socket traffic', socketTraffic);
    assertNoSecret('attach --read-only --json', attachResult.stdout + attachResult.stderr);
    const result = attachResult.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((line) => line.type === 'result');
    assert.ok(result, 'the viewer got the result');
    assert.match(result.tools[0].result, /canary=\[REDACTED\]/);
    assert.equal(result.query, 'is [REDACTED] safe to print?');

    const conversationDirectory = path.join(sandbox.workspace, '.jp', 'conversations', conversationId);
    for (const name of readdirSync(conversationDirectory))
      assertNoSecret(
        `.jp/conversations/${conversationId}/${name}`,
        readFileSync(path.join(conversationDirectory, name), 'utf8'),
      );
    assert.ok(
      readEvents(sandbox, conversationId).some(
        (event) => event.type === 'tool_call_response' && event.content.includes('canary=[REDACTED]'),
      ),
    );
    assert.ok(readFileSync(traceLog, 'utf8').length > 0, 'the trace log was written');
    assertNoSecret('the trace log', readFileSync(traceLog, 'utf8'));
    const processes = path.join(sandbox.userDirectory(), 'processes');
    for (const name of readdirSync(processes))
      assertNoSecret(`processes/${name}`, readFileSync(path.join(processes, name), 'utf8'));

    assert.equal(provider.requests.length, 2);
    for (const request of provider.requests)
      assertNoSecret('a request body sent to the model', JSON.stringify(request.body));
    assert.match(JSON.stringify(provider.requests[1]!.body), /canary=\[REDACTED\] key=\[REDACTED\]/);
    assert.equal(provider.requests[0]!.headers.authorization, `Bearer ${providerKey}`, 'the key goes where it belongs');
  });

  it('appears nowhere on stdout or stderr of a --json run', async () => {
    const sandbox = cleanup.sandbox({ config: '[secrets]\nenv_vars = ["JP_TEST_CANARY"]\n' });
    // A workspace's list counts once its user trusts it (it changes what an approval shows).
    assert.equal((await runJp(sandbox, ['trust'])).code, 0);
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo "canary=$JP_TEST_CANARY"' } } }] },
        { parts: [{ text: 'done' }] },
      ],
    });
    const result = await runJp(
      sandbox,
      ['query', '--json', ...script, '-c', 'conversation.tools.run_command.run="unattended"', `say ${canary}`],
      {
        env: { JP_TEST_CANARY: canary },
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assertNoSecret('stdout', result.stdout);
    assertNoSecret('stderr', result.stderr);
    const final = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    assert.equal(final.tools[0].result, 'canary=[REDACTED]\nexit code 0');
    assert.equal(final.query, 'say [REDACTED]');
  });
});

describe('a secret listed in the user config', () => {
  it('stays a secret when an untrusted workspace config sets secrets.env_vars = []: a layer only adds secrets', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: stepByToolResults([
        toolStep([{ name: 'run_command', arguments: { command: 'echo "canary=$JP_TEST_CANARY"' } }], 'Checking.'),
        textStep('All done.'),
      ]),
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox({ config: '[secrets]\nenv_vars = []\n' });
    writeUserConfig(sandbox, '[secrets]\nenv_vars = ["JP_TEST_CANARY"]\n');
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const result = await runJp(
      sandbox,
      ['query', '--json', ...model.args, '-c', 'conversation.tools.run_command.run="unattended"', 'print it'],
      {
        env: { ...model.env, JP_TEST_CANARY: canary },
      },
    );
    assert.equal(result.code, 0, result.stderr);

    assertNoSecret('stdout', result.stdout);
    const final = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    assert.equal(final.tools[0].result, 'canary=[REDACTED]\nexit code 0', 'the tool printed it, redacted');
    const conversationDirectory = path.join(sandbox.workspace, '.jp', 'conversations', final.conversation_id);
    const log = readFileSync(path.join(conversationDirectory, 'events.ndjson'), 'utf8');
    assertNoSecret('the conversation log', log);
    assert.match(log, /canary=\[REDACTED\]/);
    assert.equal(provider.requests.length, 2);
    assertNoSecret('the request after the tool ran', JSON.stringify(provider.requests[1]!.body));
    assert.match(JSON.stringify(provider.requests[1]!.body), /canary=\[REDACTED\]/);
  });
});

describe('the environment of a tool', () => {
  it('has no provider key variable unless the tool passes it through by name', async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, '[providers.anthropic]\napi_key_env = "MY_ANTHROPIC_KEY"\n');
    const command =
      'echo "openai=[$OPENAI_API_KEY] anthropic=[$ANTHROPIC_API_KEY] configured=[$MY_ANTHROPIC_KEY] other=[$GITHUB_TOKEN]"';
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command } } }] },
        { parts: [{ text: 'done' }] },
      ],
    });
    const env = {
      OPENAI_API_KEY: 'openai-key-value',
      ANTHROPIC_API_KEY: 'anthropic-key-value',
      MY_ANTHROPIC_KEY: 'my-anthropic-value',
      GITHUB_TOKEN: 'gh-token',
    };
    const run = async (...extra: string[]): Promise<string> => {
      const result = await runJp(
        sandbox,
        [
          'query',
          '--json',
          '--new',
          ...script,
          '-c',
          'conversation.tools.run_command.run="unattended"',
          ...extra,
          'env',
        ],
        { env },
      );
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout.trim().split('\n').at(-1)!).tools[0].result;
    };
    assert.equal(await run(), 'openai=[] anthropic=[] configured=[] other=[gh-token]\nexit code 0');
    assert.equal(
      await run('-c', 'conversation.tools.run_command.env_vars=["ANTHROPIC_API_KEY"]'),
      'openai=[] anthropic=[[REDACTED]] configured=[] other=[gh-token]\nexit code 0',
      'passed through, and still a secret',
    );
  });
});
