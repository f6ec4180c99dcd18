/**
 * jp installed the ways users install it, run from where npm puts it: `npm pack` and `npm install -g`
 * of the tarball into a prefix whose path has a space, `npm link`, a hand-made symlink to a symlink,
 * and `npx`. Each time the command on PATH is a symlink and jp has to find its own files (and start
 * its query server) from its real location. npm runs with a clean HOME (no user npmrc); packages
 * come from the npm cache of whoever runs the tests, or from the registry.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gate, textStep } from '../support/fake-provider.ts';
import {
  collect,
  eventually,
  fakeModel,
  processesMatching,
  readEvents,
  repositoryRoot,
  type RunResult,
  type Sandbox,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();
const version = (JSON.parse(readFileSync(path.join(repositoryRoot, 'package.json'), 'utf8')) as { version: string })
  .version;

/** npm's own cache (where `npm ci` put the packages), so that installing needs no network when warm. */
const npmCache = process.env.npm_config_cache ?? path.join(os.homedir(), '.npm');

/** The environment of npm: this one without npm's own settings, with an empty HOME. */
function npmEnvironment(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  return { ...environment, HOME: home, npm_config_cache: npmCache, npm_config_update_notifier: 'false', ...extra };
}

function npm(args: string[], options: { cwd: string; home: string; environment?: NodeJS.ProcessEnv }): string {
  const result = spawnSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: options.cwd,
    env: npmEnvironment(options.home, options.environment),
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(result.status, 0, `npm ${args.join(' ')}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

function run(
  command: string[],
  sandbox: Sandbox,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<RunResult> {
  const child = spawn(command[0]!, [...command.slice(1), ...args], {
    cwd: options.cwd ?? sandbox.workspace,
    env: { ...sandbox.env, ...options.env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child, args, 120_000);
}

/**
 * What a new user does first, through `command`: --version, init, a query against a local provider,
 * and a detached query waited for. The query server must be started from `packageDirectory`.
 */
async function firstSteps(command: string[], packageDirectory: string): Promise<void> {
  const versionResult = await run(command, cleanup.sandbox({ init: false }), ['--version']);
  assert.equal(versionResult.code, 0, versionResult.stderr);
  assert.equal(versionResult.stdout, `jp ${version}\n`);

  const sandbox = cleanup.sandbox({ init: false });
  const initialized = await run(command, sandbox, ['init']);
  assert.equal(initialized.code, 0, initialized.stderr);
  assert.ok(existsSync(path.join(sandbox.workspace, '.jp', 'config.toml')));

  // The detached run's answer holds until the test has looked at its server.
  const serverSeen = gate();
  const model = await fakeModel(cleanup, [
    textStep('Installed and answering.'),
    { parts: [{ text: 'in the ' }, { gate: serverSeen }, { text: 'background' }] },
  ]);
  const answered = await run(command, sandbox, ['query', ...model.args, 'hello'], { env: model.env });
  assert.equal(answered.code, 0, answered.stderr);
  assert.equal(answered.stdout, 'Installed and answering.\n');

  const detached = await run(command, sandbox, ['query', '--new', '--detach', ...model.args, 'go'], { env: model.env });
  assert.equal(detached.code, 0, detached.stderr);
  const conversationId = detached.stdout.trim();
  // The run lasts a while yet: its server is there to look at.
  const server = await eventually("the detached run's server", () =>
    processesMatching('__serve').find((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`XDG_DATA_HOME=${sandbox.dataHome}`);
      } catch {
        return false;
      }
    }),
  );
  const commandLine = readFileSync(`/proc/${server}/cmdline`, 'utf8').split('\0');
  assert.ok(
    commandLine.includes(path.join(realpathSync(packageDirectory), 'dist', 'jp.mjs')),
    `the server runs from the package's real location: ${commandLine.join(' ')}`,
  );
  serverSeen.open();
  const waited = await run(command, sandbox, ['conversation', 'wait', conversationId]);
  assert.equal(waited.code, 0, waited.stderr);
  const answer = readEvents(sandbox, conversationId)
    .filter((event) => event.type === 'chat_response')
    .map((event) => event.message)
    .join('');
  assert.equal(answer, 'in the background');
}

