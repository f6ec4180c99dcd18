/**
 * The command sandbox attacked on the real binary with real bubblewrap (DESIGN §10), approvals on
 * `auto` and nobody watching: every way out fails and the workspace write succeeds. Then the ways
 * out that are allowed: a sandbox that cannot start fails closed (never unconfined), and leaving
 * it is an `escalate` inquiry, denied headless, asked at a terminal, deferred and continued.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { startFakeProvider, textStep, toolStep } from '../support/fake-provider.ts';
import {
  collect,
  eventually,
  fakeModelArguments,
  processesMatching,
  runJp,
  type Sandbox,
  startJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';
import { everythingStdio, killServers, serverProcesses, writeUserConfig } from '../support/mcp.ts';
import { Screen } from '../support/screen.ts';

const cleanup = useCleanup();
const canary = 'canary-ssh-key-7741';

/** The final JSON result line of a run. */
function resultOf(stdout: string): Record<string, any> {
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

/** A home with a key in ~/.ssh, a user jp config, and a directory beside the workspace. */
function victim(sandbox: Sandbox): { home: string; userConfig: string; sibling: string } {
  const home = sandbox.env.HOME!;
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  writeFileSync(path.join(home, '.ssh', 'id_canary'), canary);
  const userConfig = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp', 'config.toml');
  mkdirSync(path.dirname(userConfig), { recursive: true });
  writeFileSync(userConfig, "# the user's own\n");
  const sibling = path.join(sandbox.root, 'sibling');
  mkdirSync(sibling);
  writeFileSync(sandbox.write('.jp/config.toml', '# workspace\n'), '# workspace\n');
  return { home, userConfig, sibling };
}

function sleepers(seconds: number): number[] {
  return processesMatching('sleep', String(seconds)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] === String(seconds);
    } catch {
      return false;
    }
  });
}

