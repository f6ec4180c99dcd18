/**
 * The builtin file tools as the model uses them, through the real binary and the test provider:
 * globs of a maintained glob library, jp's own directories out of reach whatever the policy,
 * atomic modification that keeps the mode (a SIGKILL mid-write leaves the old or the new file),
 * and reads bounded in memory (huge, binary and non-regular files).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  collect,
  conversationIds,
  eventually,
  readEvents,
  runJp,
  sleep,
  startJp,
  testProvider,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';

const cleanup = useCleanup();

/** Every tool result of a conversation, in order. */
function toolResults(sandbox: Sandbox, id: string): string[] {
  return readEvents(sandbox, id)
    .filter((event) => event.type === 'tool_call_response')
    .map((event) => event.content as string);
}

/** Runs one query whose model calls `calls` (in one batch), every tool running unattended (no inquiry). */
async function callTools(
  sandbox: Sandbox,
  calls: { name: string; arguments: unknown }[],
  env: NodeJS.ProcessEnv = {},
): Promise<string[]> {
  const before = new Set(conversationIds(sandbox));
  const script = testProvider(
    sandbox,
    { steps: [{ parts: calls.map((call) => ({ tool_call: call })) }, { parts: [{ text: 'done' }] }] },
    `script-${before.size}.json`,
  );
  const result = await runJp(
    sandbox,
    ['query', '--new', ...script, '-c', 'conversation.tools.defaults.run="unattended"', 'use the tools'],
    { env },
  );
  assert.equal(result.code, 0, result.stderr);
  const id = conversationIds(sandbox).find((candidate) => !before.has(candidate))!;
  return toolResults(sandbox, id);
}

function listed(result: string): string[] {
  return result.split('\n').slice(1);
}

describe('fs_list_files globs', () => {
  it('brace and class globs match, with ** across directories', async () => {
    const sandbox = cleanup.sandbox();
    for (const file of [
      'a.ts',
      'b.tsx',
      'c.js',
      'src/a.ts',
      'src/b.ts',
      'src/c.ts',
      'src/deep/x.tsx',
      'node_modules/m/i.ts',
      '.git/h.ts',
    ])
      sandbox.write(file, 'x');
    const [braces, classes, all] = await callTools(sandbox, [
      { name: 'fs_list_files', arguments: { pattern: '**/*.{ts,tsx}' } },
      { name: 'fs_list_files', arguments: { pattern: 'src/[ab].ts' } },
      { name: 'fs_list_files', arguments: {} },
    ]);
    assert.deepEqual(listed(braces!), ['a.ts', 'b.tsx', 'src/a.ts', 'src/b.ts', 'src/c.ts', 'src/deep/x.tsx'].sort());
    assert.match(braces!, /^6 files under \./);
    assert.deepEqual(listed(classes!), ['src/a.ts', 'src/b.ts']);
    assert.ok(
      !listed(all!).some(
        (file) => file.startsWith('.jp/') || file.startsWith('node_modules/') || file.startsWith('.git/'),
      ),
      all,
    );
    assert.ok(listed(all!).includes('c.js'));
  });

  it('a pattern cannot climb out of the listed directory', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('inside.txt', 'x');
    const results = await callTools(sandbox, [
      { name: 'fs_list_files', arguments: { pattern: '../**' } },
      { name: 'fs_list_files', arguments: { pattern: '{..,x}/*' } },
      { name: 'fs_list_files', arguments: { pattern: '/etc/*' } },
    ]);
    for (const result of results) assert.match(result, /must be relative to the listed directory and stay inside it/);
  });
});

