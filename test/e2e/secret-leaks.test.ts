/**
 * Where a secret could leak besides what jp writes on purpose: an MCP server's `env` values named
 * like secrets, a secret holding `"` or `\` in JSON log lines at -vvvvv, a query server's
 * `/proc/<pid>/environ` (a tool could read it), its core dumps and its working directory.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, stepByToolResults, textStep, toolStep } from '../support/fake-provider.ts';
import { eventually, fakeModelArguments, runJp, useCleanup } from '../support/jp.ts';
import { everythingStdio, killServers, writeUserConfig } from '../support/mcp.ts';

const cleanup = useCleanup();

const serviceToken = 'svc-token-9f8e7d6c5b';
const deployKey = 'deploy-api-key-1a2b3c4d';
const databasePassword = 'db-password-0o9i8u7y';

function assertNone(where: string, text: string, secrets: string[]): void {
  for (const secret of secrets)
    assert.equal(text.includes(secret), false, `${where} holds ${secret}:\n${text.slice(0, 3000)}`);
}

describe('an MCP server env value named *_TOKEN, *_API_KEY, *_PASSWORD', () => {
  it('is redacted in the tool result, events.ndjson, the request to the model, the run and trace logs, a start-up warning and jp mcp ls', async () => {
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: stepByToolResults([toolStep([{ name: 'mcp__everything__get-env', arguments: {} }]), textStep('Seen.')]),
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const secrets = [serviceToken, deployKey, databasePassword];
    // A second server prints its token on stderr and exits: jp warns that it failed, quoting it.
    const crashing = `process.stderr.write("cannot log in with " + process.env.SERVICE_TOKEN + "\\n"); process.exit(1)`;
    writeUserConfig(
      sandbox,
      everythingStdio(
        'everything',
        sandbox.root,
        `env = { SERVICE_TOKEN = "${serviceToken}", DEPLOY_API_KEY = "${deployKey}", DB_PASSWORD = "${databasePassword}", GREETING = "plain-value-visible" }\n`,
      ) +
        `\n[mcp.servers.crashing]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ["-e", ${JSON.stringify(crashing)}]\nenv = { SERVICE_TOKEN = "${serviceToken}" }\n` +
        '\n[conversation.tools.defaults]\ndetached = { run = "auto" }\n',
    );
    cleanup.add(() => killServers(sandbox.root));
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const traceLog = path.join(sandbox.root, 'trace.log');
    const run = await runJp(
      sandbox,
      ['query', '--json', '-vvvvv', '--log-file', traceLog, ...model.args, 'show the environment'],
      { env: model.env },
    );
    assert.equal(run.code, 0, run.stderr);

    const toolResult = JSON.parse(JSON.stringify(provider.requests[1]!.body)) as unknown;
    assert.match(JSON.stringify(toolResult), /plain-value-visible/, 'the tool printed the environment');
    assert.match(JSON.stringify(toolResult), /SERVICE_TOKEN[^,]*\[REDACTED\]/);
    assertNone('the request to the model', JSON.stringify(provider.requests[1]!.body), secrets);
    assert.match(run.stdout + run.stderr, /crashing/, 'the failed server was reported');
    assertNone('stdout and stderr', run.stdout + run.stderr, secrets);
    const conversationId = JSON.parse(run.stdout.trim().split('\n').at(-1)!).conversation_id as string;
    assertNone('events.ndjson', sandbox.read(`.jp/conversations/${conversationId}/events.ndjson`), secrets);
    assertNone('the trace log', readFileSync(traceLog, 'utf8'), secrets);
    const processes = path.join(sandbox.userDirectory(), 'processes');
    for (const name of readdirSync(processes))
      assertNone(`processes/${name}`, readFileSync(path.join(processes, name), 'utf8'), secrets);

    const listed = await runJp(sandbox, ['mcp', 'ls', '-vvvvv', '--log-file', traceLog]);
    assert.match(listed.stdout + listed.stderr, /crashing/);
    assertNone('jp mcp ls', listed.stdout + listed.stderr, secrets);
    assertNone('the trace log of jp mcp ls', readFileSync(traceLog, 'utf8'), secrets);
  });
});

describe('a secret holding " and \\ at -vvvvv', () => {
  it('is redacted in the JSON-escaped log lines too: the command line and the raw bodies', async () => {
    const canary = 'quote"and\\back-canary-5150';
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: stepByToolResults([
        toolStep([{ name: 'run_command', arguments: { command: 'printenv JP_TEST_CANARY' } }]),
        textStep('Done.'),
      ]),
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox({ config: '[secrets]\nenv_vars = ["JP_TEST_CANARY"]\n' });
    // A workspace's list counts once its user trusts it (it changes what an approval shows).
    assert.equal((await runJp(sandbox, ['trust'])).code, 0);
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const traceLog = path.join(sandbox.root, 'trace.log');
    const run = await runJp(
      sandbox,
      [
        'query',
        '-vvvvv',
        '--log-file',
        traceLog,
        ...model.args,
        '-c',
        'conversation.tools.run_command.run="unattended"',
        `say ${canary}`,
      ],
      {
        env: { ...model.env, JP_TEST_CANARY: canary },
      },
    );
    assert.equal(run.code, 0, run.stderr);
    const log = readFileSync(traceLog, 'utf8');
    assert.match(log, /\[REDACTED\]/);
    const once = JSON.stringify(canary).slice(1, -1);
    const twice = JSON.stringify(once).slice(1, -1);
    assertNone('the trace log', log, [canary, once, twice, 'and\\\\back-canary']);
    assertNone('the request to the model', JSON.stringify(provider.requests[1]!.body), [canary]);
  });
});

describe('a query server', () => {
  it('keeps no provider key in /proc/<pid>/environ, dumps no core and does not run in the workspace', async () => {
    const providerKey = 'sk-environ-canary-key-31415926';
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: stepByToolResults([
        toolStep([{ name: 'run_command', arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done' } }]),
        textStep('Done.'),
      ]),
    });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const detached = await runJp(
      sandbox,
      [
        'query',
        '--detach',
        ...model.args,
        '-c',
        'conversation.tools.run_command.run="unattended"',
        '-c',
        'conversation.tools.run_command.detached="auto"',
        'wait',
      ],
      {
        env: { ...model.env, OPENAI_API_KEY: providerKey },
      },
    );
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const entryFile = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.json`);
    const entry = await eventually(
      'the run is registered',
      () => existsSync(entryFile) && JSON.parse(readFileSync(entryFile, 'utf8')),
    );
    await eventually('the tool runs', () => provider.requests.length === 1);
    const pid = entry.pid as number;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
      assert.match(environ, /PATH=/, 'the environment was read');
      assert.equal(environ.includes(providerKey), false, "the provider key is in the server's /proc/<pid>/environ");
      assert.match(readFileSync(`/proc/${pid}/limits`, 'utf8'), /Max core file size\s+0\s+/);
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      assert.equal(cwd.startsWith(sandbox.workspace), false, `the server runs in ${cwd}`);
    } finally {
      writeFileSync(path.join(sandbox.workspace, 'go'), '');
    }
    assert.equal((await runJp(sandbox, ['conversation', 'wait', conversationId])).code, 0);
    assert.equal(provider.requests[0]!.headers.authorization, `Bearer ${providerKey}`, 'the server still used the key');
  });
});
