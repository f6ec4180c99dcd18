/**
 * A broken or hostile machine gets a clear error, never a hang, a runaway read or "internal error …
 * This is a bug in jp": config files that are devices or FIFOs, a symlinked or misplaced
 * `.jp/conversations`, a read-only workspace, state jp may not write, something at the socket's
 * path, too few file descriptors.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, textStep } from '../support/fake-provider.ts';
import {
  collect,
  conversationIds,
  fakeModelArguments,
  jpBinary,
  runJp,
  sleep,
  testProvider,
  useCleanup,
  type RunResult,
  type Sandbox,
} from '../support/jp.ts';

const cleanup = useCleanup();

const helloScript = { steps: [{ parts: [{ text: 'hello back' }] }] };

function assertNoBugReport(run: RunResult): void {
  assert.doesNotMatch(run.stderr, /internal error|This is a bug in jp/, run.stderr);
}

/** Runs jp under `wrapper` (a command and its arguments that end by executing the rest). */
function runWrapped(sandbox: Sandbox, wrapper: string[], args: string[]): Promise<RunResult> {
  const child = spawn(wrapper[0]!, [...wrapper.slice(1), process.execPath, jpBinary, ...args], {
    cwd: sandbox.workspace,
    env: sandbox.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child, args, 30_000);
}

describe('a config file that is not a regular file', () => {
  for (const [label, make] of [
    ['a symlink to /dev/zero', (file: string) => symlinkSync('/dev/zero', file)],
    ['a symlink to /dev/urandom', (file: string) => symlinkSync('/dev/urandom', file)],
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file])],
  ] as const) {
    it(`.jp/config.toml as ${label}: query and trust --show exit 2 naming it, without reading it`, async () => {
      const sandbox = cleanup.sandbox();
      const script = testProvider(sandbox, helloScript);
      make(path.join(sandbox.workspace, '.jp', 'config.toml'));
      for (const args of [['query', ...script, 'hello'], ['trust', '--show'], ['trust']]) {
        const run = await runJp(sandbox, args, { timeoutMs: 20_000 });
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
        assert.match(
          run.stderr,
          /cannot read config file .*\.jp\/config\.toml: it is a (character device|FIFO), not a regular file/,
        );
        assertNoBugReport(run);
      }
    });
  }

  it('the user config as a FIFO: exit 2 naming it', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, helloScript);
    const userConfig = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp', 'config.toml');
    mkdirSync(path.dirname(userConfig), { recursive: true });
    execFileSync('mkfifo', [userConfig]);
    const run = await runJp(sandbox, ['query', ...script, 'hello'], { timeoutMs: 20_000 });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, new RegExp(`cannot read config file ${userConfig}: it is a FIFO`));
  });

  it('a config file over 1 MiB: exit 2 naming the limit', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, helloScript);
    sandbox.write('.jp/config.toml', `# ${'x'.repeat(1024 * 1024)}\n`);
    const run = await runJp(sandbox, ['query', ...script, 'hello']);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /larger than 1 MiB/);
  });
});

describe('.jp/conversations that is not a directory of the workspace', () => {
  it('a symlink is refused, nothing is written through it', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, helloScript);
    const elsewhere = path.join(sandbox.root, 'elsewhere');
    mkdirSync(elsewhere);
    const conversations = path.join(sandbox.workspace, '.jp', 'conversations');
    rmSync(conversations, { recursive: true });
    symlinkSync(elsewhere, conversations);
    const run = await runJp(sandbox, ['query', ...script, 'hello']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /\.jp\/conversations is a symbolic link/);
    assert.deepEqual(readdirSync(elsewhere), [], 'nothing was written through the link');
    // A conversation on the other side of the link is neither listed nor removed through it.
    mkdirSync(path.join(elsewhere, 'jp-c1700000000000001'));
    writeFileSync(path.join(elsewhere, 'jp-c1700000000000001', 'events.ndjson'), '');
    for (const args of [
      ['conversation', 'ls'],
      ['conversation', 'rm', 'jp-c1700000000000001'],
      ['conversation', 'print', 'jp-c1700000000000001'],
    ]) {
      const refused = await runJp(sandbox, args);
      assert.equal(refused.code, 1, `${args.join(' ')}: ${refused.stderr}`);
      assert.match(refused.stderr, /\.jp\/conversations is a symbolic link/);
    }
    assert.deepEqual(readdirSync(path.join(elsewhere, 'jp-c1700000000000001')), ['events.ndjson']);
  });

  it('a file: named, not an internal error', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, helloScript);
    const conversations = path.join(sandbox.workspace, '.jp', 'conversations');
    rmSync(conversations, { recursive: true });
    writeFileSync(conversations, 'not a directory');
    const run = await runJp(sandbox, ['query', ...script, 'hello']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /\.jp\/conversations is a file, not the directory jp keeps conversations in/);
    assertNoBugReport(run);
  });
});