describe("jp's own directories are out of the file tools' reach", () => {
  it('.jp/ and the user config directory: refused whatever the policy, through .. and symlinks too', async () => {
    const sandbox = cleanup.sandbox({ config: '[assistant]\n' });
    // A user whose config directory is inside the workspace (a workspace at $HOME is the usual case).
    const configHome = path.join(sandbox.workspace, 'home-config');
    mkdirSync(path.join(configHome, 'jp'), { recursive: true });
    writeFileSync(path.join(configHome, 'jp', 'config.toml'), '# the user config\n');
    symlinkSync('.jp', path.join(sandbox.workspace, 'innocent'));
    symlinkSync(path.join(configHome, 'jp'), path.join(sandbox.workspace, 'settings'));
    mkdirSync(path.join(sandbox.workspace, 'sub'));
    const before = readFileSync(path.join(sandbox.workspace, '.jp', 'config.toml'), 'utf8');
    const results = await callTools(
      sandbox,
      [
        {
          name: 'fs_modify_file',
          arguments: {
            path: '.jp/config.toml',
            old_string: '[assistant]',
            new_string: '[conversation.hooks]\non_waiting = "sh evil.sh"\n[assistant]',
          },
        },
        { name: 'fs_create_file', arguments: { path: 'sub/../.jp/new.toml', content: 'x' } },
        {
          name: 'fs_modify_file',
          arguments: { path: 'innocent/config.toml', old_string: '[assistant]', new_string: '[x]' },
        },
        { name: 'fs_read_file', arguments: { path: '.jp/config.toml' } },
        { name: 'fs_list_files', arguments: { path: '.jp' } },
        {
          name: 'fs_modify_file',
          arguments: { path: 'home-config/jp/config.toml', old_string: '# the user config', new_string: 'evil = 1' },
        },
        { name: 'fs_create_file', arguments: { path: 'settings/other.toml', content: 'x' } },
        { name: 'fs_read_file', arguments: { path: 'settings/config.toml' } },
      ],
      { XDG_CONFIG_HOME: configHome },
    );
    assert.equal(results.length, 8);
    for (const result of results) {
      assert.match(result, /^refused: ".+" is off limits to file tools because it is inside /, result);
      assert.match(result, /ask the user to make this change themselves/);
    }
    assert.match(results[0]!, /inside \.jp\//);
    assert.match(results[5]!, /home-config\/jp, jp's own configuration/);
    assert.equal(readFileSync(path.join(sandbox.workspace, '.jp', 'config.toml'), 'utf8'), before);
    assert.equal(existsSync(path.join(sandbox.workspace, '.jp', 'new.toml')), false);
    assert.equal(readFileSync(path.join(configHome, 'jp', 'config.toml'), 'utf8'), '# the user config\n');
    assert.equal(existsSync(path.join(configHome, 'jp', 'other.toml')), false);
  });
});

describe('fs_create_file', () => {
  it('says how many bytes it wrote, in words a person reads: 1 byte, 12 bytes', async () => {
    const sandbox = cleanup.sandbox();
    const results = await callTools(sandbox, [
      { name: 'fs_create_file', arguments: { path: 'one.txt', content: 'a' } },
      { name: 'fs_create_file', arguments: { path: 'twelve.txt', content: 'twelve bytes' } },
    ]);
    assert.deepEqual(results, ['created one.txt (1 byte)', 'created twelve.txt (12 bytes)']);
  });
});

describe('fs_modify_file writes atomically', () => {
  it('keeps the mode of the file it changes', async () => {
    const sandbox = cleanup.sandbox();
    const script = sandbox.write('run.sh', '#!/bin/sh\necho old\n');
    chmodSync(script, 0o750);
    const shared = sandbox.write('shared.txt', 'old text\n');
    chmodSync(shared, 0o664);
    const results = await callTools(sandbox, [
      { name: 'fs_modify_file', arguments: { path: 'run.sh', old_string: 'echo old', new_string: 'echo new' } },
      { name: 'fs_modify_file', arguments: { path: 'shared.txt', old_string: 'old', new_string: 'new' } },
    ]);
    assert.deepEqual(results, ['modified run.sh', 'modified shared.txt']);
    assert.equal(readFileSync(script, 'utf8'), '#!/bin/sh\necho new\n');
    assert.equal(statSync(script).mode & 0o7777, 0o750);
    assert.equal(statSync(shared).mode & 0o7777, 0o664);
    assert.deepEqual(
      readdirSync(sandbox.workspace).filter((name) => name.endsWith('.tmp')),
      [],
    );
  });

  it('a SIGKILL at random instants while it writes leaves the old file or the new one, never a truncated one', async () => {
    const sandbox = cleanup.sandbox();
    // Big enough that writing it takes a while (~100 MB).
    const body = Buffer.from('a line of the file that the model edits, repeated to make it big\n'.repeat(1_500_000));
    const oldContent = Buffer.concat([body, Buffer.from('MARKER-OLD\n')]);
    const newContent = Buffer.concat([body, Buffer.from('MARKER-NEW\n')]);
    const digest = (data: Buffer): string => createHash('sha256').update(data).digest('hex');
    const expected = new Map([
      [digest(oldContent), 'old'],
      [digest(newContent), 'new'],
    ]);
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            {
              tool_call: {
                name: 'fs_modify_file',
                arguments: { path: 'big.txt', old_string: 'MARKER-OLD', new_string: 'MARKER-NEW' },
              },
            },
          ],
        },
        { parts: [{ text: 'done' }] },
      ],
    });
    const args = [
      'query',
      '--new',
      '--no-server',
      ...script,
      '-c',
      'conversation.tools.defaults.run="unattended"',
      'edit it',
    ];
    const eventsOf = (id: string): string => {
      try {
        return readFileSync(path.join(sandbox.workspace, '.jp', 'conversations', id, 'events.ndjson'), 'utf8');
      } catch {
        return '';
      }
    };
    // How long the tool takes, from an uninterrupted run: the kills are spread over that time.
    const file = sandbox.write('big.txt', '');
    writeFileSync(file, oldContent);
    const measured = await runJp(sandbox, args);
    assert.equal(measured.code, 0, measured.stderr);
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    const toolMs =
      Date.parse(events.find((event) => event.type === 'tool_call_response')!.timestamp) -
      Date.parse(events.find((event) => event.type === 'tool_call_start')!.timestamp);
    const outcomes: string[] = [];
    for (let trial = 0; trial < 8; trial++) {
      writeFileSync(file, oldContent);
      const before = new Set(conversationIds(sandbox));
      const child = startJp(sandbox, args);
      const finished = collect(child, args, 60_000);
      // A tight watch for the start of the tool (a 20 ms poll could miss the whole write).
      const deadline = Date.now() + 30_000;
      for (;;) {
        const id = conversationIds(sandbox).find((candidate) => !before.has(candidate));
        if (id !== undefined && eventsOf(id).includes('"tool_call_start"')) break;
        assert.ok(Date.now() < deadline, 'the tool never started');
        await sleep(1);
      }
      await sleep(Math.random() * toolMs);
      try {
        process.kill(child.pid!, 'SIGKILL');
      } catch {
        // it finished first
      }
      await finished;
      const outcome = expected.get(digest(readFileSync(file)));
      assert.ok(
        outcome,
        `trial ${trial}: the file is neither the old nor the new content (${statSync(file).size} bytes)`,
      );
      outcomes.push(outcome);
    }
    // The temporaries the kills left are removed by the next modification (their process is gone).
    const marker = outcomes[outcomes.length - 1] === 'new' ? 'MARKER-NEW' : 'MARKER-OLD';
    const results = await callTools(sandbox, [
      { name: 'fs_modify_file', arguments: { path: 'big.txt', old_string: marker, new_string: 'END' } },
    ]);
    assert.deepEqual(results, ['modified big.txt']);
    assert.deepEqual(
      readdirSync(sandbox.workspace).filter((name) => name.endsWith('.tmp')),
      [],
      `tool ${toolMs} ms; ${outcomes.join(', ')}`,
    );
  });
});

