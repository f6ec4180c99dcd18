/**
 * Whatever the umask, nothing jp creates is writable by group or others, and its private state
 * (conversations, user-local state, trust decisions, compile caches) is not readable by them
 * either: 0600 files in 0700 directories, `.jp/config.toml` 0644 at most (DESIGN §10). Checked
 * after a typical session run under `umask 000`: init, trust, foreground and in-process queries with
 * a file tool, a detached run, a deferred one, ls, print, fork.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { collect, eventually, jpBinary, readEvents, useCleanup, type RunResult, type Sandbox } from '../support/jp.ts';

const cleanup = useCleanup();

/** Runs jp under `umask 000`, no terminal, like runJp. */
function runWithOpenUmask(sandbox: Sandbox, args: string[]): Promise<RunResult> {
  const child = spawn('/bin/sh', ['-c', 'umask 000 && exec "$@"', 'sh', process.execPath, jpBinary, ...args], {
    cwd: sandbox.workspace,
    env: sandbox.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child, args, 60_000);
}

function walk(directory: string, found: string[] = []): string[] {
  for (const name of readdirSync(directory)) {
    const full = path.join(directory, name);
    found.push(full);
    if (lstatSync(full).isDirectory()) walk(full, found);
  }
  return found;
}

describe('file modes under umask 000', () => {
  it('a typical session leaves nothing group- or world-writable, and nothing private readable by others', async () => {
    const sandbox = cleanup.sandbox({ init: false });
    const script = JSON.stringify({
      steps: [
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'notes/today.md', content: 'notes' } } }] },
        { parts: [{ text: 'Done.' }] },
      ],
    });
    const steps = [
      ['init'],
      ['trust'],
      [
        'query',
        '-m',
        'test',
        '-c',
        'providers.test.script="s.json"',
        '-c',
        'conversation.tools.defaults.detached="auto"',
        'write notes',
      ],
      ['query', '--no-server', '-m', 'test', '-c', 'providers.test.script="s2.json"', 'and again'],
      ['query', '--new', '--detach', '-m', 'test', '-c', 'providers.test.script="s2.json"', 'in the background'],
      [
        'query',
        '--new',
        '-m',
        'test',
        '-c',
        'providers.test.script="s.json"',
        '-c',
        'conversation.tools.defaults.detached="defer"',
        'deferred',
      ],
      ['conversation', 'ls'],
      ['conversation', 'print'],
      ['conversation', 'fork', '<detached>'],
    ];
    sandbox.write('s.json', script);
    sandbox.write('s2.json', JSON.stringify({ steps: [{ parts: [{ text: 'Fine.' }] }] }));
    let detachedId = '';
    for (const step of steps) {
      const args = step.map((argument) => (argument === '<detached>' ? detachedId : argument));
      const result = await runWithOpenUmask(sandbox, args);
      if (args.includes('deferred')) assert.equal(result.code, 4, result.stderr);
      else assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      if (args.includes('--detach')) detachedId = result.stdout.trim();
    }
    await eventually('the detached run to finish', () =>
      readEvents(sandbox, detachedId).some((event) => event.type === 'turn_end'),
    );
    await eventually('its registry entry to go', () =>
      readdirSync(path.join(sandbox.userDirectory(), 'processes')).every((name) => !name.endsWith('.json')),
    );

    const problems: string[] = [];
    const created = walk(sandbox.root).filter(
      (file) =>
        ![
          sandbox.workspace,
          path.join(sandbox.root, 'home'),
          path.join(sandbox.workspace, 's.json'),
          path.join(sandbox.workspace, 's2.json'),
        ].includes(file),
    );
    const privateRoots = [
      path.join(sandbox.workspace, '.jp'),
      sandbox.dataHome,
      path.join(sandbox.root, 'home', '.cache'),
    ];
    for (const file of created) {
      const stat = lstatSync(file);
      if (stat.isSymbolicLink()) continue;
      const mode = stat.mode & 0o777;
      const name = path.relative(sandbox.root, file);
      if ((mode & 0o022) !== 0) problems.push(`${name} is ${mode.toString(8)}: writable by group or others`);
      const isConfig = file === path.join(sandbox.workspace, '.jp', 'config.toml');
      if (isConfig && (mode & ~0o644) !== 0) problems.push(`${name} is ${mode.toString(8)}: more than 0644`);
      if (
        !isConfig &&
        privateRoots.some((root) => file === root || file.startsWith(root + path.sep)) &&
        (mode & 0o077) !== 0
      ) {
        problems.push(`${name} is ${mode.toString(8)}: readable by group or others`);
      }
    }
    assert.ok(
      created.some((file) => file.endsWith(path.join('notes', 'today.md'))),
      'the file tool ran',
    );
    assert.ok(
      created.some((file) => file.includes(`${path.sep}locks`)),
      'user-local state was checked',
    );
    assert.ok(
      created.some((file) => file.endsWith('trust.json')),
      'the trust decision was checked',
    );
    assert.deepEqual(problems, []);
  });
});
