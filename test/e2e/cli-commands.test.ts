/**
 * The everyday commands through the built binary: init, workspace discovery, config show (and its
 * errors), conversation ls / print / use / fork / rm, local command tools, and usage errors.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  conversationIds,
  jpBinary,
  readEvents,
  repositoryRoot,
  runJp,
  testProvider,
  useCleanup,
} from '../support/jp.ts';

const cleanup = useCleanup();
const sandboxed = cleanup.sandbox;

describe('the installed command', () => {
  const packageVersion = (
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  ).version;

  it('--version and -V print the package version on stdout, and nothing else anywhere', async () => {
    const sandbox = sandboxed({ init: false });
    for (const flag of ['--version', '-V']) {
      const result = await runJp(sandbox, [flag]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `jp ${packageVersion}\n`);
      assert.equal(result.stderr, '');
    }
  });

  it('every command line reaches the program with its streams and its exit code', async () => {
    const sandbox = sandboxed();
    const unknown = await runJp(sandbox, ['conversation', 'print', 'jp-cnosuch']);
    assert.notEqual(unknown.code, 0);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /jp-cnosuch/);
    const listed = await runJp(sandbox, ['conversation', 'ls', '--format', 'json']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(
      listed.stdout
        .trim()
        .split('\n')
        .every((line) => JSON.parse(line)),
      listed.stdout,
    );
  });

  it('bare `jp` leads with where to start (init, an offline first query, a key, the config file), then the commands; exit 2', async () => {
    const sandbox = sandboxed({ init: false });
    // jp on PATH as an install puts it (a symlink to the program), so the suggestions say `jp`.
    const bin = path.join(sandbox.root, 'bin');
    mkdirSync(bin);
    symlinkSync(jpBinary, path.join(bin, 'jp'));
    const result = await runJp(sandbox, [], { env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` } });
    assert.equal(result.code, 2, 'no command is a usage case');
    assert.equal(result.stdout, '');
    const lines = result.stderr.split('\n');
    assert.match(lines[0]!, /no command given\. Start here:/);
    const startHere = result.stderr.slice(0, result.stderr.indexOf('Usage: jp'));
    assert.ok(startHere.length > 0, 'the start comes before the usage');
    assert.match(startHere, /jp init /);
    const demo = path.join(repositoryRoot, 'examples', 'demo-script.json');
    assert.ok(startHere.includes(`jp query -m test -c providers.test.script=${demo} "hello"`), startHere);
    assert.match(startHere, /OPENAI_API_KEY/);
    assert.ok(startHere.includes(path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp', 'config.toml')), startHere);
    assert.match(result.stderr, /Commands:\n\s+init/);

    // The first query it suggests works as printed.
    const first = await runJp(sandbox, ['query', '-m', 'test', '-c', `providers.test.script=${demo}`, 'hello']);
    assert.equal(first.code, 3, `the demo asks to create a file, denied with no terminal: ${first.stderr}`);
    assert.match(first.stdout, /look at the workspace first/);
  });

  it('bare `jp` not on PATH (npx, a clone) suggests commands that run as printed, never a `jp` that is not there', async () => {
    const sandbox = sandboxed({ init: false });
    const result = await runJp(sandbox, []);
    assert.equal(result.code, 2);
    const startHere = result.stderr.slice(0, result.stderr.indexOf('Usage: jp'));
    const prefix = `node ${jpBinary}`;
    assert.ok(startHere.includes(`${prefix} init`), startHere);
    assert.doesNotMatch(startHere, /^ {2}jp /m, 'no bare jp suggested');
    assert.match(startHere, /jp is not on your PATH/);
    const npx = await runJp(sandbox, [], { env: { npm_command: 'exec', npm_config_package: './jp-agent-0.1.0.tgz' } });
    assert.match(npx.stderr, /^ {2}npx --package \.\/jp-agent-0\.1\.0\.tgz jp init/m);
    // What it suggests runs: the offline first query, through node and the program's path.
    const demo = path.join(repositoryRoot, 'examples', 'demo-script.json');
    assert.ok(startHere.includes(`${prefix} query -m test -c providers.test.script=${demo} "hello"`), startHere);
  });

  it('a mistyped command is a usage error that writes nothing anywhere (no cache named after it)', async () => {
    const sandbox = sandboxed();
    // Node 22+ keeps jp's compiled modules in ~/.cache/jp/compile-cache (hash-named, shared by every
    // command): the first typo fills it, the next ones must write nothing at all.
    assert.equal((await runJp(sandbox, ['warm', 'hello'])).code, 2);
    const before = filesUnder(sandbox.root);
    for (const typo of ['quer', 'conversation-ls', 'zzz']) {
      const result = await runJp(sandbox, [typo, 'hello']);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`unknown command '${typo}'`));
      assert.equal(result.stdout, '');
    }
    assert.deepEqual(filesUnder(sandbox.root), before);
  });
});

/** Every file under a directory, with its size (relative paths, sorted). */
function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      return `${path.relative(directory, file)} ${statSync(file).size}`;
    })
    .sort();
}

