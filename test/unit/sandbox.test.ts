/**
 * The command sandbox as data (DESIGN §10): the plan from settings and file-system facts, the
 * bubblewrap arguments and the Seatbelt profile rendered from it, what a failure says, the
 * workspace config that may tighten but not loosen it, and the `escalate` policy kind that the
 * scalar shorthand does not cover.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { loadConfig, type ConfigInputs } from '../../src/config/load.ts';
import { resolveDetachedPolicy } from '../../src/config/policy.ts';
import { configContentHash, workspaceKeysNeedingTrust } from '../../src/config/trust.ts';
import { bubblewrapArguments } from '../../src/sandbox/bubblewrap.ts';
import { bubblewrapProblem, sandboxDenial } from '../../src/sandbox/explain.ts';
import { planSandbox, type FileSystemFacts, type PathKind, type PlanInput } from '../../src/sandbox/plan.ts';
import { seatbeltProfile } from '../../src/sandbox/seatbelt.ts';
import {
  describeSandboxForModel,
  describeSandboxSettings,
  sandboxSettingsOf,
  type SandboxSettings,
} from '../../src/sandbox/settings.ts';

/** A file system given as a table: path → kind, and symlinks → their target. */
function facts(entries: Record<string, PathKind>, links: Record<string, string> = {}): FileSystemFacts {
  const resolve = (file: string): string => {
    for (const [link, target] of Object.entries(links)) {
      if (file === link || file.startsWith(link + '/')) return resolve(target + file.slice(link.length));
    }
    return file;
  };
  return {
    realPath: (file) => (entries[resolve(file)] ? resolve(file) : undefined),
    kind: (file) => entries[file],
  };
}

const settings = (overrides: Partial<SandboxSettings> = {}): SandboxSettings => ({
  mode: 'workspace-write',
  network: false,
  writableRoots: [],
  hiddenPaths: [],
  hideHome: false,
  readableRoots: [],
  bwrapPath: undefined,
  ...overrides,
});

const fileSystem = facts(
  {
    '/home/u': 'directory',
    '/home/u/.ssh': 'directory',
    '/home/u/.netrc': 'file',
    '/home/u/.config/jp': 'directory',
    '/home/u/.config/gcloud': 'directory',
    '/home/u/src/app': 'directory',
    '/home/u/src/app/.jp': 'directory',
    '/home/u/src/app/sub': 'directory',
    '/home/u/.local/share/jp': 'directory',
    '/home/u/cache': 'directory',
    '/home/u/secret.txt': 'file',
    '/data/keys': 'directory',
    '/tmp/jp-sandbox-1': 'directory',
  },
  { '/home/u/.aws': '/data/keys' },
);

function input(overrides: Partial<PlanInput> = {}): PlanInput {
  return {
    settings: settings(),
    toolRoot: '/home/u/src/app',
    protectedPaths: ['/home/u/src/app/.jp'],
    home: '/home/u',
    extraHiddenPaths: ['/home/u/.config/jp', '/home/u/.local/share/jp'],
    temporaryDirectory: '/tmp/jp-sandbox-1',
    cwd: '/home/u/src/app/sub',
    ...overrides,
  };
}

describe('the sandbox plan', () => {
  it('workspace-write: the tool root and the private TMPDIR are writable, .jp/ read-only inside, secrets hidden by their real path', () => {
    const plan = planSandbox(input(), fileSystem);
    assert.deepEqual(plan.writable, ['/home/u/src/app', '/tmp/jp-sandbox-1']);
    assert.deepEqual(
      plan.readOnly,
      ['/home/u/src/app/.jp'],
      'jp user-local state outside every writable directory needs no rule',
    );
    assert.deepEqual(plan.hidden, [
      { path: '/home/u/.ssh', kind: 'directory' },
      { path: '/home/u/.netrc', kind: 'file' },
      { path: '/data/keys', kind: 'directory' },
      { path: '/home/u/.config/gcloud', kind: 'directory' },
      { path: '/home/u/.config/jp', kind: 'directory' },
      { path: '/home/u/.local/share/jp', kind: 'directory' },
    ]);
    assert.equal(plan.network, false);
    assert.equal(plan.cwd, '/home/u/src/app/sub');
  });

  it('read-only: only the private TMPDIR is writable; writable_roots are ignored', () => {
    const plan = planSandbox(
      input({ settings: settings({ mode: 'read-only', writableRoots: ['~/cache'] }) }),
      fileSystem,
    );
    assert.deepEqual(plan.writable, ['/tmp/jp-sandbox-1']);
    assert.deepEqual(plan.readOnly, []);
  });

  it('writable_roots (~/ and workspace-relative) add directories; a workspace in $HOME keeps jp state and secrets protected', () => {
    const plan = planSandbox(
      input({
        toolRoot: '/home/u',
        settings: settings({ writableRoots: ['~/cache', 'missing'], hiddenPaths: ['~/secret.txt'] }),
      }),
      fileSystem,
    );
    assert.deepEqual(plan.writable, ['/home/u', '/home/u/cache', '/tmp/jp-sandbox-1']);
    assert.deepEqual(plan.readOnly, ['/home/u/src/app/.jp']);
    assert.ok(
      plan.hidden.some((hidden) => hidden.path === '/home/u/.local/share/jp'),
      "jp's data is hidden, so not writable either",
    );
    assert.ok(plan.hidden.some((hidden) => hidden.path === '/home/u/secret.txt' && hidden.kind === 'file'));
  });
});

