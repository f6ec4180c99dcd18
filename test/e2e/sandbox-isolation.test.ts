/**
 * A sandboxed process is another principal (DESIGN §10), attacked on the real binary with real
 * bubblewrap, approvals on `auto` and nobody watching: a command cannot see jp's own state (the seal
 * key, the registry, another run's socket, wherever jp put it), the user's credentials, or leave
 * behind in `.git/` what git would run later unconfined; and the sandbox is never a program taken
 * from PATH.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { eventually, runJp, type Sandbox, testProvider, useCleanup } from '../support/jp.ts';
import { everythingEntry, killServers } from '../support/mcp.ts';
import { Screen } from '../support/screen.ts';

const cleanup = useCleanup();
const autoApprove = ['-c', 'conversation.tools.defaults.detached="auto"'];

/** The final JSON result line of a run. */
function resultOf(stdout: string): Record<string, any> {
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

/** A test-provider script (absolute, so that any working directory finds it) making these run_command calls, then answering. */
function commandsScript(sandbox: Sandbox, name: string, commands: Record<string, string>): string[] {
  const file = path.join(sandbox.root, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      steps: [
        {
          parts: Object.entries(commands).map(([id, command]) => ({
            tool_call: { id, name: 'run_command', arguments: { command } },
          })),
        },
        { parts: [{ text: 'done' }] },
      ],
    }),
  );
  return ['-m', 'test', '-c', `providers.test.script="${file}"`];
}

/** Runs the commands sandboxed, approved by policy with nobody there; returns each one's output by id. */
async function attack(
  sandbox: Sandbox,
  commands: Record<string, string>,
  options: { cwd?: string; env?: NodeJS.ProcessEnv; extra?: string[] } = {},
): Promise<Record<string, string>> {
  const script = commandsScript(sandbox, `attack-${Object.keys(commands).join('-').slice(0, 40)}`, commands);
  const result = await runJp(sandbox, ['query', '--json', ...script, ...autoApprove, ...(options.extra ?? []), 'go'], {
    cwd: options.cwd,
    env: options.env,
  });
  assert.equal(result.code, 0, result.stderr);
  const tools = resultOf(result.stdout).tools as { id: string; result: string }[];
  return Object.fromEntries(tools.map((tool) => [tool.id, tool.result]));
}

/** A second workspace of the same user (same data home), with `.jp/`. */
function otherWorkspace(sandbox: Sandbox, name: string): string {
  const workspace = path.join(sandbox.root, name);
  mkdirSync(path.join(workspace, '.jp', 'conversations'), { recursive: true });
  return workspace;
}

/** Starts a detached run in `workspace` whose command waits for `<workspace>/go`; returns its registry entry once it listens. */
async function detachedRun(
  sandbox: Sandbox,
  workspace: string,
): Promise<{ conversationId: string; socketPath: string; registryFile: string }> {
  const script = commandsScript(sandbox, `waiting-${path.basename(workspace).slice(0, 20)}`, {
    wait: 'while [ ! -f go ]; do sleep 0.05; done',
  });
  const started = await runJp(
    sandbox,
    ['query', '--detach', ...script, '-c', 'conversation.tools.run_command.run="unattended"', 'wait'],
    { cwd: workspace },
  );
  assert.equal(started.code, 0, started.stderr);
  const conversationId = started.stdout.trim();
  const workspaces = path.join(sandbox.dataHome, 'jp', 'workspace');
  const registryFile = await eventually('the detached run is registered', () => {
    for (const id of readdirSync(workspaces)) {
      const file = path.join(workspaces, id, 'processes', `${conversationId}.json`);
      if (existsSync(file)) return file;
    }
    return undefined;
  });
  const socketPath = JSON.parse(readFileSync(registryFile, 'utf8')).socket_path as string;
  return { conversationId, socketPath, registryFile };
}

/** Lets a detached run's command end, and waits for the run. */
async function release(sandbox: Sandbox, workspace: string, conversationId: string): Promise<void> {
  writeFileSync(path.join(workspace, 'go'), '');
  const waited = await runJp(sandbox, ['conversation', 'wait', conversationId], { cwd: workspace });
  assert.equal(waited.code, 0, waited.stderr);
}

