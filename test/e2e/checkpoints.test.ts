/**
 * Checkpoints, `jp conversation diff` and `undo` on the real binary (DESIGN §10): a turn's file
 * tools and commands are taken back to the exact bytes and modes (untracked and ignored files, a
 * hostile repository's git settings, a directory that is no repository), a file the user changed
 * since is refused without --force, a run killed mid-batch is undone from its `before` checkpoint,
 * an undo is undone, a detached run is reviewed after the fact, and the store is not visible to the
 * commands the model runs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Screen } from '../support/screen.ts';
import {
  conversationIds,
  eventually,
  readEvents,
  runJp,
  testProvider,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';

const cleanup = useCleanup();
const unattended = ['-c', 'conversation.tools.defaults.run="unattended"'];

/** Every file under the workspace but `.jp/` and `.git/`: kind, exact mode, bytes (or link target). */
function tree(root: string, directory = root, found: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(directory).sort()) {
    const full = path.join(directory, name);
    const relative = path.relative(root, full);
    if (relative === '.jp' || relative === '.git') continue;
    const stat = lstatSync(full);
    const mode = (stat.mode & 0o7777).toString(8);
    if (stat.isDirectory()) {
      found[`${relative}/`] = `dir ${mode}`;
      tree(root, full, found);
    } else if (stat.isSymbolicLink()) found[relative] = `link -> ${readlinkSync(full)}`;
    else found[relative] = `file ${mode} ${readFileSync(full).toString('base64')}`;
  }
  return found;
}

function script(sandbox: Sandbox, parts: unknown[], name = 'script.json'): string[] {
  return testProvider(sandbox, { steps: [{ parts }, { parts: [{ text: 'Done.' }] }] }, name);
}

function lastConversation(sandbox: Sandbox): string {
  const ids = conversationIds(sandbox);
  assert.ok(ids.length > 0, 'a conversation was made');
  return ids[ids.length - 1]!;
}

function git(directory: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd: directory,
    env: { PATH: process.env.PATH, HOME: directory, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    encoding: 'utf8',
  });
}