describe('bubblewrap arguments', () => {
  it('namespaces, read-only root, fresh /dev and /proc, then writable, read-only and hidden binds in that order, the private TMPDIR last, then the command', () => {
    const plan = planSandbox(input(), fileSystem);
    assert.deepEqual(bubblewrapArguments(plan, { file: '/bin/sh', arguments: ['-c', 'true'] }), [
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--unshare-net',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--bind',
      '/home/u/src/app',
      '/home/u/src/app',
      '--ro-bind',
      '/home/u/src/app/.jp',
      '/home/u/src/app/.jp',
      '--tmpfs',
      '/home/u/.ssh',
      '--remount-ro',
      '/home/u/.ssh',
      '--ro-bind',
      '/dev/null',
      '/home/u/.netrc',
      '--tmpfs',
      '/data/keys',
      '--remount-ro',
      '/data/keys',
      '--tmpfs',
      '/home/u/.config/gcloud',
      '--remount-ro',
      '/home/u/.config/gcloud',
      '--tmpfs',
      '/home/u/.config/jp',
      '--remount-ro',
      '/home/u/.config/jp',
      '--tmpfs',
      '/home/u/.local/share/jp',
      '--remount-ro',
      '/home/u/.local/share/jp',
      '--bind',
      '/tmp/jp-sandbox-1',
      '/tmp/jp-sandbox-1',
      '--chdir',
      '/home/u/src/app/sub',
      '--',
      '/bin/sh',
      '-c',
      'true',
    ]);
  });

  it('keeps the network namespace of the host only with sandbox.network = true', () => {
    const plan = planSandbox(input({ settings: settings({ network: true }) }), fileSystem);
    assert.ok(!bubblewrapArguments(plan, { file: 'x', arguments: [] }).includes('--unshare-net'));
  });
});

describe('the Seatbelt profile (text; untested on a real macOS)', () => {
  it('denies by default, allows reads then denies the hidden paths, allows writes to the writable directories then denies .jp/, no network', () => {
    const profile = seatbeltProfile(planSandbox(input(), fileSystem));
    const lines = profile.trim().split('\n');
    assert.equal(lines[0], '(version 1)');
    assert.equal(lines[1], '(deny default)');
    const read = lines.indexOf('(allow file-read*)');
    const write = lines.indexOf('(allow file-write* (subpath "/home/u/src/app") (subpath "/tmp/jp-sandbox-1"))');
    const protect = lines.indexOf('(deny file-write* (subpath "/home/u/src/app/.jp"))');
    const hide = lines.findIndex((line) => line.startsWith('(deny file-read* file-write* (subpath "/home/u/.ssh")'));
    assert.ok(read >= 0 && write > read && protect > write && hide > read, profile);
    assert.match(lines[hide]!, /\(literal "\/home\/u\/\.netrc"\)/);
    assert.ok(!profile.includes('network'), 'no network rule: denied by default');
    assert.match(
      seatbeltProfile(planSandbox(input({ settings: settings({ network: true }) }), fileSystem)),
      /\(allow network\*\)/,
    );
  });

  it('quotes paths as SBPL strings', () => {
    const odd = facts({ '/w/a"b\\c': 'directory', '/t': 'directory' });
    const profile = seatbeltProfile(
      planSandbox(
        {
          ...input(),
          toolRoot: '/w/a"b\\c',
          temporaryDirectory: '/t',
          cwd: '/t',
          protectedPaths: [],
          extraHiddenPaths: [],
        },
        odd,
      ),
    );
    assert.match(profile, /\(subpath "\/w\/a\\"b\\\\c"\)/);
  });
});

describe('what a failure says', () => {
  it('recognises a write the sandbox refused and an unreachable network (only when the network is off)', () => {
    assert.equal(sandboxDenial('sh: 1: cannot create /home/u/x: Read-only file system', false), 'write');
    assert.equal(
      sandboxDenial('curl: (7) Failed to connect to 127.0.0.1 port 80: Connection refused', false),
      'network',
    );
    assert.equal(sandboxDenial('curl: (6) Could not resolve host: example.com', false), 'network');
    assert.equal(sandboxDenial('curl: (6) Could not resolve host: example.com', true), undefined);
    assert.equal(sandboxDenial('make: *** [all] Error 2', false), undefined);
  });

  it("names bubblewrap's known failures with their fix", () => {
    assert.match(
      bubblewrapProblem('bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted').fix,
      /apparmor_restrict_unprivileged_userns=0/,
    );
    assert.match(
      bubblewrapProblem(
        'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces',
      ).cause,
      /user namespaces/,
    );
    assert.match(bubblewrapProblem('bwrap: Failed to make / slave: Permission denied').fix, /--privileged/);
    for (const message of ['bwrap: anything', ''])
      assert.match(bubblewrapProblem(message).fix, /sandbox\.mode = "off"/);
  });
});

function tempFile(content: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'jp-sandbox-config-')), 'config.toml');
  writeFileSync(file, content);
  return file;
}