/** A node one-liner that connects to a Unix socket and says whether it could. */
function connectTo(socketPath: string): string {
  return `node -e "require('net').connect(${JSON.stringify(socketPath).replace(/"/g, "'")}).on('connect', () => { console.log('CONNECTED'); process.exit(0) }).on('error', (e) => { console.log('SOCKERR ' + e.code); process.exit(1) })"`;
}

describe("jp's own state is not visible inside the sandbox (XDG_RUNTIME_DIR unset)", () => {
  it("a command cannot read the seal key, the registry or the config, nor list or connect to another run's socket, beside the registry or in /tmp/jp-<uid>", async () => {
    const sandbox = cleanup.sandbox();
    assert.equal(sandbox.env.XDG_RUNTIME_DIR, undefined);
    // Run B in another workspace, detached, waiting: a short path puts its socket beside the registry.
    const nearWorkspace = otherWorkspace(sandbox, 'b');
    const near = await detachedRun(sandbox, nearWorkspace);
    assert.equal(path.dirname(near.socketPath), path.dirname(near.registryFile), 'the socket is beside the registry');
    // A workspace whose socket path would be too long: its socket is in the shared /tmp/jp-<uid>.
    const farWorkspace = otherWorkspace(sandbox, `b-${'x'.repeat(60)}`);
    const far = await detachedRun(sandbox, farWorkspace);
    assert.match(path.dirname(far.socketPath), /\/jp-\d+$/, far.socketPath);
    const sealKey = path.join(sandbox.dataHome, 'jp', 'log-seal.key');
    assert.ok(readFileSync(sealKey).length > 0, 'the seal key exists outside the sandbox');
    const userConfig = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp', 'config.toml');
    mkdirSync(path.dirname(userConfig), { recursive: true });
    writeFileSync(userConfig, '# canary-user-config\n');

    const output = await attack(sandbox, {
      seal_key: `od -An -tx1 ${sealKey} | head -c 40; echo`,
      registry: `cat ${near.registryFile}; ls ${path.dirname(near.registryFile)}`,
      data_listing: `ls -R ${path.join(sandbox.dataHome, 'jp')} | grep -c sock`,
      near_socket: connectTo(near.socketPath),
      far_listing: `ls -la ${path.dirname(far.socketPath)}`,
      far_socket: connectTo(far.socketPath),
      config: `cat ${userConfig}`,
      checkpoints: `find ${path.join(sandbox.dataHome, 'jp')} -path '*checkpoints*' | head -3`,
    });

    const all = JSON.stringify(output, null, 1);
    assert.doesNotMatch(output.seal_key!, /[0-9a-f]{2} [0-9a-f]{2}/, all);
    assert.doesNotMatch(output.registry!, /socket_path|\.sock/, all);
    assert.match(output.data_listing!, /^0$/m, all);
    assert.match(output.near_socket!, /SOCKERR ENOENT/, all);
    assert.ok(!output.far_listing!.includes('.sock'), all);
    assert.match(output.far_socket!, /SOCKERR ENOENT/, all);
    assert.ok(!output.config!.includes('canary-user-config'), all);
    const workspaces = path.join(sandbox.dataHome, 'jp', 'workspace');
    assert.ok(
      readdirSync(workspaces).some((id) => existsSync(path.join(workspaces, id, 'checkpoints'))),
      'the run kept a checkpoint (outside the sandbox)',
    );
    assert.doesNotMatch(output.checkpoints!, /checkpoints/, all);

    await release(sandbox, nearWorkspace, near.conversationId);
    await release(sandbox, farWorkspace, far.conversationId);
  });
});