describe('fs_read_file bounds what it reads', () => {
  it('a 200 MB file: the server stays small; the model gets its first lines, its length, and any part it asks for', async () => {
    const sandbox = cleanup.sandbox();
    const file = path.join(sandbox.workspace, 'huge.log');
    const line = Buffer.from('0123456789 a log line of a very long log file, repeated many times\n');
    const chunk = Buffer.concat(Array.from({ length: 16_000 }, () => line));
    const fd = openSync(file, 'w');
    writeSync(fd, Buffer.from('FIRST LINE\n'));
    let lines = 1;
    let size = 11;
    for (let written = 0; written < 200 * 1024 * 1024; written += chunk.length) {
      writeSync(fd, chunk);
      lines += 16_000;
      size += chunk.length;
    }
    writeSync(fd, Buffer.from('LAST LINE\n'));
    lines += 1;
    size += 10;
    closeSync(fd);
    const script = testProvider(sandbox, {
      steps: [
        {
          parts: [
            { tool_call: { name: 'fs_read_file', arguments: { path: 'huge.log' } } },
            { tool_call: { name: 'fs_read_file', arguments: { path: 'huge.log', offset: lines - 1 } } },
          ],
        },
        { parts: [{ delay_ms: 120_000 }, { text: 'never' }] },
      ],
    });
    const detached = await runJp(sandbox, ['query', '--detach', ...script, 'read the log']);
    assert.equal(detached.code, 0, detached.stderr);
    const id = detached.stdout.trim();
    await eventually(
      'the read results in the log',
      () => readEvents(sandbox, id).filter((event) => event.type === 'tool_call_response').length === 2,
    );
    const entry = JSON.parse(readFileSync(path.join(sandbox.userDirectory(), 'processes', `${id}.json`), 'utf8')) as {
      pid: number;
    };
    const peakKiB = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry.pid}/status`, 'utf8'))![1]);
    const killed = await runJp(sandbox, ['conversation', 'kill', id]);
    assert.equal(killed.code, 0, killed.stderr);
    // Never the file in memory: the server's peak stays below the file's size. (Streaming through it
    // to count its lines leaves buffers for the collector: the peak was 107 to 161 MB in 7 runs, a
    // whole read would be the file's 200 MB on top of the server's own ~70.)
    assert.ok(
      peakKiB * 1024 < size,
      `the server's peak RSS was ${Math.round(peakKiB / 1024)} MB while reading a ${Math.round(size / 1024 / 1024)} MB file`,
    );
    const [head, tail] = toolResults(sandbox, id);
    assert.match(head!, /^1\tFIRST LINE\n2\t0123456789 a log line/);
    const shown = head!.split('\n').length - 1;
    assert.equal(
      head!.slice(head!.lastIndexOf('\n') + 1),
      `[jp: lines 1-${shown} of ${lines} lines (${size} bytes) shown; continue with offset=${shown + 1}]`,
    );
    assert.ok(head!.length <= 30_000, 'within the output limit, cut at a line');
    assert.equal(
      tail,
      `${lines - 1}\t0123456789 a log line of a very long log file, repeated many times\n${lines}\tLAST LINE\n[jp: lines ${lines - 1}-${lines} of ${lines} lines (${size} bytes) shown]`,
    );
  });

  it('binary files and FIFOs are refused with a clear message, never waited on', async () => {
    const sandbox = cleanup.sandbox();
    writeFileSync(
      path.join(sandbox.workspace, 'image.png'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x1a, 0x0a]),
    );
    execFileSync('mkfifo', [path.join(sandbox.workspace, 'pipe')]);
    mkdirSync(path.join(sandbox.workspace, 'folder'));
    const [binary, fifo, folder] = await callTools(sandbox, [
      { name: 'fs_read_file', arguments: { path: 'image.png' } },
      { name: 'fs_read_file', arguments: { path: 'pipe' } },
      { name: 'fs_read_file', arguments: { path: 'folder' } },
    ]);
    assert.match(
      binary!,
      /image\.png looks like a binary file \(8 bytes, with NUL bytes\); fs_read_file reads text files only/,
    );
    assert.match(fifo!, /pipe is a FIFO; fs_read_file reads regular files only/);
    assert.match(folder!, /folder is a directory; fs_read_file reads regular files only; use fs_list_files/);
  });
});

