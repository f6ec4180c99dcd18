/**
 * What the model is told (DESIGN §9), read from the requests jp sends to a fake provider: the
 * built-in system prompt's facts, its byte-identity across the requests of a turn and across
 * turns, AGENTS.md from the workspace root down to the working directory (and the user's own),
 * the caps, `assistant.system_prompt` / `instructions` / `instruction_files`, and a repository
 * that tries to make jp read files it should not.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  startFakeProvider,
  stepByToolResults,
  textStep,
  toolStep,
  type FakeProvider,
  type RecordedRequest,
} from '../support/fake-provider.ts';
import {
  conversationIds,
  fakeModelArguments,
  readEvents,
  runJp,
  testProvider,
  useCleanup,
  type Sandbox,
} from '../support/jp.ts';
import { writeUserConfig } from '../support/mcp.ts';
import { Screen } from '../support/screen.ts';
import { createAjv, schemaProblem } from '../support/schemas.ts';

const cleanup = useCleanup();

function systemText(request: RecordedRequest): string {
  const system = request.messages.filter((message) => message.role === 'system');
  assert.equal(system.length, 1, `one system message, got ${system.length}`);
  return system[0]!.text;
}

async function provider(steps: Parameters<typeof startFakeProvider>[0]['steps']): Promise<FakeProvider> {
  const started = await startFakeProvider({ wire: 'openai-chat', steps });
  cleanup.add(() => started.close());
  return started;
}

async function query(
  sandbox: Sandbox,
  fake: FakeProvider,
  args: string[],
  options: { cwd?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  const model = fakeModelArguments('openai-chat', fake.baseUrl);
  const result = await runJp(sandbox, ['query', ...model.args, ...args], {
    env: model.env,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  assert.equal(result.code, 0, result.stderr);
  return result;
}

function userFile(sandbox: Sandbox, name: string, content: string): string {
  const file = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

describe('the built-in system prompt', () => {
  it("tells the model where it is, its tools, that nobody can answer, and the conversation's date", async () => {
    const fake = await provider([textStep('ok')]);
    const sandbox = cleanup.sandbox();
    const subdirectory = path.join(sandbox.workspace, 'src', 'lib');
    mkdirSync(subdirectory, { recursive: true });
    await query(sandbox, fake, ['hello'], { cwd: subdirectory });
    const text = systemText(fake.requests[0]!);
    assert.match(text, new RegExp(`Workspace root: ${sandbox.workspace.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `));
    assert.match(text, new RegExp(`Working directory: ${subdirectory.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`));
    assert.ok(
      text.includes(`Operating system: ${os.type()} ${os.release()} (${os.arch()}); commands run with /bin/sh -c`),
      text,
    );
    assert.match(text, /Model: openai\/gpt-test/);
    assert.match(
      text,
      /^- Sandbox: Commands \(run_command, local tools\) run in a sandbox \(workspace-write, no network\): the workspace is writable except \.jp\/.*the network is off.*"escalate": true/m,
    );
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    assert.ok(text.includes(`Date: ${(events[0]!.timestamp as string).slice(0, 10)}\n`), text);
    assert.doesNotMatch(text, /\d\d:\d\d/, 'no clock time in it');
    for (const tool of fake.requests[0]!.toolNames)
      assert.match(text, new RegExp(`^- ${tool}: \\S`, 'm'), `a line for ${tool}`);
    assert.ok(fake.requests[0]!.toolNames.includes('fs_search'));
    assert.match(text, /No human is available right now/);
    assert.match(text, /"unanswered: no user available" means nobody could answer/);
    // What the model was told is in the log.
    const recorded = events.filter((event) => event.type === 'system_prompt');
    assert.equal(recorded.length, 1);
    assert.equal(recorded[0]!.text, text);
  });

  it('at a terminal, tells the model that a human answers', async () => {
    const sandbox = cleanup.sandbox();
    const script = testProvider(sandbox, { steps: [{ parts: [{ text: 'Hello there.' }] }] });
    const screen = Screen.jp(sandbox, ['query', ...script, 'hi'], { cleanup });
    const exit = await screen.exited;
    assert.equal(exit.exitCode, 0, screen.text());
    const recorded = readEvents(sandbox, conversationIds(sandbox)[0]!).find((event) => event.type === 'system_prompt')!;
    assert.match(
      recorded.text,
      /A human is at the terminal: they approve tools that change things and answer your questions\./,
    );
    assert.doesNotMatch(recorded.text, /No human is available/);
  });

  it('says the sandbox the configuration sets', async () => {
    const fake = await provider([textStep('ok')]);
    const sandbox = cleanup.sandbox();
    await query(sandbox, fake, ['--cfg', 'sandbox.mode="read-only"', '--cfg', 'sandbox.network=true', 'hello']);
    await query(sandbox, fake, ['--new', '--cfg', 'sandbox.mode="off"', 'hello']);
    assert.match(
      systemText(fake.requests[0]!),
      /^- Sandbox: Commands \(run_command, local tools\) run in a sandbox \(read-only, network\): nothing is writable but \$TMPDIR; the network is reachable;/m,
    );
    assert.match(
      systemText(fake.requests[1]!),
      /^- Sandbox: Commands run without a sandbox \(sandbox\.mode = "off"\)\.$/m,
    );
  });

  it('is byte-identical across the requests of a turn and across turns, and recorded once', async () => {
    const fake = await provider(
      stepByToolResults([toolStep([{ name: 'fs_list_files', arguments: {} }]), textStep('listed')]),
    );
    const sandbox = cleanup.sandbox();
    sandbox.write('AGENTS.md', 'Run the tests with `make check`.\n');
    await query(sandbox, fake, ['first turn']);
    await query(sandbox, fake, ['second turn']);
    assert.equal(fake.requests.length, 4);
    const texts = fake.requests.map(systemText);
    assert.ok(
      texts.every((text) => text === texts[0]),
      'the same bytes in every request',
    );
    assert.equal(conversationIds(sandbox).length, 1, 'both turns in one conversation');
    const events = readEvents(sandbox, conversationIds(sandbox)[0]!);
    assert.equal(events.filter((event) => event.type === 'system_prompt').length, 1);
  });

  it('a resumed turn sends what its first request sent, even when AGENTS.md changed in between', async () => {
    const fake = await provider(
      stepByToolResults([
        toolStep([{ name: 'fs_create_file', arguments: { path: 'made.txt', content: 'x' } }]),
        textStep('made'),
      ]),
    );
    const sandbox = cleanup.sandbox();
    sandbox.write('AGENTS.md', 'version one\n');
    const model = fakeModelArguments('openai-chat', fake.baseUrl);
    const deferred = await runJp(
      sandbox,
      ['query', ...model.args, '--cfg', 'conversation.tools.fs_create_file.detached.run="defer"', 'make it'],
      { env: model.env },
    );
    assert.equal(deferred.code, 4, deferred.stderr);
    sandbox.write('AGENTS.md', 'version two\n');
    await query(sandbox, fake, ['--continue', '--cfg', 'conversation.tools.fs_create_file.detached.run="auto"']);
    assert.equal(sandbox.read('made.txt'), 'x');
    assert.equal(fake.requests.length, 2);
    assert.equal(systemText(fake.requests[1]!), systemText(fake.requests[0]!));
    assert.match(systemText(fake.requests[1]!), /version one/);
    assert.equal(
      readEvents(sandbox, conversationIds(sandbox)[0]!).filter((event) => event.type === 'system_prompt').length,
      1,
    );
  });

  it('a changed AGENTS.md is a new system prompt from the next turn on, recorded again', async () => {
    const fake = await provider([textStep('ok')]);
    const sandbox = cleanup.sandbox();
    sandbox.write('AGENTS.md', 'version one\n');
    await query(sandbox, fake, ['first']);
    sandbox.write('AGENTS.md', 'version two\n');
    await query(sandbox, fake, ['second']);
    assert.match(systemText(fake.requests[0]!), /version one/);
    assert.match(systemText(fake.requests[1]!), /version two/);
    const recorded = readEvents(sandbox, conversationIds(sandbox)[0]!).filter(
      (event) => event.type === 'system_prompt',
    );
    assert.equal(recorded.length, 2);
  });

  it('assistant.system_prompt replaces the built-in text; assistant.instructions and AGENTS.md still follow it', async () => {
    const fake = await provider([textStep('ok')]);
    const sandbox = cleanup.sandbox();
    sandbox.write('AGENTS.md', 'project rule\n');
    writeUserConfig(sandbox, '[assistant]\ninstructions = "Answer in French."\n');
    await query(sandbox, fake, ['--cfg', 'assistant.system_prompt="You are a pirate."', 'hello']);
    const text = systemText(fake.requests[0]!);
    assert.ok(
      text.startsWith("You are a pirate.\n\n# The user's instructions\n\nAnswer in French.\n\n# Project instructions"),
      text,
    );
    assert.doesNotMatch(text, /Workspace root:/);
    assert.match(text, /## AGENTS\.md\n\nproject rule$/);
  });

  it('assistant.instructions is appended to the built-in prompt', async () => {
    const fake = await provider([textStep('ok')]);
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, '[assistant]\ninstructions = "Always cite file paths."\n');
    await query(sandbox, fake, ['hello']);
    const text = systemText(fake.requests[0]!);
    assert.match(text, /^You are jp/);
    assert.ok(text.endsWith("# The user's instructions\n\nAlways cite file paths."), text);
  });
});

describe('instruction files', () => {
  it("the user's own, then the workspace root down to the working directory, nearer later; instruction_files adds names", async () => {
    const fake = await provider([textStep('ok')]);
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, '[assistant]\ninstruction_files = ["CLAUDE.md"]\n');
    const mine = userFile(sandbox, 'AGENTS.md', 'user rule\n');
    sandbox.write('AGENTS.md', 'root rule\n');
    sandbox.write('CLAUDE.md', 'root claude rule\n');
    sandbox.write('packages/app/AGENTS.md', 'app rule\n');
    sandbox.write('packages/other/AGENTS.md', 'a sibling: never read\n');
    mkdirSync(path.join(sandbox.workspace, 'packages', 'app', 'src'), { recursive: true });
    await query(sandbox, fake, ['hello'], { cwd: path.join(sandbox.workspace, 'packages', 'app', 'src') });
    const text = systemText(fake.requests[0]!);
    const order = [
      `## ${mine}\n\nuser rule`,
      '## AGENTS.md\n\nroot rule',
      '## CLAUDE.md\n\nroot claude rule',
      '## packages/app/AGENTS.md\n\napp rule',
    ].map((part) => text.indexOf(part));
    assert.ok(
      order.every((position) => position > 0),
      `${JSON.stringify(order)}\n${text}`,
    );
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      order,
      'in that order',
    );
    assert.match(text, /a later \(nearer\) file takes precedence/);
    assert.doesNotMatch(text, /sibling/);
    const recorded = readEvents(sandbox, conversationIds(sandbox)[0]!).find((event) => event.type === 'system_prompt')!;
    assert.deepEqual(
      recorded.files.map((file: { path: string }) => file.path),
      [mine, 'AGENTS.md', 'CLAUDE.md', 'packages/app/AGENTS.md'],
    );
  });

  it('a file over 32 KiB is cut, the total is capped at 64 KiB with the nearest files first, and each cut is named', async () => {
    const fake = await provider([textStep('ok')]);
    const sandbox = cleanup.sandbox();
    sandbox.write('AGENTS.md', 'R'.repeat(30_000));
    sandbox.write('a/AGENTS.md', 'A'.repeat(30_000));
    sandbox.write('a/b/AGENTS.md', 'B'.repeat(40_000));
    const result = await query(sandbox, fake, ['hello'], { cwd: path.join(sandbox.workspace, 'a', 'b') });
    const text = systemText(fake.requests[0]!);
    const section = (shown: string): string => text.slice(text.indexOf(`## ${shown}\n\n`)).split('\n\n')[1]!;
    assert.equal(section('a/b/AGENTS.md').match(/B/g)!.length, 32 * 1024, 'the nearest file cut at the per-file cap');
    assert.equal(section('a/AGENTS.md'), 'A'.repeat(30_000), 'the next one whole');
    assert.equal(
      section('AGENTS.md').match(/R/g)!.length,
      64 * 1024 - 32 * 1024 - 30_000,
      'the farthest gets what is left of the total',
    );
    assert.match(text, /\[… jp cut this file here: it has 40000 bytes; the limit is 32768 bytes per file …\]/);
    assert.match(result.stderr, /instruction file a\/b\/AGENTS\.md was cut to its first 32768 of 40000 bytes/);
    assert.match(
      result.stderr,
      /instruction file AGENTS\.md was cut to its first 2768 of 30000 bytes \(the limit is 65536 bytes for all instruction files together, nearer files first\)/,
    );
    const recorded = readEvents(sandbox, conversationIds(sandbox)[0]!).find((event) => event.type === 'system_prompt')!;
    assert.equal(schemaProblem(createAjv(), 'event.schema.json', recorded), undefined);
    assert.deepEqual(recorded.files, [
      { path: 'AGENTS.md', bytes: 30_000, included: 2768 },
      { path: 'a/AGENTS.md', bytes: 30_000, included: 30_000 },
      { path: 'a/b/AGENTS.md', bytes: 40_000, included: 32_768 },
    ]);
    // `print` renders from the log what the model was told.
    const printed = await runJp(sandbox, ['conversation', 'print', conversationIds(sandbox)[0]!]);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(
      printed.stderr,
      /^\[instructions: AGENTS\.md \(cut to 2768 of 30000 bytes\), a\/AGENTS\.md, a\/b\/AGENTS\.md \(cut to 32768 of 40000 bytes\)\]$/m,
    );
  });

  it('a repository cannot make jp read other files: a symlink out of the workspace, a FIFO, a name from an untrusted config', async () => {
    const fake = await provider([textStep('ok')]);
    const sandbox = cleanup.sandbox({ config: '[assistant]\ninstruction_files = ["config.toml"]\n' });
    const secret = path.join(sandbox.root, 'secret.txt');
    writeFileSync(secret, 'SECRET-NOTES-7f3a\n');
    symlinkSync(secret, path.join(sandbox.workspace, 'AGENTS.md'));
    mkdirSync(path.join(sandbox.workspace, 'sub'));
    execFileSync('mkfifo', [path.join(sandbox.workspace, 'sub', 'AGENTS.md')]);
    writeUserConfig(sandbox, '# MY-OWN-SETTINGS-91c2\n[assistant]\nmax_turns = 7\n');
    const result = await query(sandbox, fake, ['hello'], { cwd: path.join(sandbox.workspace, 'sub') });
    const text = systemText(fake.requests[0]!);
    assert.doesNotMatch(text, /SECRET-NOTES-7f3a|MY-OWN-SETTINGS-91c2/);
    assert.doesNotMatch(text, /# Project instructions/);
    assert.match(
      result.stderr,
      /instruction file AGENTS\.md is a symbolic link to \S+secret\.txt, outside the workspace \(or inside \.jp\/\); it was not read/,
    );
    assert.match(result.stderr, /instruction file sub\/AGENTS\.md is a FIFO, not a regular file; it was not read/);
    assert.match(result.stderr, /assistant\.instruction_files/, 'the untrusted key is named');
  });

  it('`jp config show` lists the instruction files that apply here, with what is cut', async () => {
    const sandbox = cleanup.sandbox();
    const mine = userFile(sandbox, 'AGENTS.md', 'user rule\n');
    sandbox.write('AGENTS.md', 'x'.repeat(40_000));
    sandbox.write('sub/AGENTS.md', 'sub rule\n');
    const result = await runJp(sandbox, ['config', 'show'], { cwd: path.join(sandbox.workspace, 'sub') });
    assert.equal(result.code, 0, result.stderr);
    const listed = result.stdout.slice(result.stdout.indexOf('# instruction files'));
    assert.equal(
      listed,
      [
        '# instruction files (read in this order; nearer ones take precedence):',
        `#   ${mine} (10 bytes)`,
        '#   AGENTS.md (40000 bytes, cut to 32768)',
        '#   sub/AGENTS.md (9 bytes)',
        '#   warning: instruction file AGENTS.md was cut to its first 32768 of 40000 bytes (the limit is 32768 bytes per file)',
        '',
      ].join('\n'),
    );
    const json = await runJp(sandbox, ['config', 'show', '--json'], { cwd: path.join(sandbox.workspace, 'sub') });
    const line = JSON.parse(json.stdout.trim());
    assert.equal(schemaProblem(createAjv(), 'output-line.schema.json', line), undefined);
    assert.deepEqual(
      line.instruction_files.map((file: { path: string }) => file.path),
      [mine, 'AGENTS.md', 'sub/AGENTS.md'],
    );
  });
});