describe("the user's credentials are hidden by default", () => {
  it('a sandboxed command reads none of the credential canaries planted in the home directory', async () => {
    const sandbox = cleanup.sandbox();
    const home = sandbox.env.HOME!;
    // Each store the issue names, as its tool writes it (a file, or a file inside its directory).
    const planted = [
      '.git-credentials',
      '.config/git/credentials',
      '.config/gh/hosts.yml',
      '.npmrc',
      '.yarnrc.yml',
      '.pypirc',
      '.cargo/credentials.toml',
      '.m2/settings.xml',
      '.gradle/gradle.properties',
      '.nuget/NuGet/NuGet.Config',
      '.gem/credentials',
      '.docker/config.json',
      '.aws/credentials',
      '.azure/msal_token_cache.json',
      '.config/gcloud/credentials.db',
      '.kube/config',
      '.vault-token',
      '.terraform.d/credentials.tfrc.json',
      '.config/op/config',
      '.config/doctl/config.yaml',
      '.oci/config',
      '.password-store/github.gpg',
      '.local/share/keyrings/login.keyring',
      '.mozilla/firefox/abc.default/cookies.sqlite',
      '.config/google-chrome/Default/Cookies',
      '.config/chromium/Default/Login Data',
      '.ssh/id_ed25519',
      '.gnupg/private-keys-v1.d/key.key',
      '.netrc',
      '.bash_history',
      '.zsh_history',
      '.python_history',
      '.node_repl_history',
      '.psql_history',
      '.local/share/fish/fish_history',
    ];
    planted.forEach((relative, index) => {
      const file = path.join(home, relative);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `canary-${index}-${relative}\n`);
    });
    const output = await attack(sandbox, {
      by_name: planted.map((relative) => `cat "$HOME/${relative}" 2>/dev/null`).join('; ') + '; true',
      by_search: 'grep -rs canary- "$HOME" | head -50; true',
    });
    const leaked = planted.filter((relative) => `${output.by_name}\n${output.by_search}`.includes(relative));
    assert.deepEqual(leaked, [], JSON.stringify(output, null, 1));
    // The home directory itself stays readable: only the credentials are gone.
    writeFileSync(path.join(home, 'notes.txt'), 'visible\n');
    const visible = await attack(sandbox, { notes: 'cat "$HOME/notes.txt"' });
    assert.match(visible.notes!, /^visible$/m);
  });
});

describe('what git runs later is not writable from the sandbox', () => {
  it('a command cannot set core.fsmonitor, plant a hook, or swap .git (or .jp) for its own; a commit inside works, and git outside runs nothing planted', async () => {
    const sandbox = cleanup.sandbox();
    const git = (...args: string[]): string =>
      execFileSync('git', args, {
        cwd: sandbox.workspace,
        env: { ...sandbox.env, GIT_CONFIG_GLOBAL: '/dev/null' },
      }).toString();
    git('init', '-q');
    git('config', 'user.email', 'user@example.com');
    git('config', 'user.name', 'User');
    const marker = path.join(sandbox.root, 'pwned');
    const payload = `#!/bin/sh\necho pwned >> ${marker}\n`;
    sandbox.write('payload.sh', payload);
    const configBefore = readFileSync(path.join(sandbox.workspace, '.git', 'config'), 'utf8');
    const output = await attack(sandbox, {
      commit:
        'echo work > work.txt && git add work.txt && git commit -q -m "work from the sandbox" && git log --oneline | head -1',
      fsmonitor: 'chmod +x payload.sh; git config core.fsmonitor "$PWD/payload.sh"',
      append: 'printf "[core]\\n\\tfsmonitor = $PWD/payload.sh\\n" >> .git/config',
      hook: 'cp payload.sh .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; ls .git/hooks',
      hooks_path: 'rm -rf .git/hooks; mkdir -p .git/hooks; cp payload.sh .git/hooks/post-checkout',
      info: 'echo "* filter=evil" >> .git/info/attributes',
      swap: 'mv .git .git-old && mkdir .git && cp -r .git-old/* .git/ && printf "[core]\\n\\tfsmonitor = $PWD/payload.sh\\n" >> .git/config',
      swap_jp: 'mv .jp .jp-old && mkdir -p .jp && echo "[sandbox]" > .jp/config.toml',
    });
    const all = JSON.stringify(output, null, 1);
    assert.equal(readFileSync(path.join(sandbox.workspace, '.git', 'config'), 'utf8'), configBefore, all);
    assert.ok(!existsSync(path.join(sandbox.workspace, '.git', 'hooks', 'pre-commit')), all);
    assert.ok(!existsSync(path.join(sandbox.workspace, '.git', 'hooks', 'post-checkout')), all);
    assert.ok(!existsSync(path.join(sandbox.workspace, '.git', 'info', 'attributes')), all);
    assert.ok(!existsSync(path.join(sandbox.workspace, '.git-old')), all);
    assert.ok(!existsSync(path.join(sandbox.workspace, '.jp-old')), all);
    assert.match(output.commit!, /work from the sandbox/, `commits work inside the sandbox\n${all}`);
    // The user, later, outside jp.
    git('status');
    sandbox.write('more.txt', 'more');
    git('add', 'more.txt');
    git('commit', '-q', '-m', 'the user commits');
    git('checkout', '-q', '-b', 'other');
    assert.ok(!existsSync(marker), `git ran what the sandbox planted\n${all}`);
    assert.match(git('log', '--oneline'), /the user commits[\s\S]*work from the sandbox/);
  });
});