describe('system errors', () => {
  it('EROFS: a read-only workspace is named, with the fix', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, helloScript);
    const run = await runWrapped(
      sandbox,
      [
        'bwrap',
        '--dev-bind',
        '/',
        '/',
        '--ro-bind',
        sandbox.workspace,
        sandbox.workspace,
        '--chdir',
        sandbox.workspace,
      ],
      ['query', ...script, 'hello'],
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /error: cannot write .*\.jp\/conversations.*: the file system is read-only/);
    assertNoBugReport(run);
  });

  it('EACCES: user-local state jp may not write is named, with the fix', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, helloScript);
    assert.equal((await runJp(sandbox, ['query', ...script, 'hello'])).code, 0);
    const locks = path.join(sandbox.userDirectory(), 'locks');
    chmodSync(locks, 0o500);
    // root may write anything: run jp as another user then, who owns the sandbox.
    const asUser = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : ['env'];
    if (process.getuid?.() === 0) {
      // The first query's server may still be writing Node's compile cache as it exits: a file can
      // vanish under chown -R. Try again until a pass sees a still tree.
      for (let attempt = 1; ; attempt++) {
        try {
          execFileSync('chown', ['-R', '65534:65534', sandbox.root], { stdio: 'pipe' });
          break;
        } catch (error) {
          if (attempt === 20) throw error;
          await sleep(100);
        }
      }
    }
    const run = await runWrapped(sandbox, asUser, ['query', ...script, 'hello again']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`error: permission denied on ${locks}/`));
    assert.match(run.stderr, /ls -ld/);
    assertNoBugReport(run);
    chmodSync(locks, 0o700);
  });

  it('EADDRINUSE: a directory at the socket path is named, with the fix', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, helloScript);
    assert.equal((await runJp(sandbox, ['query', ...script, 'hello'])).code, 0);
    const [conversationId] = conversationIds(sandbox);
    const socketPath = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.sock`);
    mkdirSync(path.join(socketPath, 'inside'), { recursive: true });
    const run = await runJp(sandbox, ['query', ...script, `--id=${conversationId}`, 'hello again']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`cannot listen on the socket ${socketPath}: something else is at that path`));
    assertNoBugReport(run);
  });

  it('EMFILE: under every descriptor limit Node itself starts under, a query answers or names the cause, with the fix', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, helloScript);
    const underLimit = (limit: number): string[] => ['/bin/sh', '-c', `ulimit -n ${limit} && exec "$@"`, 'sh'];
    // Under a limit below its own floor (22 descriptors on Node 24, 19 on Node 20, measured) Node cannot run any
    // program: it crashes starting up, or cannot open its main module. No code of jp runs there.
    const emptyProgram = sandbox.write('empty.mjs', '');
    const nodeRuns = (limit: number): boolean =>
      spawnSync(underLimit(limit)[0]!, [...underLimit(limit).slice(1), process.execPath, emptyProgram], {
        stdio: 'ignore',
      }).status === 0;
    let limit = 8;
    while (!nodeRuns(limit)) {
      limit += 1;
      assert.ok(limit < 64, 'Node runs no program under any limit below 64 descriptors');
    }
    // Each limit up to the first that is enough for a whole query: the client loading its code,
    // starting the query server (its early start and the run's own), the server loading its code.
    const failed: number[] = [];
    for (; ; limit += 1) {
      assert.ok(limit < 128, `a query still fails under ulimit -n ${limit}`);
      const run = await runWrapped(sandbox, underLimit(limit), ['query', ...script, 'hello']);
      if (run.code === 0) {
        assert.equal(run.stdout, 'hello back\n');
        break;
      }
      failed.push(limit);
      assert.equal(run.code, 1, `ulimit -n ${limit}: ${run.stderr}`);
      // The error and its fix end what jp says, whichever process ran out (a query server's own
      // error reaches the client as its readiness message, not as its log's last lines).
      assert.match(
        run.stderr,
        /(^|\n)error: too many open files[^\n]*: the per-process limit \(ulimit -n\) is reached\n {2}Raise the limit \(`ulimit -n 1024` or more\) and run again\.\n$/,
        `ulimit -n ${limit}: ${run.stderr}`,
      );
      assertNoBugReport(run);
    }
    assert.notEqual(
      failed.length,
      0,
      `ulimit -n ${limit}, the lowest limit Node runs a program under, is enough for a query: this test covers nothing`,
    );
  });
});

describe('an address-space limit (ulimit -v 4000000)', () => {
  it('a query through the server runs; with --no-server it says exactly why it cannot', async () => {
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [textStep('hello under a limit')] });
    cleanup.add(() => provider.close());
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    sandbox.env = { ...sandbox.env, ...model.env };
    const limited = ['/bin/sh', '-c', 'ulimit -v 4000000 && exec "$@"', 'sh'];
    const run = await runWrapped(sandbox, limited, ['query', ...model.args, 'hello']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'hello under a limit\n');
    const inProcess = await runWrapped(sandbox, limited, ['query', '--no-server', '--new', ...model.args, 'hello']);
    assert.equal(inProcess.code, 1, inProcess.stderr);
    assert.match(inProcess.stderr, /cannot reach a provider under this address-space limit \(ulimit -v\)/);
    assert.match(inProcess.stderr, /NODE_OPTIONS=--disable-wasm-trap-handler/);
    assertNoBugReport(inProcess);
  });
});

describe('a provider URL with a port fetch refuses', () => {
  it('fails at once (exit 1), with no retry', async () => {
    const sandbox = cleanup.sandbox();
    const model = fakeModelArguments('openai-chat', 'http://127.0.0.1:1/v1');
    const run = await runJp(sandbox, ['query', ...model.args, 'hello'], { env: model.env });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /fetch refuses to connect to that port \(bad port/);
    assert.doesNotMatch(run.stderr, /retrying in/);
  });
});
