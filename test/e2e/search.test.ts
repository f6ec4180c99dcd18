/**
 * fs_search as the model uses it, through the real binary: with ripgrep on PATH (a wrapper that
 * records that it ran, then runs the real one) and without it, the same tree gives the same bytes;
 * .gitignore (nested, negated, anchored, directories), jp's exclusions, binary and huge files,
 * symlink loops, the result cap and bad patterns.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { conversationIds, readEvents, runJp, testProvider, useCleanup, type Sandbox } from '../support/jp.ts';

const cleanup = useCleanup();

async function callTools(
  sandbox: Sandbox,
  calls: { name: string; arguments: unknown }[],
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  const before = new Set(conversationIds(sandbox));
  const script = testProvider(
    sandbox,
    { steps: [{ parts: calls.map((call) => ({ tool_call: call })) }, { parts: [{ text: 'done' }] }] },
    `.script-${before.size}.json`,
  );
  const result = await runJp(sandbox, ['query', '--new', ...script, 'search'], { env });
  assert.equal(result.code, 0, result.stderr);
  const id = conversationIds(sandbox).find((candidate) => !before.has(candidate))!;
  return readEvents(sandbox, id)
    .filter((event) => event.type === 'tool_call_response')
    .map((event) => event.content as string);
}

function searchTree(sandbox: Sandbox): void {
  sandbox.write('.gitignore', '*.log\nbuild/\n!keep.log\n/anchored.txt\n.script-*\n*.TMP\n');
  sandbox.write('keep.tmp', 'needle (rules are case-sensitive: *.TMP does not ignore it)\n');
  sandbox.write('src/a.ts', 'const first = 1;\nconst needle = 2;\n// needle again\n');
  sandbox.write('src/b.ts', 'export const NEEDLE = 3;\r\n');
  sandbox.write('src/sub/.gitignore', 'generated.ts\n');
  sandbox.write('src/sub/generated.ts', 'needle (ignored by src/sub/.gitignore)\n');
  sandbox.write('src/sub/c.ts', `${'x'.repeat(500)} needle ${'y'.repeat(500)}\n`);
  sandbox.write('build/out.js', 'needle (ignored directory)\n');
  sandbox.write('x.log', 'needle (ignored by *.log)\n');
  sandbox.write('keep.log', 'needle (kept by !keep.log)\n');
  sandbox.write('anchored.txt', 'needle (ignored: /anchored.txt)\n');
  sandbox.write('deep/anchored.txt', 'needle (not ignored: the rule is anchored at the root)\n');
  sandbox.write('node_modules/m/index.js', 'needle (node_modules)\n');
  sandbox.write('.jp/notes.txt', "needle (jp's own directory)\n");
  sandbox.write('.hidden/h.txt', 'needle (a dot directory is searched)\n');
  sandbox.write('a/b.txt', 'needle in a/b\n');
  sandbox.write('a-c.txt', 'needle in a-c\n');
  writeFileSync(
    path.join(sandbox.workspace, 'binary.dat'),
    Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1, 2])]),
  );
  // A file over 16 MB, written without holding it in memory.
  const fd = openSync(path.join(sandbox.workspace, 'huge.txt'), 'w');
  const block = Buffer.from(`${'needle '.repeat(146)}\n`.repeat(1024));
  for (let written = 0; written <= 17 * 1024 * 1024; written += block.length) writeSync(fd, block);
  closeSync(fd);
  symlinkSync('.', path.join(sandbox.workspace, 'loop'));
  symlinkSync('../src', path.join(sandbox.workspace, 'src', 'again'));
  symlinkSync('src/a.ts', path.join(sandbox.workspace, 'link.ts'));
  execFileSync('mkfifo', [path.join(sandbox.workspace, 'pipe.txt')]);
}

const calls = [
  { name: 'fs_search', arguments: { pattern: 'needle' } },
  { name: 'fs_search', arguments: { pattern: 'needle', case_sensitive: false, glob: '*.ts' } },
  { name: 'fs_search', arguments: { pattern: 'needle', path: 'src', max_results: 2 } },
  { name: 'fs_search', arguments: { pattern: 'needle', path: 'src/sub' } },
  { name: 'fs_search', arguments: { pattern: 'nEEdle', case_sensitive: false, path: 'src', glob: '{b,c}.ts' } },
  { name: 'fs_search', arguments: { pattern: 'absent' } },
  { name: 'fs_search', arguments: { pattern: '(unclosed' } },
  { name: 'fs_search', arguments: { pattern: 'needle', path: '..' } },
  { name: 'fs_search', arguments: { pattern: 'needle', path: '.jp' } },
];

const longLine = `…${'x'.repeat(39)} needle ${'y'.repeat(193)}…`;

const expected = [
  [
    '9 matches in 8 files:',
    '.hidden/h.txt:1: needle (a dot directory is searched)',
    'a/b.txt:1: needle in a/b',
    'a-c.txt:1: needle in a-c',
    'deep/anchored.txt:1: needle (not ignored: the rule is anchored at the root)',
    'keep.log:1: needle (kept by !keep.log)',
    'keep.tmp:1: needle (rules are case-sensitive: *.TMP does not ignore it)',
    'src/a.ts:2: const needle = 2;',
    'src/a.ts:3: // needle again',
    `src/sub/c.ts:1: ${longLine}`,
    '[jp: not searched: 1 binary file; 1 file larger than 16 MB (huge.txt)]',
  ].join('\n'),
  [
    '4 matches in 3 files:',
    'src/a.ts:2: const needle = 2;',
    'src/a.ts:3: // needle again',
    'src/b.ts:1: export const NEEDLE = 3;',
    `src/sub/c.ts:1: ${longLine}`,
  ].join('\n'),
  [
    'The first 2 matches in 1 file (results cut at max_results = 2; there are more: narrow the pattern, path or glob, or raise max_results):',
    'src/a.ts:2: const needle = 2;',
    'src/a.ts:3: // needle again',
  ].join('\n'),
  ['1 match in 1 file:', `src/sub/c.ts:1: ${longLine}`].join('\n'),
  ['2 matches in 2 files:', 'src/b.ts:1: export const NEEDLE = 3;', `src/sub/c.ts:1: ${longLine}`].join('\n'),
  'No matches for /absent/ in 13 files of the workspace.\n[jp: not searched: 1 binary file; 1 file larger than 16 MB (huge.txt)]',
];

describe('fs_search', () => {
  it('gives the same output with ripgrep on PATH and without it: gitignore, exclusions, binary, huge, symlink loops, caps', async () => {
    const sandbox = cleanup.sandbox();
    searchTree(sandbox);
    const realRipgrep = execFileSync('sh', ['-c', 'command -v rg']).toString().trim();
    const wrapperDirectory = path.join(sandbox.root, 'bin');
    mkdirSync(wrapperDirectory);
    const record = path.join(sandbox.root, 'rg-ran');
    writeFileSync(
      path.join(wrapperDirectory, 'rg'),
      `#!/bin/sh\necho "$@" >> '${record}'\nexec '${realRipgrep}' "$@"\n`,
    );
    chmodSync(path.join(wrapperDirectory, 'rg'), 0o755);

    const withRipgrep = await callTools(sandbox, calls, { PATH: `${wrapperDirectory}:/usr/bin:/bin` });
    assert.ok(existsSync(record), 'ripgrep ran');
    assert.match(readFileSync(record, 'utf8'), /^--files /m);
    const withoutRipgrep = await callTools(sandbox, calls, { PATH: path.join(sandbox.root, 'no-such-directory') });

    for (const [index, want] of expected.entries()) {
      assert.equal(withRipgrep[index], want, `call ${index} with ripgrep`);
      assert.equal(withoutRipgrep[index], want, `call ${index} without ripgrep`);
    }
    assert.deepEqual(withoutRipgrep, withRipgrep, 'the same bytes, every call');
    assert.match(
      withRipgrep[6]!,
      /^invalid regular expression "\(unclosed": .*The pattern is a JavaScript regular expression/,
    );
    assert.match(withRipgrep[7]!, /is outside the workspace/);
    assert.match(withRipgrep[8]!, /^refused: ".jp" is off limits to file tools/);
  });

  it('runs unattended by default, like fs_read_file (no approval asked, none needed)', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('one.txt', 'needle\n');
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'fs_search', arguments: { pattern: 'needle', glob: '*.txt' } } }] },
        { parts: [{ text: 'done' }] },
      ],
    });
    const result = await runJp(sandbox, ['query', '--json', ...script, 'search']);
    assert.equal(result.code, 0, result.stderr);
    const id = conversationIds(sandbox)[0]!;
    const events = readEvents(sandbox, id);
    assert.ok(!events.some((event) => event.type === 'inquiry_request'));
    assert.match(
      events.find((event) => event.type === 'tool_call_response')!.content,
      /^1 match in 1 file:\none\.txt:1: needle$/,
    );
  });
});