describe('a sandboxed command with approvals on auto (workspace-write, the default)', () => {
  it('cannot write $HOME, a sibling, .jp/config.toml or the user jp config, read ~/.ssh, reach the provider, or escape by symlink, /proc/<jp>/root or setsid; the workspace write succeeds', async () => {
    const sandbox = cleanup.sandbox();
    const { home, userConfig, sibling } = victim(sandbox);
    symlinkSync(sibling, path.join(sandbox.workspace, 'link-out'));
    cleanup.add(() => {
      for (const pid of sleepers(987321)) process.kill(pid, 'SIGKILL');
    });
    let serverPid = 0;
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: (_request, index) => {
        if (index > 0) return textStep('Done.');
        // The query server's pid, from its registry entry (written before it calls the model).
        const processes = path.join(sandbox.userDirectory(), 'processes');
        serverPid = JSON.parse(
          readFileSync(path.join(processes, readdirSync(processes).find((name) => name.endsWith('.json'))!), 'utf8'),
        ).pid;
        const attacks: Record<string, string> = {
          home: 'echo pwned > "$HOME/pwned"',
          sibling: 'echo pwned > ../sibling/pwned',
          workspace_config: 'echo "[sandbox]" >> .jp/config.toml',
          user_config: 'echo "[sandbox]" >> "$XDG_CONFIG_HOME/jp/config.toml"',
          ssh: 'cat "$HOME/.ssh/id_canary"',
          // As root (these tests run as root here), capabilities would let it unmount what hides ~/.ssh.
          unmount: 'umount "$HOME/.ssh"; cat "$HOME/.ssh/id_canary"; grep CapEff /proc/self/status',
          network: `node -e "require('net').connect(${provider.port}, '127.0.0.1').on('connect', () => { console.log('CONNECTED'); process.exit(0) }).on('error', (e) => { console.log('NETERR ' + e.code); process.exit(1) })"`,
          symlink: 'echo pwned > link-out/pwned',
          proc_root: `echo pwned > /proc/${serverPid}/root${home}/pwned-proc; ls /proc/${serverPid}`,
          setsid: `setsid env -i /bin/sh -c 'echo $$ > child.pid; exec sleep 987321' & while [ ! -s child.pid ]; do sleep 0.05; done; echo started`,
          inside: 'echo ok > inside.txt && echo "$TMPDIR" && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t"',
        };
        return toolStep(
          Object.entries(attacks).map(([id, command]) => ({ id, name: 'run_command', arguments: { command } })),
        );
      },
    });
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const result = await runJp(
      sandbox,
      ['query', '--json', ...model.args, '-c', 'conversation.tools.defaults.detached="auto"', 'attack'],
      { env: model.env },
    );
    assert.equal(result.code, 0, result.stderr);
    const tools = resultOf(result.stdout).tools as { id: string; result: string; status: string }[];
    const output = (id: string): string => tools.find((tool) => tool.id === id)!.result;

    assert.ok(!existsSync(path.join(home, 'pwned')), output('home'));
    assert.match(output('home'), /Read-only file system/);
    assert.match(output('home'), /escalate/, 'the model is told how to ask to leave the sandbox');
    assert.ok(!existsSync(path.join(sibling, 'pwned')), output('sibling'));
    assert.equal(
      readFileSync(path.join(sandbox.workspace, '.jp', 'config.toml'), 'utf8'),
      '# workspace\n',
      output('workspace_config'),
    );
    assert.equal(readFileSync(userConfig, 'utf8'), "# the user's own\n", output('user_config'));
    assert.ok(!output('ssh').includes(canary), output('ssh'));
    assert.ok(!output('unmount').includes(canary), output('unmount'));
    assert.match(output('unmount'), /CapEff:\s+0+\n/);
    assert.match(output('network'), /NETERR/);
    assert.ok(!output('network').includes('CONNECTED'));
    assert.ok(!existsSync(path.join(sibling, 'pwned')), output('symlink'));
    assert.ok(serverPid > 0);
    assert.ok(!existsSync(path.join(home, 'pwned-proc')), output('proc_root'));
    assert.match(output('setsid'), /started/);
    await eventually('the setsid child died with the sandboxed command', () => sleepers(987321).length === 0);

    assert.equal(readFileSync(path.join(sandbox.workspace, 'inside.txt'), 'utf8'), 'ok\n', output('inside'));
    assert.match(output('inside'), /^\/.*jp-sandbox-.*\ntmp\nexit code 0$/m);
    const privateTemporary = output('inside').split('\n')[0]!;
    assert.ok(!existsSync(privateTemporary), 'the private TMPDIR is removed after the command');
  });

  it('the tool header says how the command is confined', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'true' } } }] },
        { parts: [{ text: 'ok' }] },
      ],
    });
    const result = await runJp(sandbox, [
      'query',
      ...script,
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'go',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /\[tool\] run_command \[sandbox: workspace-write, no network\] \{"command":"true"\}/);
    const off = await runJp(sandbox, [
      'query',
      '--new',
      ...script,
      '--sandbox',
      'off',
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'go',
    ]);
    assert.match(off.stderr, /\[tool\] run_command \[sandbox: off\]/);
    const bogus = await runJp(sandbox, ['query', '--new', ...script, '--sandbox', 'none', 'go']);
    assert.equal(bogus.code, 2);
    assert.match(bogus.stderr, /--sandbox "none" is not a sandbox mode/);
    assert.match(bogus.stderr, /workspace-write, read-only, off/);
  });

  it('read-only: the workspace is not writable either; sandbox.network lets the command reach the network', async () => {
    const sandbox = cleanup.sandbox();
    const provider = await startFakeProvider({
      wire: 'openai-chat',
      steps: (_request, index) =>
        index > 0
          ? textStep('Done.')
          : toolStep([
              { id: 'write', name: 'run_command', arguments: { command: 'echo x > inside.txt' } },
              {
                id: 'net',
                name: 'run_command',
                arguments: {
                  command: `node -e "require('net').connect(${provider.port}, '127.0.0.1').on('connect', () => { console.log('CONNECTED'); process.exit(0) }).on('error', (e) => { console.log('NETERR ' + e.code); process.exit(1) })"`,
                },
              },
            ]),
    });
    cleanup.add(() => provider.close());
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const result = await runJp(
      sandbox,
      [
        'query',
        '--json',
        ...model.args,
        '--sandbox',
        'read-only',
        '-c',
        'sandbox.network=true',
        '-c',
        'conversation.tools.defaults.detached="auto"',
        'go',
      ],
      { env: model.env },
    );
    const tools = resultOf(result.stdout).tools as { id: string; result: string }[];
    assert.ok(!sandbox.exists('inside.txt'), tools[0]!.result);
    assert.match(tools[1]!.result, /CONNECTED/);
  });
});

