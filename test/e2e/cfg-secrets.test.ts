/**
 * Secrets given on the command line never reach the log (DESIGN §10; issue 35, attack 7): an MCP
 * server's `env` and `headers` given with `--cfg` or `JP_CFG_*` configure the query they are given to
 * and are not recorded in the conversation's `config_delta` (nor anywhere else jp writes), and a
 * value that holds a secret jp knows is not recorded either. The rest of the settings still are.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { conversationIds, readEvents, runJp, testProvider, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

const secrets = {
  namedToken: 'named-token-3f9a1c7e5b',
  unnamedEnv: 'postgres://app:db-password-8c2e4d@db/app',
  header: 'header-credential-71d0b9e2',
  fromEnvironment: 'jp-cfg-token-5a6b7c8d9e',
  providerKey: 'sk-provider-key-0f1e2d3c4b5a',
};

/** Every file under `directory`, with its text. */
function filesUnder(directory: string): { file: string; text: string }[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).flatMap((name) => {
    const file = path.join(directory, name);
    return statSync(file).isFile() ? [{ file, text: readFileSync(file, 'utf8') }] : [];
  });
}

describe('secrets given with --cfg and JP_CFG_*', () => {
  it('are not written to the conversation, its logs or jp’s state; the other settings are recorded', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'Hello.' }] }] });
    const logFile = path.join(sandbox.dataHome, 'trace.log');
    const settings = [
      '-c',
      'mcp.servers.local.command="true"',
      '-c',
      `mcp.servers.local.env.SERVICE_TOKEN="${secrets.namedToken}"`,
      '-c',
      `mcp.servers.local.env.DATABASE_URL="${secrets.unnamedEnv}"`,
      '-c',
      'mcp.servers.remote.url="http://127.0.0.1:9/mcp"',
      '-c',
      `mcp.servers.remote.headers.Authorization="Bearer ${secrets.header}"`,
      // A value that holds a secret jp knows (a provider key variable), given as a setting.
      '-c',
      `assistant.instructions="Use the key ${secrets.providerKey} for the staging API."`,
    ];
    const env = {
      JP_CFG_MCP__SERVERS__OTHER__ENV__API_TOKEN: secrets.fromEnvironment,
      JP_CFG_MCP__SERVERS__OTHER__COMMAND: '"true"',
      OPENAI_API_KEY: secrets.providerKey,
    };
    const first = await runJp(
      sandbox,
      ['query', '--new', ...script, ...settings, '-vvv', `--log-file=${logFile}`, 'hi'],
      {
        env,
      },
    );
    assert.equal(first.code, 0, first.stderr);
    const [conversationId] = conversationIds(sandbox);
    const follow = await runJp(sandbox, ['query', '--id', conversationId!, ...script, 'again'], { env });
    assert.equal(follow.code, 0, follow.stderr);

    const written = [...filesUnder(path.join(sandbox.workspace, '.jp')), ...filesUnder(sandbox.dataHome)];
    assert.ok(written.some((entry) => entry.file.endsWith('events.ndjson')));
    assert.ok(written.some((entry) => entry.file === logFile));
    for (const [name, value] of Object.entries(secrets))
      for (const { file, text } of written) {
        // The trace log asked for with -vvv quotes the command line: there only what jp knows for a
        // secret (by its name, or as a key variable) is redacted; a value of an ordinary name is not.
        if (name === 'unnamedEnv' && file === logFile) continue;
        assert.equal(text.includes(value), false, `${name} is written in ${file}`);
      }

    assert.match(
      first.stderr,
      /not recorded in conversation jp-c\d+, as they hold secrets: assistant\.instructions, mcp\.servers\.local\.env, mcp\.servers\.remote\.headers;/,
    );
    const delta = readEvents(sandbox, conversationId!).find((event) => event.type === 'config_delta')!.delta;
    assert.deepEqual(delta.mcp, {
      servers: { local: { command: 'true' }, remote: { url: 'http://127.0.0.1:9/mcp' } },
    });
    assert.deepEqual(delta.providers.test, { script: 'script.json' });
  });
});