describe('fs_read_file reads a part of a file, with line numbers', () => {
  it('offset and limit, the total length when partial, nothing added when whole, a clear error past the end', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('long.txt', Array.from({ length: 5000 }, (_, index) => `line ${index + 1}`).join('\n') + '\n');
    sandbox.write('short.txt', 'alpha\nbeta');
    sandbox.write('empty.txt', '');
    const size = statSync(path.join(sandbox.workspace, 'long.txt')).size;
    const [first, middle, end, short, empty, past] = await callTools(sandbox, [
      { name: 'fs_read_file', arguments: { path: 'long.txt' } },
      { name: 'fs_read_file', arguments: { path: 'long.txt', offset: 10, limit: 3 } },
      { name: 'fs_read_file', arguments: { path: 'long.txt', offset: 4999 } },
      { name: 'fs_read_file', arguments: { path: 'short.txt' } },
      { name: 'fs_read_file', arguments: { path: 'empty.txt' } },
      { name: 'fs_read_file', arguments: { path: 'long.txt', offset: 6000 } },
    ]);
    assert.ok(first!.startsWith('1\tline 1\n2\tline 2\n'));
    assert.ok(
      first!.endsWith(
        `\n2000\tline 2000\n[jp: lines 1-2000 of 5000 lines (${size} bytes) shown; continue with offset=2001]`,
      ),
      first!.slice(-120),
    );
    assert.equal(
      middle,
      `10\tline 10\n11\tline 11\n12\tline 12\n[jp: lines 10-12 of 5000 lines (${size} bytes) shown; continue with offset=13]`,
    );
    assert.equal(end, `4999\tline 4999\n5000\tline 5000\n[jp: lines 4999-5000 of 5000 lines (${size} bytes) shown]`);
    assert.equal(short, '1\talpha\n2\tbeta');
    assert.equal(empty, '[jp: empty.txt is empty]');
    assert.equal(past, 'offset 6000 is past the end of long.txt, which has 5000 lines');
  });

  it('stops at a line within the output limit instead of being cut in the middle', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('wide.txt', Array.from({ length: 1000 }, (_, index) => `${index + 1} ${'w'.repeat(100)}`).join('\n'));
    const [content] = await callTools(sandbox, [{ name: 'fs_read_file', arguments: { path: 'wide.txt' } }]);
    assert.ok(content!.length <= 30_000, `${content!.length} characters`);
    assert.doesNotMatch(content!, /omitted by jp/);
    const shown = content!.split('\n').length - 1;
    assert.ok(shown > 200 && shown < 1000, `${shown} lines`);
    assert.match(
      content!,
      new RegExp(
        `\\n\\[jp: lines 1-${shown} of 1000 lines \\(\\d+ bytes\\) shown; continue with offset=${shown + 1}\\]$`,
      ),
    );
  });
});