describe('what a person sees of the sandbox in the config', () => {
  it('config show --effective run_command shows detached.escalate and the sandbox with the layer of each value', async () => {
    const sandbox = cleanup.sandbox();
    const text = await runJp(sandbox, [
      'config',
      'show',
      '--effective',
      'run_command',
      '--cfg',
      'sandbox.network=true',
      '--cfg',
      'conversation.tools.defaults.detached="auto"',
    ]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /^ {2}detached\.escalate {5}= deny {7}set by built-in/m,
      'the scalar shorthand does not set escalate',
    );
    assert.match(text.stdout, /^ {2}sandbox {15}= workspace-write, network$/m);
    assert.match(
      text.stdout,
      /^ {2}sandbox\.network {7}= true {7}set by sandbox\.network \(--cfg sandbox\.network=true\)$/m,
    );
    const json = await runJp(sandbox, ['config', 'show', '--effective', 'run_command', '--json']);
    const line = JSON.parse(json.stdout.trim());
    assert.equal(line.detached.escalate.policy, 'deny');
    assert.equal(line.sandbox.mode.value, 'workspace-write');
    assert.ok(line.sandbox.hidden_paths.builtin.includes('~/.ssh'));
  });
});

describe('a workspace that is the home directory', () => {
  it('a command cannot create the user jp config that does not exist yet (it would be trusted as the user own config)', async () => {
    const sandbox = cleanup.sandbox();
    const home = sandbox.env.HOME!;
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            {
              tool_call: {
                name: 'run_command',
                arguments: {
                  command:
                    'mkdir -p "$XDG_CONFIG_HOME/jp" && echo "[sandbox]" > "$XDG_CONFIG_HOME/jp/config.toml"; echo ok > in-home.txt',
                },
              },
            },
          ],
        },
        { parts: [{ text: 'ok' }] },
      ],
    });
    // No workspace above the home directory: the default workspace, whose tool root is the working directory.
    const env = { XDG_CONFIG_HOME: path.join(home, '.config') };
    const absoluteScript = script.map((argument) =>
      argument.replace('providers.test.script=', `providers.test.script=${sandbox.workspace}/`),
    );
    const result = await runJp(
      sandbox,
      ['query', '--json', ...absoluteScript, '-c', 'conversation.tools.defaults.detached="auto"', 'go'],
      { cwd: home, env },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      readFileSync(path.join(home, 'in-home.txt'), 'utf8'),
      'ok\n',
      'the home directory is the writable tool root',
    );
    assert.ok(!existsSync(path.join(home, '.config', 'jp', 'config.toml')), resultOf(result.stdout).tools[0].result);
  });
});

describe('a sandbox that cannot start fails closed', () => {
  it('with no bwrap where the config says, the command is not run; the model, stderr and the JSON warnings say why and how to fix it (exit 3)', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } } }] },
        { parts: [{ text: 'ok' }] },
      ],
    });
    const noBwrap = { JP_CFG_SANDBOX__BWRAP_PATH: path.join(sandbox.root, 'empty-bin', 'bwrap') };
    const json = await runJp(
      sandbox,
      ['query', '--json', ...script, '-c', 'conversation.tools.defaults.detached="auto"', 'go'],
      { env: noBwrap },
    );
    assert.equal(json.code, 3, json.stderr);
    assert.ok(!sandbox.exists('ran.txt'), 'never run unconfined');
    const final = resultOf(json.stdout);
    assert.equal(final.tools[0].status, 'denied');
    assert.match(
      final.tools[0].result,
      /sandbox is unavailable on this machine \(sandbox\.bwrap_path = ".*empty-bin\/bwrap" is not an executable file\)/,
    );
    assert.match(final.tools[0].result, /correct sandbox\.bwrap_path/);
    assert.equal(final.permission_denials[0].kind, 'escalate');
    const warning = (final.warnings as { code: string; message: string }[]).find(
      (entry) => entry.code === 'sandbox_unavailable',
    );
    assert.match(warning?.message ?? '', /not an executable file.*Fix: correct sandbox\.bwrap_path/);
    const text = await runJp(
      sandbox,
      ['query', '--new', ...script, '-c', 'conversation.tools.defaults.detached="auto"', 'go'],
      { env: noBwrap },
    );
    assert.equal(text.code, 3);
    assert.match(
      text.stderr,
      /the sandbox cannot start: sandbox\.bwrap_path = ".*" is not an executable file\. Fix: correct/,
    );
    assert.ok(!sandbox.exists('ran.txt'));
  });

  it('with user namespaces refused (a bwrap that fails as it does then), check and query name the cause and the sysctl', async () => {
    const sandbox = cleanup.sandbox();
    const bin = path.join(sandbox.root, 'restricted-bin');
    mkdirSync(bin);
    // What bwrap 0.8 prints on Ubuntu 24.04 with kernel.apparmor_restrict_unprivileged_userns=1.
    writeFileSync(
      path.join(bin, 'bwrap'),
      '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\necho "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const env = { JP_CFG_SANDBOX__BWRAP_PATH: path.join(bin, 'bwrap') };
    const check = await runJp(sandbox, ['sandbox', 'check'], { env });
    assert.equal(check.code, 1, check.stdout);
    assert.match(
      check.stdout,
      /UNUSABLE: bubblewrap cannot set up a network namespace .*AppArmor restricts unprivileged user namespaces/,
    );
    assert.match(check.stdout, /sysctl kernel\.apparmor_restrict_unprivileged_userns=0/);
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } } }] },
        { parts: [{ text: 'ok' }] },
      ],
    });
    const result = await runJp(
      sandbox,
      ['query', '--json', ...script, '-c', 'conversation.tools.defaults.detached="auto"', 'go'],
      { env },
    );
    assert.equal(result.code, 3, result.stderr);
    assert.ok(!sandbox.exists('ran.txt'), 'never run unconfined');
    assert.match(resultOf(result.stdout).tools[0].result, /AppArmor.*apparmor_restrict_unprivileged_userns=0/);
  });

  it('jp sandbox check says what the sandbox can do here, and exits 1 when it cannot run', async () => {
    const sandbox = cleanup.sandbox();
    const here = await runJp(sandbox, ['sandbox', 'check']);
    assert.equal(here.code, 0, here.stdout + here.stderr);
    assert.match(here.stdout, /^engine {6}bubblewrap \d+\.\d+\.\d+ \(.*bwrap\)$/m);
    assert.match(here.stdout, /^namespaces {2}user: yes, pid: yes, network: yes$/m);
    assert.match(here.stdout, /^mode {8}workspace-write, no network \(sandbox\.mode set by built-in default\)$/m);
    const json = await runJp(sandbox, ['sandbox', 'check', '--json']);
    assert.equal(JSON.parse(json.stdout.trim()).usable, true);
    const missing = await runJp(sandbox, ['sandbox', 'check'], {
      env: { JP_CFG_SANDBOX__BWRAP_PATH: path.join(sandbox.root, 'empty-bin', 'bwrap') },
    });
    assert.equal(missing.code, 1);
    assert.match(missing.stdout, /UNUSABLE: sandbox\.bwrap_path = ".*" is not an executable file/);
    assert.match(missing.stdout, /^fix {9}correct sandbox\.bwrap_path/m);
  });
});