describe('installed as users install it', () => {
  let root = '';
  let home = '';
  let tarball = '';
  before(() => {
    root = cleanup.sandbox({ init: false }).root;
    home = path.join(root, 'empty home');
    mkdirSync(home);
    const packed = npm(['pack', '--ignore-scripts', '--pack-destination', root, '--json'], {
      cwd: repositoryRoot,
      home,
    });
    tarball = path.join(root, (JSON.parse(packed) as { filename: string }[])[0]!.filename);
  });

  it('npm install -g of the packed tarball, into a prefix with a space in its path', async () => {
    const prefix = path.join(root, 'global prefix');
    npm(['install', '--global', '--prefix', prefix, tarball], { cwd: root, home });
    const bin = path.join(prefix, 'bin', 'jp');
    assert.ok(readdirSync(path.dirname(bin)).includes('jp'));
    await firstSteps([bin], path.join(prefix, 'lib', 'node_modules', 'jp-agent'));

    // A hand-made symlink, in another directory with a space, to npm's symlink.
    const mine = path.join(root, 'my tools', 'jp');
    mkdirSync(path.dirname(mine));
    symlinkSync(path.relative(path.dirname(mine), bin), mine);
    const result = await run([mine], cleanup.sandbox({ init: false }), ['conversation', 'ls']);
    assert.equal(result.code, 0, result.stderr);
    await firstSteps([mine], path.join(prefix, 'lib', 'node_modules', 'jp-agent'));
  });

  it('npm link: the global symlink points at this repository', async () => {
    const prefix = path.join(root, 'link prefix');
    mkdirSync(prefix);
    npm(['link', '--ignore-scripts'], { cwd: repositoryRoot, home, environment: { npm_config_prefix: prefix } });
    const linked = path.join(prefix, 'lib', 'node_modules', 'jp-agent');
    assert.equal(realpathSync(linked), realpathSync(repositoryRoot));
    await firstSteps([path.join(prefix, 'bin', 'jp')], repositoryRoot);
  });

  it('npx --package=<tarball> jp', async () => {
    const npxDirectory = path.join(npmCache, '_npx');
    const before = new Set(existsSync(npxDirectory) ? readdirSync(npxDirectory) : []);
    after(() => {
      // npx installs into npm's cache; what it installed for this tarball goes again.
      for (const entry of existsSync(npxDirectory) ? readdirSync(npxDirectory) : []) {
        if (before.has(entry)) continue;
        const manifest = path.join(npxDirectory, entry, 'package.json');
        if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes(JSON.stringify(tarball)))
          rmSync(path.join(npxDirectory, entry), { recursive: true, force: true });
      }
    });
    // npm's cache for npx, jp's own HOME for jp (an empty one, like npm's).
    const npx = [
      'env',
      `npm_config_cache=${npmCache}`,
      'npx',
      '--yes',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      `--package=${tarball}`,
      '--',
      'jp',
    ];
    const versionResult = await run(npx, cleanup.sandbox({ init: false }), ['--version']);
    assert.equal(versionResult.code, 0, versionResult.stderr);
    assert.equal(versionResult.stdout, `jp ${version}\n`);
    // jp is not on PATH after npx: bare jp suggests running it again the way npx did.
    const bare = await run(npx, cleanup.sandbox({ init: false }), []);
    assert.equal(bare.code, 2, bare.stderr);
    assert.ok(bare.stderr.includes(`npx --package ${tarball} jp init`), bare.stderr);
    const entry = readdirSync(npxDirectory).find(
      (name) =>
        !before.has(name) &&
        readFileSync(path.join(npxDirectory, name, 'package.json'), 'utf8').includes(JSON.stringify(tarball)),
    );
    assert.ok(entry, 'npx installed the tarball');
    await firstSteps(npx, path.join(npxDirectory, entry, 'node_modules', 'jp-agent'));
  });
});