describe('fs_modify_file with several edits', () => {
  it('applies them in order, all of them, with replace_all', async () => {
    const sandbox = cleanup.sandbox();
    sandbox.write('app.ts', 'const a = 1;\nconst b = 2;\nlog(a);\nlog(b);\nlog(a);\n');
    const [result] = await callTools(sandbox, [
      {
        name: 'fs_modify_file',
        arguments: {
          path: 'app.ts',
          edits: [
            { old_string: 'const a = 1;', new_string: 'const first = 1;' },
            { old_string: 'log(a)', new_string: 'log(first)', replace_all: true },
            { old_string: 'const first = 1;\nconst b', new_string: 'const first = 1;\nconst second' },
          ],
        },
      },
    ]);
    assert.equal(result, 'modified app.ts: 3 edits, 4 replacements');
    assert.equal(sandbox.read('app.ts'), 'const first = 1;\nconst second = 2;\nlog(first);\nlog(b);\nlog(first);\n');
  });

  it('changes nothing when one edit cannot apply, and says which one and where the nearest text is', async () => {
    const sandbox = cleanup.sandbox();
    const original =
      'function start() {\n    return load(config);\n}\n\nfunction stop() {\n  close(handle);\n}\nclose(handle);\n';
    sandbox.write('app.js', original);
    const [notFound, whitespace, ambiguous, both] = await callTools(sandbox, [
      {
        name: 'fs_modify_file',
        arguments: {
          path: 'app.js',
          edits: [
            { old_string: 'function start()', new_string: 'function begin()' },
            { old_string: 'return loadd(config);', new_string: 'return load(settings);' },
          ],
        },
      },
      {
        name: 'fs_modify_file',
        arguments: { path: 'app.js', old_string: 'function stop() {\n    close(handle);', new_string: 'x' },
      },
      {
        name: 'fs_modify_file',
        arguments: { path: 'app.js', old_string: 'close(handle);', new_string: 'release(handle);' },
      },
      {
        name: 'fs_modify_file',
        arguments: { path: 'app.js', old_string: 'a', new_string: 'b', edits: [{ old_string: 'a', new_string: 'b' }] },
      },
    ]);
    assert.equal(
      notFound,
      'edit 2 of 2: old_string was not found in app.js (after the edits before it): the nearest line to its first line is line 2: "return load(config);". Nothing was changed: the edits apply all or none.',
    );
    assert.equal(
      whitespace,
      'old_string was not found in app.js: the same text with different whitespace or indentation is at line 5; copy it exactly from fs_read_file (without the line-number prefix).',
    );
    assert.equal(
      ambiguous,
      'old_string occurs 2 times in app.js (at lines 6, 8); include more of the surrounding text to make it unique, or set replace_all.',
    );
    assert.match(both!, /^give either old_string and new_string, or edits/);
    assert.equal(sandbox.read('app.js'), original, 'untouched');
  });
});