describe('checkpoints, diff and undo', () => {
  it('a turn of file tools and a command is diffed, then undone to the exact bytes and modes, and the undo undone', async () => {
    const sandbox = cleanup.sandbox();
    const workspace = sandbox.workspace;
    // A repository with tracked, untracked and ignored files, and settings a hostile clone could
    // carry: a fsmonitor and hooks that would write a marker, attributes that would rewrite bytes.
    git(workspace, 'init', '-q');
    sandbox.write('.gitignore', 'secret.env\nbuild/\n');
    sandbox.write('.gitattributes', '* text eol=crlf\n*.txt filter=evil\n');
    sandbox.write('tracked.txt', 'one\ntwo\nthree\n');
    sandbox.write('old.txt', 'to be deleted\n');
    sandbox.write('private.txt', 'mine only\n');
    chmodSync(path.join(workspace, 'private.txt'), 0o600);
    sandbox.write('untracked.md', '# notes\n');
    sandbox.write('windows.txt', 'line one\r\nline two\r\n');
    sandbox.write('secret.env', 'TOKEN=1\n');
    chmodSync(path.join(workspace, 'secret.env'), 0o600);
    writeFileSync(path.join(workspace, 'image.bin'), Buffer.from([0, 1, 2, 255, 0, 10, 13]));
    git(workspace, 'add', '.gitignore', '.gitattributes', 'tracked.txt', 'old.txt', 'private.txt', 'image.bin');
    git(workspace, '-c', 'user.name=u', '-c', 'user.email=u@x', 'commit', '-qm', 'base');
    const marker = path.join(sandbox.root, 'hostile-ran');
    git(workspace, 'config', 'core.fsmonitor', `touch ${marker}`);
    git(workspace, 'config', 'filter.evil.clean', `touch ${marker}`);
    git(workspace, 'config', 'filter.evil.smudge', `touch ${marker}`);
    mkdirSync(path.join(workspace, '.git', 'hooks'), { recursive: true });
    for (const hook of ['pre-commit', 'post-checkout', 'post-index-change', 'reference-transaction'])
      writeFileSync(path.join(workspace, '.git', 'hooks', hook), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    const userGit = tree(path.join(workspace, '.git'));
    const provider = script(sandbox, [
      {
        tool_call: { name: 'fs_modify_file', arguments: { path: 'tracked.txt', old_string: 'two', new_string: 'TWO' } },
      },
      { tool_call: { name: 'fs_create_file', arguments: { path: 'src/deep/new.ts', content: 'export {};\n' } } },
      {
        tool_call: {
          name: 'fs_modify_file',
          arguments: { path: 'secret.env', old_string: 'TOKEN=1', new_string: 'TOKEN=2' },
        },
      },
      {
        tool_call: {
          name: 'run_command',
          arguments: {
            command:
              'rm old.txt && printf "#!/bin/sh\\n" > run.sh && chmod 755 run.sh tracked.txt && chmod 644 private.txt && printf "\\001\\002" > image.bin && echo more >> untracked.md && printf "x\\r\\n" >> windows.txt && ln -s tracked.txt link',
          },
        },
      },
    ]);
    const before = tree(workspace);
    const query = await runJp(sandbox, ['query', ...provider, ...unattended, 'change things']);
    assert.equal(query.code, 0, query.stderr);
    const after = tree(workspace);
    assert.notDeepEqual(after, before);
    assert.match(after['run.sh']!, /^file 755 /);
    const conversationId = lastConversation(sandbox);
    const checkpoints = readEvents(sandbox, conversationId).filter((event) => event.type === 'checkpoint');
    assert.deepEqual(
      checkpoints.map((event) => event.when),
      ['before', 'after'],
    );
    assert.equal(checkpoints[1]!.changed, 10, JSON.stringify(checkpoints[1]));

    // diff in a pipe: git's unified diff, plain.
    const diff = await runJp(sandbox, ['conversation', 'diff']);
    assert.equal(diff.code, 0, diff.stderr);
    assert.doesNotMatch(diff.stdout, /\u001b\[/);
    assert.match(
      diff.stdout,
      /--- a\/tracked.txt\n\+\+\+ b\/tracked.txt\n@@ -1,3 \+1,3 @@\n one\n-two\n\+TWO\n three\n/,
    );
    assert.match(diff.stdout, /diff --git a\/old.txt b\/old.txt\ndeleted file mode 100644/);
    assert.match(diff.stdout, /diff --git a\/src\/deep\/new.ts b\/src\/deep\/new.ts\nnew file mode 100644/);
    assert.match(diff.stdout, /-TOKEN=1\n\+TOKEN=2/);
    assert.match(diff.stdout, /Binary files a\/image.bin and b\/image.bin differ/);
    const json = await runJp(sandbox, ['conversation', 'diff', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const line = JSON.parse(json.stdout);
    assert.equal(line.type, 'file_changes');
    assert.deepEqual(line.changes, ['turn 1']);
    assert.deepEqual(
      Object.fromEntries(line.files.map((file: { path: string; change: string }) => [file.path, file.change])),
      {
        'image.bin': 'modified',
        link: 'added',
        'old.txt': 'deleted',
        'private.txt': 'modified',
        'run.sh': 'added',
        'secret.env': 'modified',
        'src/deep/new.ts': 'added',
        'tracked.txt': 'modified',
        'untracked.md': 'modified',
        'windows.txt': 'modified',
      },
    );
    assert.equal(line.files.find((file: { path: string }) => file.path === 'image.bin').binary, true);

    // print and ls mark the turn.
    const print = await runJp(sandbox, ['conversation', 'print']);
    assert.match(print.stderr, /\[changed 10 files: .* \(jp conversation diff --turn 1; undo\)\]/);
    const ls = await runJp(sandbox, ['conversation', 'ls']);
    assert.match(ls.stdout, /\[changed files: turn 1\] change things/);
    const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout);
    assert.deepEqual(listed[0].changed_turns, [1]);

    const undo = await runJp(sandbox, ['conversation', 'undo']);
    assert.equal(undo.code, 0, undo.stderr);
    assert.match(undo.stderr, /Undid turn 1 of /);
    assert.deepEqual(tree(workspace), before);
    assert.deepEqual(tree(path.join(workspace, '.git')), userGit, "the user's .git is untouched");
    assert.equal(existsSync(marker), false, "no hook, fsmonitor or filter of the workspace's git ran");
    assert.deepEqual(
      readEvents(sandbox, conversationId)
        .filter((event) => event.type === 'undo')
        .map((event) => event.undone),
      [['turn 1']],
    );

    // The undo is a change of its own: undoing it brings the turn's files back.
    const redo = await runJp(sandbox, ['conversation', 'undo']);
    assert.equal(redo.code, 0, redo.stderr);
    assert.match(redo.stderr, /Undid undo 1 of /);
    assert.deepEqual(tree(workspace), after);
  });

  it('at a terminal the diff is coloured, and file content is drawn visibly, never obeyed', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'plain\n');
    const provider = script(sandbox, [
      {
        tool_call: {
          name: 'fs_modify_file',
          arguments: { path: 'a.txt', old_string: 'plain', new_string: 'added \u001b]0;owned\u0007\u001b[2Jline' },
        },
      },
    ]);
    assert.equal((await runJp(sandbox, ['query', ...provider, ...unattended, 'go'])).code, 0);
    const screen = Screen.jp(sandbox, ['conversation', 'diff'], { cleanup });
    assert.equal((await screen.exited).exitCode, 0);
    assert.deepEqual(
      screen.rowStyles('+added ^[]0;owned^G^[[2Jline').map((style) => style.color),
      [2],
    );
    assert.deepEqual(
      screen.rowStyles('-plain').map((style) => style.color),
      [1],
    );
    assert.deepEqual(screen.titles, [], 'an escape sequence in a file never sets the title');
    const plain = Screen.jp(sandbox, ['conversation', 'diff'], { cleanup, env: { NO_COLOR: '1' } });
    await plain.exited;
    assert.deepEqual(
      plain.rowStyles('-plain').map((style) => style.color),
      [undefined],
    );
  });

  it('works in a directory that is no git repository, and names what it leaves out', async () => {
    const sandbox = cleanup.sandbox({ config: '[checkpoints]\nmax_file_size = 1000\n' });
    sandbox.write('a.txt', 'alpha\n');
    sandbox.write('big.dat', 'x'.repeat(5000));
    const before = tree(sandbox.workspace);
    const provider = script(sandbox, [
      { tool_call: { name: 'fs_modify_file', arguments: { path: 'a.txt', old_string: 'alpha', new_string: 'beta' } } },
      { tool_call: { name: 'run_command', arguments: { command: 'echo y >> big.dat && mkdir -p d && echo z > d/z' } } },
    ]);
    const query = await runJp(sandbox, ['query', ...provider, ...unattended, 'go']);
    assert.equal(query.code, 0, query.stderr);
    assert.match(
      query.stderr,
      /not in the checkpoint, so undo cannot restore them: big.dat \(over checkpoints.max_file_size\)/,
    );
    const undo = await runJp(sandbox, ['conversation', 'undo']);
    assert.equal(undo.code, 0, undo.stderr);
    assert.match(undo.stderr, /not in the checkpoints, so left as they are: big.dat/);
    const restored = tree(sandbox.workspace);
    assert.equal(restored['a.txt'], before['a.txt']);
    assert.equal(restored['d/'], undefined, 'the directory the turn made is gone with its file');
    assert.equal(readFileSync(path.join(sandbox.workspace, 'big.dat'), 'utf8'), `${'x'.repeat(5000)}y\n`);
    assert.equal(existsSync(path.join(sandbox.workspace, '.git')), false);
  });

  it('refuses to overwrite a file changed outside jp since, and takes it back with --force', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'one\n');
    sandbox.write('b.txt', 'bee\n');
    const provider = script(sandbox, [
      { tool_call: { name: 'fs_modify_file', arguments: { path: 'a.txt', old_string: 'one', new_string: 'two' } } },
      { tool_call: { name: 'fs_modify_file', arguments: { path: 'b.txt', old_string: 'bee', new_string: 'BEE' } } },
    ]);
    assert.equal((await runJp(sandbox, ['query', ...provider, ...unattended, 'go'])).code, 0);
    sandbox.write('a.txt', 'two, and my own edit\n');
    const refused = await runJp(sandbox, ['conversation', 'undo']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /nothing was undone: this file has changed since jp changed it: .*a\.txt/);
    assert.match(refused.stderr, /--force/);
    assert.equal(sandbox.read('a.txt'), 'two, and my own edit\n');
    assert.equal(sandbox.read('b.txt'), 'BEE\n', 'nothing is written when one file is refused');
    const forced = await runJp(sandbox, ['conversation', 'undo', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stderr, /overwrote changes made outside jp since \(--force\): a\.txt/);
    assert.equal(sandbox.read('a.txt'), 'one\n');
    assert.equal(sandbox.read('b.txt'), 'bee\n');
  });

  it('a run killed mid-batch (SIGKILL) is undone from its checkpoint; a detached run is diffed after the fact', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'before\n');
    const provider = script(sandbox, [
      {
        tool_call: { name: 'fs_modify_file', arguments: { path: 'a.txt', old_string: 'before', new_string: 'during' } },
      },
      { tool_call: { name: 'run_command', arguments: { command: 'echo made > made.txt; sleep 60' } } },
    ]);
    const detached = await runJp(sandbox, [
      'query',
      '--detach',
      ...provider,
      ...unattended,
      '-c',
      'conversation.tools.defaults.detached="auto"',
      'go',
    ]);
    assert.equal(detached.code, 0, detached.stderr);
    const conversationId = lastConversation(sandbox);
    await eventually('the command has written its file', () => sandbox.exists('made.txt'));
    const whileRunning = await runJp(sandbox, ['conversation', 'undo', conversationId]);
    assert.equal(whileRunning.code, 5, 'a run going on holds the conversation');
    assert.equal(sandbox.read('a.txt'), 'during\n');
    const killed = await runJp(sandbox, ['conversation', 'kill', '--force', conversationId]);
    assert.equal(killed.code, 0, killed.stderr);
    await eventually('the run is gone', async () => {
      const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout);
      return listed.every((entry: { state: string }) => entry.state !== 'running');
    });
    const events = readEvents(sandbox, conversationId);
    assert.deepEqual(
      events.filter((event) => event.type === 'checkpoint').map((event) => event.when),
      ['before'],
      'the batch never ended: only its before checkpoint is recorded',
    );
    const diff = await runJp(sandbox, ['conversation', 'diff', conversationId]);
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /-before\n\+during/);
    assert.match(diff.stdout, /\+\+\+ b\/made.txt/);
    const undo = await runJp(sandbox, ['conversation', 'undo', conversationId]);
    assert.equal(undo.code, 0, undo.stderr);
    assert.equal(sandbox.read('a.txt'), 'before\n');
    assert.equal(sandbox.exists('made.txt'), false);
  });

  it('never writes through a symbolic link planted where a directory was, even with --force', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('sub/keep.txt', 'keep\n');
    const outside = path.join(sandbox.root, 'outside');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'new.txt'), "not jp's\n");
    const provider = script(sandbox, [
      { tool_call: { name: 'fs_create_file', arguments: { path: 'sub/new.txt', content: 'made by the turn\n' } } },
    ]);
    assert.equal((await runJp(sandbox, ['query', ...provider, ...unattended, 'go'])).code, 0);
    execFileSync('/bin/sh', ['-c', `rm -r sub && ln -s ${outside} sub`], { cwd: sandbox.workspace });
    const refused = await runJp(sandbox, ['conversation', 'undo']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /changed since/);
    const forced = await runJp(sandbox, ['conversation', 'undo', '--force']);
    assert.equal(forced.code, 1, forced.stderr);
    assert.match(forced.stderr, /is a symbolic link now, and undo never writes through a link/);
    assert.equal(readFileSync(path.join(outside, 'new.txt'), 'utf8'), "not jp's\n");
    assert.deepEqual(readdirSync(outside), ['new.txt']);
  });

  it('the checkpoint store is not visible to the commands the model runs', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'a\n');
    const first = script(sandbox, [
      { tool_call: { name: 'fs_modify_file', arguments: { path: 'a.txt', old_string: 'a', new_string: 'b' } } },
    ]);
    assert.equal((await runJp(sandbox, ['query', ...first, ...unattended, 'go'])).code, 0);
    const store = path.join(sandbox.userDirectory(), 'checkpoints');
    const repository = path.join(store, readdirSync(store)[0]!, 'repository');
    assert.ok(existsSync(path.join(repository, 'HEAD')), 'the store exists outside the sandbox');
    const probe = script(
      sandbox,
      [
        {
          tool_call: {
            name: 'run_command',
            arguments: { command: `ls ${repository}/ && echo SEEN > ${repository}/planted` },
          },
        },
      ],
      'probe.json',
    );
    const run = await runJp(sandbox, ['query', ...probe, ...unattended, 'look']);
    assert.equal(run.code, 0, run.stderr);
    const result = readEvents(sandbox, lastConversation(sandbox))
      .filter((event) => event.type === 'tool_call_response')
      .pop();
    assert.match(result!.content, /ls: /, 'the command ran and could not list it');
    assert.doesNotMatch(result!.content, /HEAD|objects/, 'the store is not listed inside the sandbox');
    assert.equal(existsSync(path.join(repository, 'planted')), false);
  });

  it('with no git on PATH, says so once, names the setting, and the turn goes on', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'a\n');
    const provider = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'b.txt', content: 'b' } } }] },
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'c.txt', content: 'c' } } }] },
        { parts: [{ text: 'Done.' }] },
      ],
    });
    const query = await runJp(sandbox, ['query', ...provider, ...unattended, 'go'], {
      env: { PATH: path.dirname(process.execPath) },
    });
    assert.equal(query.code, 0, query.stderr);
    assert.equal(query.stderr.match(/git is not on PATH/g)?.length, 1, query.stderr);
    assert.match(query.stderr, /checkpoints\.enabled = false/);
    assert.equal(sandbox.read('c.txt'), 'c');
  });

  it('a workspace with more files than checkpoints.max_files says so once and keeps no checkpoint', async () => {
    const sandbox = cleanup.sandbox();
    for (let index = 0; index < 12; index++) sandbox.write(`f${index}.txt`, `${index}\n`);
    const provider = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'b.txt', content: 'b' } } }] },
        { parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: 'c.txt', content: 'c' } } }] },
        { parts: [{ text: 'Done.' }] },
      ],
    });
    const query = await runJp(sandbox, ['query', ...provider, ...unattended, '-c', 'checkpoints.max_files=5', 'go']);
    assert.equal(query.code, 0, query.stderr);
    assert.equal(query.stderr.match(/no checkpoints in this run/g)?.length, 1, query.stderr);
    assert.match(
      query.stderr,
      /too large to checkpoint quickly \(more than 5 files that are not ignored, checkpoints\.max_files/,
    );
    assert.equal(
      readEvents(sandbox, lastConversation(sandbox)).filter((event) => event.type === 'checkpoint').length,
      0,
    );
    const undo = await runJp(sandbox, ['conversation', 'undo']);
    assert.equal(undo.code, 2);
    assert.match(undo.stderr, /nothing to undo/);
  });

  it('a fork carries the checkpoints: its turns are diffed and undone like the source', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('a.txt', 'a\n');
    const provider = script(sandbox, [
      { tool_call: { name: 'fs_modify_file', arguments: { path: 'a.txt', old_string: 'a', new_string: 'b' } } },
    ]);
    assert.equal((await runJp(sandbox, ['query', ...provider, ...unattended, 'go'])).code, 0);
    const source = lastConversation(sandbox);
    const fork = await runJp(sandbox, ['conversation', 'fork', source, '--json']);
    assert.equal(fork.code, 0, fork.stderr);
    const forked = JSON.parse(fork.stdout).conversation_id as string;
    const diff = await runJp(sandbox, ['conversation', 'diff', forked, '--turn', '1']);
    assert.match(diff.stdout, /-a\n\+b/);
    const second = script(
      sandbox,
      [{ tool_call: { name: 'fs_create_file', arguments: { path: 'c.txt', content: 'c\n' } } }],
      'second.json',
    );
    assert.equal((await runJp(sandbox, ['query', '--id', forked, ...second, ...unattended, 'more'])).code, 0);
    // `print --last` shows the last turn alone, and still names it by its number.
    const last = await runJp(sandbox, ['conversation', 'print', forked, '--last']);
    assert.match(last.stderr, /\[changed 1 file: c\.txt \(jp conversation diff --turn 2; undo\)\]/);
    assert.equal((await runJp(sandbox, ['conversation', 'undo', forked, '--turn', '1'])).code, 0);
    assert.equal(sandbox.exists('c.txt'), false);
    assert.equal(sandbox.read('a.txt'), 'a\n');
  });
});