describe('MCP stdio servers opt in with sandbox = true', () => {
  it('such a server runs in namespaces of its own (pid, network); without bwrap it fails to start, named, and the run goes on', async () => {
    const sandbox = cleanup.sandbox();
    const marker = `sandboxed-mcp-${process.pid}`;
    cleanup.add(() => killServers(marker));
    writeUserConfig(sandbox, everythingStdio('confined', marker, 'sandbox = true\n'));
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { tool_call: { name: 'run_command', arguments: { command: 'while [ ! -f go ]; do sleep 0.05; done' } } },
          ],
        },
        { parts: [{ text: 'ok' }] },
      ],
    });
    const args = ['query', ...script, '-c', 'conversation.tools.run_command.run="unattended"', 'go'];
    const child = startJp(sandbox, args);
    const running = collect(child, args, 60_000);
    // The server itself, not the bwrap that started it (whose command line names it too).
    const serverItself = (): number[] =>
      serverProcesses(marker).filter(
        (pid) => !readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.endsWith('bwrap'),
      );
    const [server] = await eventually('the MCP server is running', () =>
      serverItself().length > 0 ? serverItself() : undefined,
    );
    assert.notEqual(readlinkSync(`/proc/${server}/ns/pid`), readlinkSync('/proc/self/ns/pid'));
    assert.notEqual(readlinkSync(`/proc/${server}/ns/net`), readlinkSync('/proc/self/ns/net'));
    sandbox.write('go', '');
    const result = await running;
    assert.equal(result.code, 0, result.stderr);

    const missing = await runJp(
      sandbox,
      ['query', '--new', ...script, '-c', 'conversation.tools.run_command.run="unattended"', 'go'],
      { env: { JP_CFG_SANDBOX__BWRAP_PATH: path.join(sandbox.root, 'empty-bin', 'bwrap') } },
    );
    assert.match(
      missing.stderr,
      /the MCP server confined failed to start: mcp\.servers\.confined\.sandbox = true, and the sandbox cannot start: sandbox\.bwrap_path = ".*" is not an executable file\. Fix: correct/,
    );
    assert.equal(serverProcesses(marker).length, 0);
  });
});