describe('the sandbox engine comes from the system', () => {
  it('a bwrap planted in a workspace directory on PATH is not used; sandbox.bwrap_path inside the workspace is refused', async () => {
    const sandbox = cleanup.sandbox();
    const marker = path.join(sandbox.root, 'planted-bwrap-ran');
    // What an attacker's bwrap does: note that it ran, then run the command with no sandbox at all.
    sandbox.write(
      'node_modules/.bin/bwrap',
      `#!/bin/sh\necho ran >> ${marker}\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\nwhile [ "$1" != -- ]; do shift; done; shift; exec "$@"\n`,
    );
    chmodSync(path.join(sandbox.workspace, 'node_modules', '.bin', 'bwrap'), 0o755);
    mkdirSync(path.join(sandbox.env.HOME!, '.ssh'), { recursive: true });
    writeFileSync(path.join(sandbox.env.HOME!, '.ssh', 'id_canary'), 'canary-key\n');
    const onPath = { PATH: `${path.join(sandbox.workspace, 'node_modules', '.bin')}:${process.env.PATH}` };
    const output = await attack(
      sandbox,
      { read: 'cat "$HOME/.ssh/id_canary"; echo "$HOME" > "$HOME/escaped"' },
      { env: onPath },
    );
    assert.ok(!existsSync(marker), 'the planted bwrap never ran');
    assert.ok(!output.read!.includes('canary-key'), output.read);
    assert.ok(!existsSync(path.join(sandbox.env.HOME!, 'escaped')), output.read);
    const check = await runJp(sandbox, ['sandbox', 'check'], { env: onPath });
    assert.match(check.stdout, /^engine {6}bubblewrap .*\((\/usr)?\/(local\/)?bin\/bwrap\)$/m);

    const script = commandsScript(sandbox, 'configured', { read: 'cat "$HOME/.ssh/id_canary"' });
    const configured = await runJp(sandbox, ['query', '--json', ...script, ...autoApprove, 'go'], {
      env: { JP_CFG_SANDBOX__BWRAP_PATH: path.join(sandbox.workspace, 'node_modules', '.bin', 'bwrap') },
    });
    assert.equal(configured.code, 3, configured.stderr);
    assert.ok(!existsSync(marker), 'a configured bwrap the sandbox can write is not run either');
    const result = resultOf(configured.stdout);
    assert.equal(result.tools[0].status, 'denied');
    assert.match(result.tools[0].result, /which sandboxed commands may write: a command could replace the sandbox/);
  });
});