describe('workspaces', () => {
  it('init creates .jp/; commands find the nearest .jp/ upward; outside one, a per-user default workspace', async () => {
    const sandbox = sandboxed({ init: false });
    const initialized = await runJp(sandbox, ['init']);
    assert.equal(initialized.code, 0, initialized.stderr);
    assert.ok(statSync(path.join(sandbox.workspace, '.jp', 'conversations')).isDirectory());
    assert.match(
      readFileSync(path.join(sandbox.workspace, '.jp', 'config.toml'), 'utf8'),
      /\[conversation\.tools\.defaults\]/,
    );
    assert.equal((await runJp(sandbox, ['init'])).code, 0, 'init twice is harmless');

    const nested = path.join(sandbox.workspace, 'a', 'b');
    mkdirSync(nested, { recursive: true });
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'hi' }] }] });
    assert.equal(
      (
        await runJp(
          sandbox,
          [
            'query',
            ...script.slice(0, 2),
            '-c',
            `providers.test.script=${path.join(sandbox.workspace, 'script.json')}`,
            'from below',
          ],
          { cwd: nested },
        )
      ).code,
      0,
    );
    assert.equal(conversationIds(sandbox).length, 1, 'the conversation went to the workspace above');

    const outside = path.join(sandbox.root, 'elsewhere');
    mkdirSync(outside);
    const result = await runJp(
      sandbox,
      ['query', '-m', 'test', '-c', `providers.test.script=${path.join(sandbox.workspace, 'script.json')}`, 'outside'],
      { cwd: outside },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.ok(existsSync(path.join(sandbox.dataHome, 'jp', 'default-workspace', '.jp', 'conversations')));
    const userState = path.join(sandbox.dataHome, 'jp', 'workspace');
    for (const directory of [userState, path.join(sandbox.dataHome, 'jp', 'default-workspace', '.jp')]) {
      assert.equal(statSync(directory).mode & 0o077, 0, `${directory} is private`);
    }
  });

  it("each workspace's user-local directory is <name>-<first 12 hex digits of the SHA-256 of its real path>, as it always was", async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'hi' }] }] });
    assert.equal((await runJp(sandbox, ['query', ...script, 'hello'])).code, 0);
    const real = realpathSync(sandbox.workspace);
    const expected = `${path.basename(real).replace(/[^A-Za-z0-9._-]/g, '_')}-${createHash('sha256').update(real).digest('hex').slice(0, 12)}`;
    assert.deepEqual(readdirSync(path.join(sandbox.dataHome, 'jp', 'workspace')), [expected]);
  });
});

