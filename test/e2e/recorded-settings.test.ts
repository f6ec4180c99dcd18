/**
 * Settings a conversation recorded are visible where they act: `jp config show --id`, and an error
 * naming such a key says it comes from the conversation and how to change it. Where and how to
 * reach a provider is never recorded, so a one-off `-c …base_url=` does not stick to the
 * conversation's later queries.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider } from '../support/fake-provider.ts';
import { conversationIds, readEvents, runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();
const key = { OPENAI_API_KEY: 'sk-test-key-000000000000000000' };

function writeUserConfig(sandbox: Sandbox, text: string): void {
  const directory = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp');
  mkdirSync(directory, { recursive: true });
  writeFileSync(path.join(directory, 'config.toml'), text);
}

/** A port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a one-off connection setting does not stick to the conversation', () => {
  it('after -c …base_url= to a dead port, --continue goes where the config says', async () => {
    const sandbox = cleanup.sandbox();
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [{ parts: [{ text: 'reached' }] }] });
    cleanup.add(() => provider.close());
    writeUserConfig(sandbox, `[providers.openai]\nbase_url = "${provider.baseUrl}"\napi = "chat"\n`);
    const port = await deadPort();
    const dead = await runJp(
      sandbox,
      [
        'query',
        '-m',
        'openai/gpt-test',
        '-c',
        `providers.openai.base_url="http://127.0.0.1:${port}/v1"`,
        '-c',
        'assistant.request.max_retries=0',
        'hello',
      ],
      { env: key },
    );
    assert.equal(dead.code, 6, dead.stderr);
    assert.match(dead.stderr, new RegExp(`127\\.0\\.0\\.1:${port}`));
    const [id] = conversationIds(sandbox);
    const recorded = readEvents(sandbox, id!).filter((event) => event.type === 'config_delta');
    assert.equal(recorded.length, 1);
    assert.deepEqual(recorded[0]!.delta, {
      assistant: { model: 'openai/gpt-test', request: { max_retries: 0 } },
    });
    assert.equal(recorded[0]!.query, 'hello');

    const resumed = await runJp(sandbox, ['query', '--continue'], { env: key });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, 'reached\n');
    assert.equal(provider.requests.length, 1);

    const shown = await runJp(sandbox, ['config', 'show', '--id', id!]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`providers\\.openai\\.base_url = "${provider.baseUrl}" +# .*config\\.toml`));
  });
});

describe('jp config show --id', () => {
  it('lists each recorded setting with the query that recorded it and when; JSON and --effective too', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'ok' }] }] });
    const first = await runJp(sandbox, [
      'query',
      ...script,
      '-c',
      'conversation.tools.defaults.detached="auto"',
      '-c',
      'assistant.max_turns=7',
      'first question',
    ]);
    assert.equal(first.code, 0, first.stderr);
    const second = await runJp(sandbox, ['query', '-c', 'assistant.max_turns=9', 'second question']);
    assert.equal(second.code, 0, second.stderr);
    const [id] = conversationIds(sandbox);
    const deltas = readEvents(sandbox, id!).filter((event) => event.type === 'config_delta');
    assert.equal(deltas.length, 2);

    const shown = await runJp(sandbox, ['config', 'show', '--id', id!]);
    assert.equal(shown.code, 0, shown.stderr);
    const line = (key: string): string => shown.stdout.split('\n').find((entry) => entry.startsWith(`#   ${key} =`))!;
    assert.equal(
      line('assistant.max_turns'),
      `#   assistant.max_turns = 9  (recorded ${deltas[1]!.timestamp}, by the query "second question")`,
    );
    assert.equal(
      line('conversation.tools.defaults.detached'),
      `#   conversation.tools.defaults.detached = "auto"  (recorded ${deltas[0]!.timestamp}, by the query "first question")`,
    );
    assert.match(line('assistant.model'), /= "test" {2}\(recorded .*"first question"\)/);
    assert.match(shown.stdout, new RegExp(`^assistant\\.max_turns = 9 +# conversation ${id}`, 'm'));

    const json = await runJp(sandbox, ['config', 'show', '--json', '--id', id!]);
    const parsed = JSON.parse(json.stdout);
    const maxTurns = parsed.conversation.recorded.find((entry: { key: string }) => entry.key === 'assistant.max_turns');
    assert.deepEqual(
      { value: maxTurns.value, query: maxTurns.query, at: maxTurns.recorded_at, in_force: maxTurns.in_force },
      { value: 9, query: 'second question', at: deltas[1]!.timestamp, in_force: true },
    );
    assert.equal(parsed.keys['assistant.max_turns'].value, 9);

    const overridden = await runJp(sandbox, ['config', 'show', '--id', id!, '-c', 'assistant.max_turns=2']);
    assert.match(overridden.stdout, /# {3}assistant\.max_turns = 9 .*\(overridden here by the command line\)/);

    const effective = await runJp(sandbox, ['config', 'show', '--effective', 'run_command', '--id', id!]);
    assert.equal(effective.code, 0, effective.stderr);
    assert.match(effective.stdout, new RegExp(`run .*auto.*conversation ${id}`));
    assert.match(effective.stdout, /# {3}conversation\.tools\.defaults\.detached = "auto"/);
    const plain = await runJp(sandbox, ['config', 'show', '--effective', 'run_command']);
    assert.doesNotMatch(plain.stdout, /auto/, 'without --id the conversation is no layer');

    const missing = await runJp(sandbox, ['config', 'show', '--id', 'jp-c1767225600000009']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no conversation jp-c1767225600000009 in the workspace/);
  });

  it('an error naming a recorded setting says it comes from the conversation and how to change it', async () => {
    const sandbox = cleanup.sandbox();
    const body =
      '{"error":{"message":"The model `gpt-nope` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}';
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [{ status: 404, body }] });
    cleanup.add(() => provider.close());
    writeUserConfig(sandbox, `[providers.openai]\nbase_url = "${provider.baseUrl}"\napi = "chat"\n`);
    const first = await runJp(sandbox, ['query', '-m', 'openai/gpt-nope', 'hello'], { env: key });
    assert.equal(first.code, 1, first.stderr);
    assert.doesNotMatch(first.stderr, /comes from conversation/, 'set on this command line: nothing to explain');
    const [id] = conversationIds(sandbox);
    const again = await runJp(sandbox, ['query', 'and again'], { env: key });
    assert.equal(again.code, 1, again.stderr);
    assert.match(
      again.stderr,
      new RegExp(
        `assistant\\.model = "openai/gpt-nope" comes from conversation ${id} \\(recorded \\S+ by the query "hello"\\); change it with -m <provider>/<model> or -c assistant\\.model=<value> on the next query`,
      ),
    );
    const json = await runJp(sandbox, ['query', '--json', 'once more'], { env: key });
    const result = JSON.parse(json.stdout.trim().split('\n').pop()!);
    assert.match(result.error.hint, /comes from conversation/);
  });
});