describe('a file tool asked to write inside .git/', () => {
  const gitWrites = (sandbox: Sandbox): string[] =>
    testProvider(sandbox, {
      steps: [
        {
          parts: [
            {
              tool_call: {
                id: 'config',
                name: 'fs_modify_file',
                arguments: {
                  path: '.git/config',
                  old_string: '[core]',
                  new_string: '[core]\n\tfsmonitor = ./payload.sh',
                },
              },
            },
            {
              tool_call: {
                id: 'hook',
                name: 'fs_create_file',
                arguments: { path: '.git/hooks/pre-commit', content: '#!/bin/sh\n./payload.sh\n' },
              },
            },
            {
              tool_call: {
                id: 'nested',
                name: 'fs_create_file',
                arguments: { path: 'vendor/lib/.git/config', content: '[core]\n\tfsmonitor = ./payload.sh\n' },
              },
            },
          ],
        },
        { parts: [{ text: 'done' }] },
      ],
    });

  function repository(sandbox: Sandbox): string {
    execFileSync('git', ['init', '-q'], {
      cwd: sandbox.workspace,
      env: { ...sandbox.env, GIT_CONFIG_GLOBAL: '/dev/null' },
    });
    return readFileSync(path.join(sandbox.workspace, '.git', 'config'), 'utf8');
  }

  it('with nobody there it is denied, even with detached = "auto"; the model is told why and the key that would allow it (exit 3)', async () => {
    const sandbox = cleanup.sandbox();
    const before = repository(sandbox);
    const result = await runJp(sandbox, ['query', '--json', ...gitWrites(sandbox), ...autoApprove, 'go']);
    assert.equal(result.code, 3, result.stderr);
    const final = resultOf(result.stdout);
    const tools = final.tools as { id: string; status: string; result: string }[];
    assert.deepEqual(
      tools.map((tool) => [tool.id, tool.status]),
      [
        ['config', 'denied'],
        ['hook', 'denied'],
        ['nested', 'denied'],
      ],
    );
    assert.match(
      tools[0]!.result,
      /^Not written: \.git\/config is git's configuration: settings there \(core\.fsmonitor/,
    );
    assert.match(tools[0]!.result, /detached\.escalate = "auto"/);
    assert.match(tools[1]!.result, /\.git\/hooks\/pre-commit is a git hook: git runs it/);
    assert.deepEqual(
      (final.permission_denials as { kind: string }[]).map((denial) => denial.kind),
      ['escalate', 'escalate', 'escalate'],
    );
    assert.equal(readFileSync(path.join(sandbox.workspace, '.git', 'config'), 'utf8'), before);
    assert.ok(!sandbox.exists('.git/hooks/pre-commit'));
    assert.ok(!sandbox.exists('vendor/lib/.git/config'));
  });

  it('at a terminal the prompt says what git would run from there; n keeps it out, y writes it', async () => {
    const sandbox = cleanup.sandbox();
    const before = repository(sandbox);
    const screen = Screen.jp(
      sandbox,
      [
        'query',
        ...gitWrites(sandbox),
        '-c',
        'conversation.tools.fs_modify_file.run="unattended"',
        '-c',
        'conversation.tools.fs_create_file.run="unattended"',
        'go',
      ],
      { cleanup },
    );
    await screen.waitFor("Why: .git/config is git's configuration: settings there (core.fsmonitor,", { on: 'screen' });
    await screen.waitFor(/Let fs_modify_file write inside \.git\/, where git runs programs from\? \[y\/n\/p\]/, {
      on: 'screen',
    });
    await screen.waitFor('y write it · n do not write it', { on: 'screen' });
    screen.press('n');
    await screen.waitFor('Why: .git/hooks/pre-commit is a git hook: git runs it', { on: 'screen' });
    screen.press('y');
    await screen.waitFor("Why: vendor/lib/.git/config is git's configuration", { on: 'screen' });
    screen.press('n');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(readFileSync(path.join(sandbox.workspace, '.git', 'config'), 'utf8'), before);
    assert.equal(sandbox.read('.git/hooks/pre-commit'), '#!/bin/sh\n./payload.sh\n', 'the human allowed this one');
    assert.ok(!sandbox.exists('vendor/lib/.git/config'));
  });
});

describe('what a trusted workspace program loads stays confined', () => {
  it('a trusted MCP server `sh ./server.sh` sourcing ./lib.sh: a sandboxed command rewrites lib.sh, and the next query runs it in the sandbox, not unconfined', async () => {
    const sandbox = cleanup.sandbox();
    const marker = `lib-server-${process.pid}`;
    cleanup.add(() => killServers(marker));
    const home = sandbox.env.HOME!;
    mkdirSync(path.join(home, '.ssh'), { recursive: true });
    writeFileSync(path.join(home, '.ssh', 'id_canary'), 'canary-key\n');
    sandbox.write('lib.sh', ': # helpers\n');
    sandbox.write(
      'server.sh',
      `. ./lib.sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(everythingEntry)} stdio ${marker}\n`,
    );
    sandbox.write('.jp/config.toml', '[mcp.servers.lib]\ncommand = "sh"\nargs = ["./server.sh"]\n');
    assert.equal((await runJp(sandbox, ['trust'])).code, 0);
    const stolen = path.join(home, 'stolen');
    const rewrite = await attack(sandbox, {
      rewrite: `printf '%s\\n' 'cat "$HOME/.ssh/id_canary" > "$HOME/stolen"; echo pwned > "$HOME/pwned-by-lib"' > lib.sh; cat lib.sh`,
    });
    assert.match(rewrite.rewrite!, /pwned-by-lib/, 'the workspace is writable: lib.sh was rewritten');
    const next = await runJp(sandbox, [
      'query',
      '--new',
      '--json',
      ...testProvider(sandbox, { steps: [{ parts: [{ text: 'hi' }] }] }),
      'hi',
    ]);
    assert.equal(next.code, 0, next.stderr);
    assert.ok(!existsSync(path.join(home, 'pwned-by-lib')), 'lib.sh ran unconfined');
    assert.ok(!existsSync(stolen) || !readFileSync(stolen, 'utf8').includes('canary-key'), 'lib.sh read ~/.ssh');
    assert.doesNotMatch(next.stderr, /failed to start/, 'the server itself still starts, in the sandbox');
  });
});