describe('config show', () => {
  it('prints each key with the layer that set it, and --effective per inquiry kind', async () => {
    const sandbox = sandboxed({ config: '[conversation.tools.fs_modify_file]\ndetached = { run = "auto" }\n' });
    assert.equal(
      (await runJp(sandbox, ['trust'])).code,
      0,
      'a workspace config that loosens approval counts once trusted',
    );
    const shown = await runJp(sandbox, ['config', 'show', '-c', 'assistant.max_turns=7'], {
      env: { JP_CFG_ASSISTANT__MODEL: 'ollama/x' },
    });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /assistant\.model = "ollama\/x"\s+# JP_CFG_ASSISTANT__MODEL/);
    assert.match(shown.stdout, /assistant\.max_turns = 7\s+# --cfg assistant\.max_turns=7/);
    assert.match(shown.stdout, /conversation\.tools\.fs_modify_file\.detached\.run = "auto"\s+# .*\.jp\/config\.toml/);
    const effective = await runJp(sandbox, ['config', 'show', '--effective', 'fs_modify_file']);
    assert.match(
      effective.stdout,
      /detached\.run\s+= auto\s+set by conversation\.tools\.fs_modify_file\.detached\.run/,
    );
    assert.match(effective.stdout, /detached\.tool\s+= deny\s+set by built-in/);
    const json = JSON.parse(
      (await runJp(sandbox, ['config', 'show', '--json', '--effective', 'fs_modify_file'])).stdout,
    );
    assert.equal(json.detached.run.policy, 'auto');
    assert.equal(json.detached.deliver.with_detach, 'defer');
  });

  it('a broken workspace config fails every command that loads it with exit 2, naming file and line', async () => {
    const sandbox = sandboxed({ config: '[assistant]\nmodel = "test"\nmax_turn = 3\n' });
    const before = readFileSync(path.join(sandbox.workspace, '.jp', 'config.toml'), 'utf8');
    for (const args of [
      ['config', 'show'],
      ['query', 'hi'],
    ]) {
      const result = await runJp(sandbox, args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /\.jp\/config\.toml:3: unknown key assistant\.max_turn/);
    }
    assert.equal(readFileSync(path.join(sandbox.workspace, '.jp', 'config.toml'), 'utf8'), before);
    assert.deepEqual(conversationIds(sandbox), [], 'a failed query leaves no conversation behind');
  });
});

describe('conversation commands', () => {
  it('ls, print --last, use, fork and rm', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'Answer.' }] }] });
    assert.equal((await runJp(sandbox, ['query', ...script, 'first question'])).code, 0);
    assert.equal((await runJp(sandbox, ['query', ...script, 'second question'])).code, 0);
    const [id] = conversationIds(sandbox);
    const listed = await runJp(sandbox, ['conversation', 'ls']);
    assert.match(listed.stdout, new RegExp(`\\* ${id}\\s+\\S+ \\S+\\s+idle\\s+first question`));
    const printed = await runJp(sandbox, ['conversation', 'print', id!]);
    assert.equal(printed.stdout, 'Answer.\n\nAnswer.\n', 'each turn on its own, a blank line between turns');
    assert.match(printed.stderr, /> first question/);
    const last = await runJp(sandbox, ['conversation', 'print', '--last']);
    assert.equal(last.stdout, 'Answer.\n');
    const forked = await runJp(sandbox, ['conversation', 'fork', id!]);
    const forkId = forked.stdout.trim();
    assert.match(forkId, /^jp-c\d{16}$/);
    assert.deepEqual(
      readEvents(sandbox, forkId)
        .filter((event) => event.type === 'chat_request')
        .map((event) => event.content),
      ['first question', 'second question'],
    );
    assert.equal((await runJp(sandbox, ['conversation', 'use', id!])).code, 0);
    assert.equal((await runJp(sandbox, ['conversation', 'rm', forkId])).code, 0);
    assert.deepEqual(conversationIds(sandbox), [id]);
    const missing = await runJp(sandbox, ['conversation', 'print', 'not-an-id']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /is not a conversation id/);
  });

  it('print renders a log with damaged lines, saying how many were skipped', async () => {
    const sandbox = sandboxed();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'kept' }] }] });
    await runJp(sandbox, ['query', ...script, 'q']);
    const [id] = conversationIds(sandbox);
    const file = path.join(sandbox.workspace, '.jp', 'conversations', id!, 'events.ndjson');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.splice(2, 0, '{"garbage');
    writeFileSync(file, lines.join('\n'));
    const printed = await runJp(sandbox, ['conversation', 'print', id!]);
    assert.equal(printed.code, 0);
    assert.equal(printed.stdout, 'kept\n');
    assert.match(printed.stderr, /skipped 1 damaged line \(line 3\)/);
  });
});