describe('leaving the sandbox is an escalate inquiry', () => {
  const escalating = (sandbox: Sandbox): string[] =>
    testProvider(sandbox, {
      steps: [
        {
          parts: [
            {
              tool_call: {
                name: 'run_command',
                arguments: {
                  command: 'echo out > "$HOME/escalated.txt"',
                  escalate: true,
                  justification: 'writes the release notes to the home directory',
                },
              },
            },
          ],
        },
        { parts: [{ text: 'ok' }] },
      ],
    });

  it('headless with detached = "auto": denied (exit 3), the command not run, the key to change it named', async () => {
    const sandbox = cleanup.sandbox();
    const result = await runJp(sandbox, [
      'query',
      '--json',
      ...escalating(sandbox),
      '-c',
      'conversation.tools.defaults.detached="auto"',
      'go',
    ]);
    assert.equal(result.code, 3, result.stderr);
    assert.ok(!existsSync(path.join(sandbox.env.HOME!, 'escalated.txt')));
    const final = resultOf(result.stdout);
    assert.equal(final.permission_denials[0].kind, 'escalate');
    assert.match(
      final.tools[0].result,
      /^Not run outside the sandbox: no user is available to approve it.*detached\.escalate = "auto"/,
    );
  });

  it('headless with detached.escalate = "auto" set explicitly: it runs outside the sandbox, and the model is told no human decided', async () => {
    const sandbox = cleanup.sandbox();
    const result = await runJp(sandbox, [
      'query',
      '--json',
      ...escalating(sandbox),
      '-c',
      'conversation.tools.defaults.detached={ run = "auto", escalate = "auto" }',
      'go',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(readFileSync(path.join(sandbox.env.HOME!, 'escalated.txt'), 'utf8'), 'out\n');
    assert.match(
      resultOf(result.stdout).tools[0].result,
      /\[jp: decided without a human\] Run outside the sandbox without a user's approval/,
    );
  });

  it('at a terminal: the prompt says what and why; n keeps it from running', async () => {
    const sandbox = cleanup.sandbox();
    const screen = Screen.jp(
      sandbox,
      ['query', ...escalating(sandbox), '-c', 'conversation.tools.run_command.run="unattended"', 'go'],
      { cleanup },
    );
    await screen.waitFor('$ echo out >', { on: 'screen' });
    await screen.waitFor('Why: writes the release notes to the home directory', { on: 'screen' });
    await screen.waitFor(/Run run_command outside the sandbox.*\? \[y\/n\/p\] Enter: n/, { on: 'screen' });
    screen.press('n');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.ok(!existsSync(path.join(sandbox.env.HOME!, 'escalated.txt')));
    assert.match(screen.text(), /↳ run_command: denied/);
  });

  it('at a terminal, a sandbox that cannot start is an escalation prompt', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'run_command', arguments: { command: 'echo ran > ran.txt' } } }] },
        { parts: [{ text: 'ok' }] },
      ],
    });
    const screen = Screen.jp(
      sandbox,
      ['query', ...script, '-c', 'conversation.tools.run_command.run="unattended"', 'go'],
      { cleanup, env: { JP_CFG_SANDBOX__BWRAP_PATH: path.join(sandbox.root, 'empty-bin', 'bwrap') } },
    );
    await screen.waitFor('Why: the sandbox cannot start on this machine: sandbox.bwrap_path =', { on: 'flowed' });
    await screen.waitFor('Run run_command outside the sandbox?', { on: 'screen' });
    screen.press('y');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(sandbox.read('ran.txt'), 'ran\n', 'the human let it run unconfined');
  });

  it('deferred headless (exit 4), then --continue at a terminal asks, and y runs it outside the sandbox', async () => {
    const sandbox = cleanup.sandbox();
    const script = escalating(sandbox);
    const deferred = await runJp(sandbox, [
      'query',
      '--json',
      ...script,
      '-c',
      'conversation.tools.defaults.detached={ run = "auto", escalate = "defer" }',
      'go',
    ]);
    assert.equal(deferred.code, 4, deferred.stderr);
    const pending = resultOf(deferred.stdout).pending_inquiry;
    assert.equal(pending.kind, 'escalate');
    assert.equal(pending.inquiry.justification, 'writes the release notes to the home directory');
    assert.ok(!existsSync(path.join(sandbox.env.HOME!, 'escalated.txt')));
    const screen = Screen.jp(sandbox, ['query', '--continue', ...script], { cleanup });
    await screen.waitFor('Run run_command outside the sandbox?', { on: 'screen' });
    screen.press('y');
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    assert.equal(readFileSync(path.join(sandbox.env.HOME!, 'escalated.txt'), 'utf8'), 'out\n');
  });
});
