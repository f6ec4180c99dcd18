/**
 * A new user's first steps on whatever Node runs the tests (`.ci/run` runs this file again on Node 22
 * and 24): --version, init, a query against a local provider, a detached query waited for, and
 * the compiled-code cache of Node 22+ (none on Node 20), which a mistyped command never adds to, and
 * the Node and V8 options query servers start with on this Node (see src/launch/spawn.ts).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { gate, startFakeProvider, textStep } from '../support/fake-provider.ts';
import { fakeModel, fakeModelArguments, readEvents, runJp, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();
const version = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const nodeMajor = Number(process.versions.node.split('.')[0]);

/** Every file under a directory with its size and modification time, sorted. */
function snapshot(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      const stat = statSync(file);
      return `${path.relative(directory, file)} ${stat.size} ${stat.mtimeMs}`;
    })
    .sort();
}

describe(`first steps on Node ${process.version}`, () => {
  it('--version, init, a query against a local provider, --detach and conversation wait', async () => {
    const sandbox = cleanup.sandbox({ init: false });
    const shown = await runJp(sandbox, ['--version']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.stdout, `jp ${version}\n`);

    const initialized = await runJp(sandbox, ['init']);
    assert.equal(initialized.code, 0, initialized.stderr);

    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [textStep('First answer.')] });
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const answered = await runJp(sandbox, ['query', ...model.args, 'hello'], { env: model.env });
    assert.equal(answered.code, 0, answered.stderr);
    assert.equal(answered.stdout, 'First answer.\n');

    sandbox.write(
      'later.json',
      JSON.stringify({ steps: [{ parts: [{ text: 'done ' }, { delay_ms: 200 }, { text: 'later' }] }] }),
    );
    const detached = await runJp(sandbox, [
      'query',
      '--new',
      '--detach',
      '-m',
      'test',
      '-c',
      'providers.test.script=later.json',
      'go',
    ]);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = detached.stdout.trim();
    const waited = await runJp(sandbox, ['conversation', 'wait', conversationId]);
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(
      readEvents(sandbox, conversationId)
        .filter((event) => event.type === 'chat_response')
        .map((event) => event.message)
        .join(''),
      'done later',
    );
  });

  it(
    nodeMajor >= 22
      ? 'compiled code is kept in a private cache, and a mistyped command adds nothing to it'
      : 'Node 20 keeps no compiled code, and nothing else takes its place',
    async () => {
      const sandbox = cleanup.sandbox();
      const cache = path.join(sandbox.env.HOME!, '.cache', 'jp', 'compile-cache');
      for (const args of [
        ['conversation', 'ls'],
        ['config', 'show'],
      ])
        assert.equal((await runJp(sandbox, args)).code, 0);
      if (nodeMajor < 22) {
        assert.deepEqual(readdirSync(sandbox.env.HOME!), [], 'nothing under HOME');
      } else {
        assert.ok(snapshot(cache).length > 0, 'compiled code was kept');
        assert.equal(statSync(cache).mode & 0o777, 0o700);
      }
      const before = snapshot(sandbox.env.HOME!);
      for (const typo of ['quer', 'conversation-ls']) assert.equal((await runJp(sandbox, [typo, 'x'])).code, 2);
      assert.deepEqual(snapshot(sandbox.env.HOME!), before);
    },
  );

  const serverOptions =
    nodeMajor < 22
      ? ['--v8-pool-size=1', '--liftoff-only', '--max-semi-space-size=1', '--heap-growing-percent=10']
      : nodeMajor < 24
        ? []
        : ['--max-semi-space-size=2'];
  it(`query servers run with the options chosen for Node ${nodeMajor}: ${serverOptions.join(' ') || 'none'}`, async () => {
    const sandbox = cleanup.sandbox();
    // The answer holds until the test has read the server's command line.
    const optionsRead = gate();
    const model = await fakeModel(cleanup, [{ parts: [{ text: 'slow ' }, { gate: optionsRead }, { text: 'answer' }] }]);
    const detached = await runJp(sandbox, ['query', '--new', '--detach', ...model.args, 'go'], { env: model.env });
    assert.equal(detached.code, 0, detached.stderr);
    const pid = /\(pid (\d+)\)/.exec(detached.stderr)?.[1];
    assert.ok(pid, detached.stderr);
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const serve = commandLine.indexOf('__serve');
    assert.ok(serve > 1, commandLine.join(' '));
    // Between the node binary and jp's own file: the options the server was started with.
    const options = commandLine.slice(1, serve - 1);
    assert.deepEqual(options, serverOptions);
    optionsRead.open();
    const waited = await runJp(sandbox, ['conversation', 'wait', detached.stdout.trim()]);
    assert.equal(waited.code, 0, waited.stderr);
  });
});