describe('local command tools from config', () => {
  it('runs the command with the arguments, validates them, and asks its questions through the inquiry machinery', async () => {
    const tool = [
      '[conversation.tools.deploy]',
      'command = "node deploy.mjs"',
      'description = "Deploy the site"',
      'run = "unattended"',
      'parameters.target = { type = "string", required = true, enum = ["staging", "production"] }',
      '[conversation.tools.deploy.questions.confirm]',
      'default = true',
    ].join('\n');
    const sandbox = sandboxed({ config: tool + '\n' });
    sandbox.write(
      'deploy.mjs',
      [
        "const call = JSON.parse(require('fs').readFileSync(0, 'utf8'));",
        "if (call.answers.confirm === undefined) { console.log(JSON.stringify({ type: 'needs_input', question: { id: 'confirm', text: 'Really deploy to ' + call.arguments.target + '?', answer_type: 'boolean' } })); process.exit(0); }",
        "require('fs').writeFileSync('deployed.txt', call.arguments.target + ' ' + call.answers.confirm);",
        "console.log(JSON.stringify({ type: 'success', content: 'deployed to ' + call.arguments.target }));",
      ]
        .join('\n')
        .replace(/require\('fs'\)/g, '(await import("node:fs"))'),
    );
    // Trusted with the script it runs (trust covers the workspace scripts a config names).
    assert.equal(
      (await runJp(sandbox, ['trust'])).code,
      0,
      'a local command tool counts once its workspace config is trusted',
    );
    const script = testProvider(sandbox, {
      steps: [
        { parts: [{ tool_call: { name: 'deploy', arguments: { target: 'nowhere' } } }] },
        { parts: [{ tool_call: { name: 'deploy', arguments: { target: 'staging' } } }] },
        { parts: [{ text: 'Deployed.' }] },
      ],
    });
    const result = await runJp(sandbox, [
      'query',
      '--json',
      ...script,
      '-c',
      'conversation.tools.deploy.detached.tool="defaults"',
      'deploy it',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const final = JSON.parse(result.stdout.trim().split('\n').pop()!);
    assert.equal(final.tools[0].status, 'error');
    assert.match(final.tools[0].result, /Invalid arguments for deploy: target/);
    assert.equal(final.tools[1].status, 'ok');
    assert.match(
      final.tools[1].result,
      /^deployed to staging\n\n\[jp: decided without a human\] The question "Really deploy to staging\?" was answered with the question's default/,
    );
    assert.equal(sandbox.read('deployed.txt'), 'staging true');
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    const question = events.find((event) => event.type === 'inquiry_request');
    assert.equal(question?.inquiry.question.text, 'Really deploy to staging?');
    assert.deepEqual(
      events
        .filter((event) => event.type === 'inquiry_response')
        .map((event) => [event.by, event.action, event.answer]),
      [['policy', 'UseDefault', true]],
    );
  });
});

describe('usage errors', () => {
  it('bad flags exit 2 with the reason on stderr and nothing on stdout', async () => {
    const sandbox = sandboxed();
    for (const [args, pattern] of [
      [['query', '--new', '--id=jp-c1', 'x'], /--new and --id cannot be used together/],
      [['query', '--max-turns', 'zero', 'x'], /--max-turns "zero" is not a positive integer/],
      [['query', '--detach', '--no-server', 'x'], /--detach needs a query server/],
      [['query', '--bogus'], /unknown option '--bogus'/],
      [['frobnicate'], /unknown command 'frobnicate'/],
    ] as const) {
      const result = await runJp(sandbox, [...args]);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, pattern);
      assert.equal(result.stdout, '');
    }
  });
});