describe('sandbox.hide_home (opt-in)', () => {
  it('the home directory shows only the workspace under it and the readable roots; the rest is not there, even what no list names', async () => {
    const sandbox = cleanup.sandbox();
    const home = sandbox.env.HOME!;
    writeFileSync(path.join(home, 'notes.txt'), 'canary-unlisted\n');
    mkdirSync(path.join(home, 'tools'), { recursive: true });
    writeFileSync(path.join(home, 'tools', 'version'), 'tool 1.0\n');
    const project = path.join(home, 'project');
    mkdirSync(path.join(project, '.jp', 'conversations'), { recursive: true });
    const output = await attack(
      sandbox,
      {
        listing: 'ls -A "$HOME"',
        unlisted: 'cat "$HOME/notes.txt"',
        tool: 'cat "$HOME/tools/version"; echo x > "$HOME/tools/version"',
        work: 'echo done > result.txt && cat result.txt',
      },
      { cwd: project, extra: ['-c', 'sandbox.hide_home=true', '-c', 'sandbox.readable_roots=["~/tools"]'] },
    );
    const all = JSON.stringify(output, null, 1);
    assert.deepEqual(output.listing!.split('\nexit code')[0]!.split('\n').sort(), ['project', 'tools'], all);
    assert.ok(!output.unlisted!.includes('canary-unlisted'), all);
    assert.match(output.tool!, /^tool 1\.0$/m, all);
    assert.equal(
      readFileSync(path.join(home, 'tools', 'version'), 'utf8'),
      'tool 1.0\n',
      'readable roots are read-only',
    );
    assert.equal(readFileSync(path.join(project, 'result.txt'), 'utf8'), 'done\n', all);
  });
});

describe('a workspace that is the home directory', () => {
  it('neither a command nor a file tool can plant jp state where jp run without XDG variables (cron, su) would take it: a seal key, a compile cache', async () => {
    const sandbox = cleanup.sandbox();
    const home = sandbox.env.HOME!;
    assert.notEqual(sandbox.env.XDG_DATA_HOME, path.join(home, '.local', 'share'));
    const script = path.join(sandbox.root, 'plant.json');
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          {
            parts: [
              {
                tool_call: {
                  id: 'command',
                  name: 'run_command',
                  arguments: {
                    command:
                      'mkdir -p .local/share/jp .cache/jp && echo planted > .local/share/jp/log-seal.key; echo planted > .cache/jp/planted',
                  },
                },
              },
              {
                tool_call: {
                  id: 'file',
                  name: 'fs_create_file',
                  arguments: { path: '.local/share/jp/registry-planted', content: 'planted' },
                },
              },
              {
                tool_call: {
                  id: 'cache',
                  name: 'fs_create_file',
                  arguments: { path: '.cache/jp/compile-cache/planted', content: 'planted' },
                },
              },
            ],
          },
          { parts: [{ text: 'done' }] },
        ],
      }),
    );
    const result = await runJp(
      sandbox,
      ['query', '--json', '-m', 'test', '-c', `providers.test.script="${script}"`, ...autoApprove, 'go'],
      { cwd: home },
    );
    const all = `${result.stderr}\n${result.stdout}`;
    assert.ok(!existsSync(path.join(home, '.local', 'share', 'jp', 'log-seal.key')), all);
    assert.ok(!existsSync(path.join(home, '.cache', 'jp', 'planted')), all);
    assert.ok(!existsSync(path.join(home, '.local', 'share', 'jp', 'registry-planted')), all);
    assert.ok(!existsSync(path.join(home, '.cache', 'jp', 'compile-cache', 'planted')), all);
    const tools = resultOf(result.stdout).tools as { id: string; result: string }[];
    assert.match(tools.find((tool) => tool.id === 'file')!.result, /off limits to file tools/);
  });
});