function inputs(overrides: Partial<ConfigInputs> = {}): ConfigInputs {
  return { userFile: undefined, workspaceFile: undefined, environment: {}, cfgArguments: [], flags: [], ...overrides };
}

describe('[sandbox] in the config', () => {
  it('defaults to workspace-write with no network, described as the tool header says', () => {
    const loaded = loadConfig(inputs());
    assert.deepEqual(sandboxSettingsOf(loaded.value), settings());
    assert.equal(describeSandboxSettings(sandboxSettingsOf(loaded.value)), 'workspace-write, no network');
    assert.match(describeSandboxForModel(loaded.value), /escalate/);
    assert.equal(
      describeSandboxForModel(loadConfig(inputs({ cfgArguments: ['sandbox.mode="off"'] })).value),
      'Commands run without a sandbox (sandbox.mode = "off").',
    );
  });

  it('an unknown mode is a config error naming the key', () => {
    assert.throws(() => loadConfig(inputs({ cfgArguments: ['sandbox.mode="none"'] })), /sandbox\.mode/);
  });

  it('a workspace config may tighten the sandbox, not loosen it, until trusted', () => {
    const keys = (workspace: string, user = ''): string[] =>
      workspaceKeysNeedingTrust(parseToml(workspace) as Record<string, unknown>, parseToml(user)).map((key) => key.key);
    assert.deepEqual(
      keys('[sandbox]\nmode = "read-only"\nnetwork = false\nhidden_paths = ["~/x"]\nwritable_roots = []\n'),
      [],
    );
    assert.deepEqual(keys('[sandbox]\nmode = "off"\nnetwork = true\nwritable_roots = ["/"]\n'), [
      'sandbox.mode',
      'sandbox.network',
      'sandbox.writable_roots',
    ]);
    assert.deepEqual(
      keys('[sandbox]\nmode = "workspace-write"\n', '[sandbox]\nmode = "read-only"\n'),
      ['sandbox.mode'],
      "looser than the user's own mode",
    );
    assert.deepEqual(
      keys(
        '[sandbox]\nmode = "workspace-write"\nnetwork = true\nwritable_roots = ["~/cache"]\n',
        '[sandbox]\nmode = "off"\nnetwork = true\nwritable_roots = ["~/cache"]\n',
      ),
      [],
    );
    assert.deepEqual(keys('[conversation.tools.run_command]\ndetached = { escalate = "auto" }\n'), [
      'conversation.tools.run_command.detached',
    ]);
  });

  it('an untrusted workspace cannot turn the sandbox off or unhide a path the user hides', () => {
    const workspace = '[sandbox]\nmode = "off"\nhidden_paths = []\n';
    const loaded = loadConfig(
      inputs({ userFile: tempFile('[sandbox]\nhidden_paths = ["~/private"]\n'), workspaceFile: tempFile(workspace) }),
    );
    assert.equal(sandboxSettingsOf(loaded.value).mode, 'workspace-write');
    assert.deepEqual(sandboxSettingsOf(loaded.value).hiddenPaths, ['~/private']);
    const trusted = loadConfig(
      inputs({ workspaceFile: tempFile(workspace), trustedWorkspaceSha256: configContentHash(workspace) }),
    );
    assert.equal(sandboxSettingsOf(trusted.value).mode, 'off');
  });
});

describe('the escalate policy kind', () => {
  it('is not set by the scalar shorthand: detached = "auto" still denies leaving the sandbox', () => {
    const loaded = loadConfig(inputs({ cfgArguments: ['conversation.tools.defaults.detached="auto"'] }));
    assert.equal(resolveDetachedPolicy(loaded, 'run_command', 'run', 'deny').value, 'auto');
    const escalate = resolveDetachedPolicy(loaded, 'run_command', 'escalate', 'deny');
    assert.equal(escalate.value, 'deny');
    assert.equal(escalate.key, 'built-in');
  });

  it('is set explicitly, per tool or under defaults', () => {
    const defaults = loadConfig(
      inputs({ cfgArguments: ['conversation.tools.defaults.detached={ escalate = "auto" }'] }),
    );
    assert.equal(resolveDetachedPolicy(defaults, 'run_command', 'escalate', 'deny').value, 'auto');
    assert.equal(
      resolveDetachedPolicy(defaults, 'run_command', 'escalate', 'deny').key,
      'conversation.tools.defaults.detached.escalate',
    );
    const own = loadConfig(
      inputs({
        cfgArguments: [
          'conversation.tools.defaults.detached={ escalate = "auto" }',
          'conversation.tools.run_command.detached={ escalate = "defer" }',
        ],
      }),
    );
    assert.equal(resolveDetachedPolicy(own, 'run_command', 'escalate', 'deny').value, 'defer');
  });
});
