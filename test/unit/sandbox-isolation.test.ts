/**
 * What keeps a sandboxed command from jp and from what git runs later, as data: the directories jp
 * keeps its state in (whatever the environment says), the plan's protection of a repository at the
 * top of a writable directory, the bubblewrap program taken from system paths (never PATH), and
 * the credential list.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { jpDirectories, socketRuntimeDirectory } from '../../src/config/paths.ts';
import { workspaceKeysNeedingTrust } from '../../src/config/trust.ts';
import { bubblewrapArguments } from '../../src/sandbox/bubblewrap.ts';
import { credentialPaths, isHistoryName } from '../../src/sandbox/credentials.ts';
import { findBubblewrap } from '../../src/sandbox/engine.ts';
import { planSandbox, type FileSystemFacts, type PathKind } from '../../src/sandbox/plan.ts';
import { seatbeltProfile } from '../../src/sandbox/seatbelt.ts';
import type { SandboxSettings } from '../../src/sandbox/settings.ts';

function facts(entries: Record<string, PathKind>): FileSystemFacts {
  return { realPath: (file) => (entries[file] ? file : undefined), kind: (file) => entries[file] };
}

const uid = process.getuid!();

describe("jp's own directories", () => {
  it('are listed as the environment names them and as jp would find them under no XDG variable at all', () => {
    const environment = {
      HOME: '/home/u',
      XDG_CONFIG_HOME: '/xdg/config',
      XDG_DATA_HOME: '/xdg/data',
      XDG_CACHE_HOME: '/xdg/cache',
      XDG_RUNTIME_DIR: '/run/user/1000',
    };
    const directories = jpDirectories(environment);
    for (const expected of [
      '/xdg/config/jp',
      '/home/u/.config/jp',
      '/xdg/data/jp',
      '/home/u/.local/share/jp',
      '/xdg/cache/jp',
      '/home/u/.cache/jp',
      '/run/user/1000/jp',
      `/run/user/${uid}/jp`,
      `/tmp/jp-${uid}`,
      path.join(os.tmpdir(), `jp-${uid}`),
    ])
      assert.ok(directories.includes(expected), `${expected} in ${directories.join(', ')}`);
  });

  it('include the private socket directories made beside a taken /tmp/jp-<uid> (jp-<uid>-*), as they are now', () => {
    const made = mkdtempSync(path.join(os.tmpdir(), `jp-${uid}-`));
    after(() => rmSync(made, { recursive: true, force: true }));
    assert.ok(jpDirectories({ HOME: '/home/u' }).includes(made));
    assert.ok(!jpDirectories({ HOME: '/home/u' }).some((directory) => directory.includes('jp-sandbox-')));
  });

  it('the socket fallback is the one socket-path.ts uses: $XDG_RUNTIME_DIR/jp, else <tmp>/jp-<uid>', () => {
    assert.equal(socketRuntimeDirectory({ XDG_RUNTIME_DIR: '/run/user/7' }), '/run/user/7/jp');
    assert.equal(socketRuntimeDirectory({}), path.join(os.tmpdir(), `jp-${uid}`));
  });
});

describe('a repository at the top of a writable directory', () => {
  const settings: SandboxSettings = {
    mode: 'workspace-write',
    network: false,
    writableRoots: [],
    hiddenPaths: [],
    hideHome: false,
    readableRoots: [],
    bwrapPath: undefined,
  };
  const base = {
    settings,
    toolRoot: '/w',
    protectedPaths: ['/w/.jp'],
    home: '/home/u',
    extraHiddenPaths: [],
    temporaryDirectory: '/t',
    cwd: '/w',
  };

  it('.git stays writable (commits work) but is pinned; what git runs from it is read-only', () => {
    const plan = planSandbox(
      base,
      facts({
        '/w': 'directory',
        '/w/.jp': 'directory',
        '/w/.git': 'directory',
        '/w/.git/config': 'file',
        '/w/.git/hooks': 'directory',
        '/w/.git/info': 'directory',
        '/w/.git/modules': 'directory',
        '/t': 'directory',
      }),
    );
    assert.deepEqual(plan.pinned, ['/w/.git']);
    assert.deepEqual(plan.readOnly, ['/w/.jp', '/w/.git/config', '/w/.git/hooks', '/w/.git/info', '/w/.git/modules']);
    const args = bubblewrapArguments(plan, { file: 'true', arguments: [] }).join(' ');
    assert.match(
      args,
      /--bind \/w \/w --bind \/w\/\.git \/w\/\.git --ro-bind \/w\/\.jp \/w\/\.jp --ro-bind \/w\/\.git\/config/,
    );
    assert.match(seatbeltProfile(plan), /\(deny file-write\* \(literal "\/w\/\.git"\)\)/);
  });

  it('a .git file (a worktree, a submodule) is read-only: rewritten, it would name a git directory the command made', () => {
    const plan = planSandbox(base, facts({ '/w': 'directory', '/w/.git': 'file', '/t': 'directory' }));
    assert.deepEqual(plan.pinned, []);
    assert.deepEqual(plan.readOnly, ['/w/.git']);
  });

  it('read-only mode needs no rule: nothing is writable', () => {
    const plan = planSandbox(
      { ...base, settings: { ...settings, mode: 'read-only' } },
      facts({ '/w': 'directory', '/w/.git': 'directory', '/w/.git/config': 'file', '/t': 'directory' }),
    );
    assert.deepEqual(plan.pinned, []);
    assert.deepEqual(plan.readOnly, []);
  });
});

describe('sandbox.hide_home (opt-in)', () => {
  const entries = facts({
    '/home/u': 'directory',
    '/home/u/src/app': 'directory',
    '/home/u/.rustup': 'directory',
    '/home/u/.ssh': 'directory',
    '/t': 'directory',
  });
  const hiding = {
    settings: {
      mode: 'workspace-write',
      network: false,
      writableRoots: [],
      hiddenPaths: [],
      hideHome: true,
      readableRoots: ['~/.rustup', '~/missing'],
      bwrapPath: undefined,
    } satisfies SandboxSettings,
    toolRoot: '/home/u/src/app',
    protectedPaths: [],
    home: '/home/u',
    extraHiddenPaths: [],
    temporaryDirectory: '/t',
    cwd: '/home/u/src/app',
  };

  it('empties the home directory first, shows the readable roots read-only and the workspace writable, and makes it read-only last', () => {
    const plan = planSandbox(hiding, entries);
    assert.equal(plan.emptied, '/home/u');
    assert.deepEqual(plan.readable, ['/home/u/.rustup']);
    const args = bubblewrapArguments(plan, { file: 'true', arguments: [] });
    const text = args.join(' ');
    assert.match(
      text,
      /--proc \/proc --tmpfs \/home\/u --ro-bind \/home\/u\/\.rustup \/home\/u\/\.rustup --bind \/home\/u\/src\/app \/home\/u\/src\/app/,
    );
    assert.match(text, /--bind \/t \/t --remount-ro \/home\/u --chdir/);
    const profile = seatbeltProfile(plan);
    assert.match(
      profile,
      /\(deny file-read\* \(subpath "\/home\/u"\)\)\n\(allow file-read\* \(subpath "\/home\/u\/\.rustup"\) \(subpath "\/home\/u\/src\/app"\)/,
    );
  });

  it('is off by default: nothing is emptied', () => {
    const plan = planSandbox({ ...hiding, settings: { ...hiding.settings, hideHome: false } }, entries);
    assert.equal(plan.emptied, undefined);
    assert.deepEqual(plan.readable, []);
    assert.ok(!bubblewrapArguments(plan, { file: 'true', arguments: [] }).includes('/home/u'));
  });
});

describe('the bubblewrap program', () => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'jp-bwrap-'));
  after(() => rmSync(directory, { recursive: true, force: true }));
  const program = (name: string): string => {
    const file = path.join(directory, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o755);
    return file;
  };

  it('is the first system path that holds one, never one on PATH', () => {
    const system = program('usr/bin/bwrap');
    assert.deepEqual(findBubblewrap(undefined, [], [path.join(directory, 'missing'), system]), { program: system });
    const none = findBubblewrap(undefined, [], [path.join(directory, 'missing')]);
    assert.ok('problem' in none);
    assert.match(none.problem.cause, /is not installed .*PATH is not searched/);
    assert.match(none.problem.fix, /sandbox\.bwrap_path/);
  });

  it('is sandbox.bwrap_path when the user sets it; one that is missing, or inside a directory commands may write, is refused', () => {
    const own = program('opt/bwrap');
    assert.deepEqual(findBubblewrap(own, [], []), { program: own });
    const missing = findBubblewrap(path.join(directory, 'nowhere'), [], []);
    assert.ok('problem' in missing && /is not an executable file/.test(missing.problem.cause));
    const planted = program('workspace/bin/bwrap');
    const refused = findBubblewrap(planted, [path.join(directory, 'workspace')], []);
    assert.ok('problem' in refused);
    assert.match(refused.problem.cause, /which sandboxed commands may write: a command could replace the sandbox/);
  });
});

describe('the credential list', () => {
  it('names the stores of git, gh, the package registries, the clouds, vault, terraform, op, doctl, oci, pass, keyrings, browsers and histories', () => {
    for (const expected of [
      '.git-credentials',
      '.config/git/credentials',
      '.config/gh',
      '.npmrc',
      '.pypirc',
      '.cargo/credentials.toml',
      '.m2/settings.xml',
      '.gradle/gradle.properties',
      '.nuget/NuGet/NuGet.Config',
      '.gem/credentials',
      '.aws',
      '.config/gcloud',
      '.azure',
      '.kube',
      '.vault-token',
      '.terraform.d/credentials.tfrc.json',
      '.config/op',
      '.config/doctl',
      '.oci',
      '.password-store',
      '.local/share/keyrings',
      '.mozilla',
      '.config/google-chrome',
      '.local/share/fish/fish_history',
    ])
      assert.ok(credentialPaths.includes(expected), expected);
  });

  it('takes any dotfile history in the home directory', () => {
    for (const name of ['.bash_history', '.zsh_history', '.sh_history', '.python_history', '.node_repl_history'])
      assert.ok(isHistoryName(name), name);
    for (const name of ['.bashrc', 'history', '.config']) assert.ok(!isHistoryName(name), name);
  });
});

describe('what a workspace config may say of these settings without trust', () => {
  const keys = (workspace: string, user = ''): string[] =>
    workspaceKeysNeedingTrust(parseToml(workspace) as Record<string, unknown>, parseToml(user)).map((key) => key.key);

  it('turn hide_home on, not off; readable_roots only those the user lists; never choose the bwrap program', () => {
    assert.deepEqual(keys('[sandbox]\nhide_home = true\n'), []);
    assert.deepEqual(keys('[sandbox]\nhide_home = false\n', '[sandbox]\nhide_home = true\n'), ['sandbox.hide_home']);
    assert.deepEqual(keys('[sandbox]\nreadable_roots = ["~/.aws"]\n', '[sandbox]\nreadable_roots = ["~/.cargo"]\n'), [
      'sandbox.readable_roots',
    ]);
    assert.deepEqual(
      keys('[sandbox]\nreadable_roots = ["~/.cargo"]\n', '[sandbox]\nreadable_roots = ["~/.cargo"]\n'),
      [],
    );
    assert.deepEqual(keys('[sandbox]\nbwrap_path = "/usr/bin/bwrap"\n'), ['sandbox.bwrap_path']);
  });
});
