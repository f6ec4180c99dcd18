/**
 * A full disk (ENOSPC) on a small tmpfs: a typed error ("disk full while writing <path>", exit 1),
 * no temporaries or half-made conversations left behind, and every event written before kept, so
 * the turn resumes once there is room again.
 *
 * The workspace and jp's user-local data live on a tmpfs of a few hundred KiB mounted for the
 * test (`mount -t tmpfs` needs root, which these test machines give; elsewhere the mount fails and
 * so does the test, with the mount's own message).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createSandbox, readEvents, runJp, useCleanup, type Sandbox } from '../support/jp.ts';

const cleanup = useCleanup();

/** A sandbox whose workspace and XDG data directory are on a fresh tmpfs of `sizeKiB`. */
function sandboxOnSmallDisk(sizeKiB: number): Sandbox & { disk: string } {
  const base = createSandbox({ init: false });
  const disk = path.join(base.root, 'disk');
  mkdirSync(disk);
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKiB}k,mode=700`, 'tmpfs', disk]);
  cleanup.add(() => {
    execFileSync('umount', ['-l', disk]);
    base.cleanup();
  });
  const workspace = path.join(disk, 'w');
  const dataHome = path.join(disk, 'd');
  mkdirSync(path.join(workspace, '.jp', 'conversations'), { recursive: true });
  return {
    ...base,
    workspace,
    dataHome,
    env: { ...base.env, XDG_DATA_HOME: dataHome },
    disk,
    write(relative, content) {
      const file = path.join(workspace, relative);
      writeFileSync(file, content);
      return file;
    },
  };
}

/** Writes zeros into `file` until the file system says it is full. */
function fill(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(4096);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
  } finally {
    closeSync(fd);
  }
}

/** Every path under `directory`, relative to it. */
function tree(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).sort();
}

/** What a failed or finished run must not leave: temporaries, half-made conversations, locks, registry entries. */
function leftovers(sandbox: Sandbox & { disk: string }): string[] {
  const found: string[] = [];
  for (const relative of tree(sandbox.disk)) {
    const name = path.basename(relative);
    if (/\.(tmp|new)-/.test(name) || name.startsWith('.new-')) found.push(`temporary ${relative}`);
    if (name.endsWith('.lock') || name.endsWith('.sock') || /processes\/jp-c\d+\.json$/.test(relative))
      found.push(`left ${relative}`);
    if (/conversations\/jp-c\d+$/.test(relative)) {
      const entries = readdirSync(path.join(sandbox.disk, relative));
      if (!entries.includes('events.ndjson') || !entries.includes('metadata.json'))
        found.push(`incomplete conversation ${relative}: ${entries.join(', ')}`);
    }
  }
  return found;
}

const script = (sandbox: Sandbox, steps: unknown[]): string[] => {
  sandbox.write('script.json', JSON.stringify({ steps }));
  return ['-m', 'test', '-c', 'providers.test.script=script.json'];
};

describe('disk full (ENOSPC)', () => {
  for (const mode of [[], ['--no-server']]) {
    it(`a full disk before the query${mode.length ? ' (--no-server)' : ''}: exit 1, "disk full while writing", nothing left behind`, async () => {
      const sandbox = sandboxOnSmallDisk(256);
      const settings = script(sandbox, [{ parts: [{ text: 'never' }] }]);
      fill(path.join(sandbox.disk, 'filler'));
      const result = await runJp(sandbox, ['query', '--new', ...mode, ...settings, 'hello']);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, /^error: disk full while writing \/.+/m);
      assert.doesNotMatch(result.stderr, /bug in jp/);
      assert.deepEqual(leftovers(sandbox), []);
      assert.deepEqual(readdirSync(path.join(sandbox.workspace, '.jp', 'conversations')), []);

      const json = await runJp(sandbox, ['query', '--new', '--json', ...mode, ...settings, 'hello']);
      assert.equal(json.code, 1);
      const final = JSON.parse(json.stdout.trim().split('\n').pop()!);
      assert.equal(final.status, 'error');
      assert.equal(final.error.code, 'disk_full');
      assert.deepEqual(leftovers(sandbox), []);
    });
  }

  for (const mode of [[], ['--no-server']]) {
    it(`a full data directory (the workspace has room)${mode.length ? ' (--no-server)' : ''}: no empty conversation per attempt, no --continue hint`, async () => {
      const sandbox = createSandbox();
      const disk = path.join(sandbox.root, 'data-disk');
      mkdirSync(disk);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=700', 'tmpfs', disk]);
      cleanup.add(() => {
        execFileSync('umount', ['-l', disk]);
        sandbox.cleanup();
      });
      sandbox.env = { ...sandbox.env, XDG_DATA_HOME: disk };
      sandbox.write('script.json', JSON.stringify({ steps: [{ parts: [{ text: 'never' }] }] }));
      const settings = ['-m', 'test', '-c', 'providers.test.script=script.json'];
      fill(path.join(disk, 'filler'));
      for (let attempt = 0; attempt < 2; attempt++) {
        const result = await runJp(sandbox, ['query', ...mode, ...settings, 'hello']);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, /^error: disk full while writing \/.+/m);
        assert.doesNotMatch(result.stderr, /--continue|bug in jp/);
      }
      assert.deepEqual(
        readdirSync(path.join(sandbox.workspace, '.jp', 'conversations')),
        [],
        'no conversation was left behind',
      );
    });
  }

  it('the disk fills during a turn: the events written before are kept, nothing is left behind, and --continue finishes once there is room', async () => {
    const sandbox = sandboxOnSmallDisk(512);
    // The tool's output (9,000 bytes) needs new pages of the file system, which the command filled.
    const settings = [
      ...script(sandbox, [
        {
          parts: [
            { text: 'Making a big file.\n\n' },
            {
              tool_call: {
                name: 'run_command',
                arguments: { command: "head -c 10000000 /dev/zero > fill.bin; head -c 9000 /dev/zero | tr '\\0' x" },
              },
            },
          ],
        },
        { parts: [{ text: 'The disk had room again.' }] },
      ]),
      '-c',
      'conversation.tools.defaults.detached="auto"',
    ];
    const result = await runJp(sandbox, ['query', '--new', ...settings, 'fill the disk']);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /error: disk full while writing \/\S+\/events\.ndjson/);
    assert.doesNotMatch(result.stderr, /bug in jp/);
    const [conversationId] = readdirSync(path.join(sandbox.workspace, '.jp', 'conversations'));
    // Every line parses (readEvents throws on a torn one); the tool's result is what did not fit.
    const before = readEvents(sandbox, conversationId!);
    const types = before.map((event) => event.type);
    assert.ok(types.includes('chat_response') && types.includes('tool_call_start'), types.join(', '));
    assert.ok(!types.includes('tool_call_response'), types.join(', '));
    const last = before[before.length - 1]!;
    if (last.type === 'turn_end')
      assert.equal(last.error?.code, 'disk_full', 'the stop marker, when it fitted, names the cause');
    assert.deepEqual(leftovers(sandbox), []);

    rmSync(path.join(sandbox.workspace, 'fill.bin'));
    assert.ok(
      statSync(path.join(sandbox.workspace, '.jp', 'conversations', conversationId!, 'events.ndjson')).size > 0,
    );
    const resumed = await runJp(sandbox, ['query', '--continue', `--id=${conversationId}`, ...settings]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /The disk had room again\./);
    const after = readEvents(sandbox, conversationId!);
    assert.deepEqual(after.slice(0, before.length), before);
    assert.equal(after[after.length - 1]!.type, 'turn_end');
    assert.deepEqual(leftovers(sandbox), []);
  });
});
