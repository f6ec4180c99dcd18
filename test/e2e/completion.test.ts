/**
 * Shell completion (`jp completion bash|zsh|fish`), as a person uses it: each shell runs in a real
 * terminal, loads the script jp printed, and completes `jp con<Tab>` (the commands starting so),
 * `jp conv<Tab>` and a conversation id. Plus the candidates themselves, from the command tree.
 */
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { configSchema } from '../../src/config/schema.ts';
import { conversationIds, jpBinary, runJp, testProvider, useCleanup, type Sandbox } from '../support/jp.ts';
import { Screen } from '../support/screen.ts';

const cleanup = useCleanup();

/** A workspace with one conversation, and `jp` on PATH as a user has it (a symlink). */
async function prepared(): Promise<{ sandbox: Sandbox; conversationId: string; env: NodeJS.ProcessEnv }> {
  const sandbox = cleanup.sandbox();
  const bin = path.join(sandbox.root, 'bin');
  mkdirSync(bin);
  symlinkSync(jpBinary, path.join(bin, 'jp'));
  const result = await runJp(sandbox, [
    'query',
    ...testProvider(sandbox, { steps: [{ parts: [{ text: 'hi' }] }] }),
    'hello',
  ]);
  assert.equal(result.code, 0, result.stderr);
  const [conversationId] = conversationIds(sandbox);
  return {
    sandbox,
    conversationId: conversationId!,
    env: { PATH: `${bin}:${process.env.PATH}`, PS1: '$ ', SHELL: '' },
  };
}

// How many Tabs list the candidates of an ambiguous word: bash lists on the second, zsh and fish on the first.
const shells: { shell: 'bash' | 'zsh' | 'fish'; program: string; args: string[]; load: string; list: string }[] = [
  {
    shell: 'bash',
    program: 'bash',
    args: ['--norc', '--noprofile', '-i'],
    load: 'source <(jp completion bash)',
    list: '\t\t',
  },
  {
    shell: 'zsh',
    program: 'zsh',
    args: ['-f', '-i'],
    load: 'autoload -Uz compinit && compinit -u && source <(jp completion zsh)',
    list: '\t',
  },
  { shell: 'fish', program: 'fish', args: ['--no-config', '-i'], load: 'jp completion fish | source', list: '\t' },
];

describe('shell completion', () => {
  for (const { shell, program, args, load, list } of shells) {
    it(`${shell}: loads the script and completes jp con<Tab>, jp conv<Tab> and a conversation id`, async () => {
      const { sandbox, conversationId, env } = await prepared();
      const screen = Screen.program(sandbox, program, args, { env, cleanup, columns: 120 });
      screen.press(`${load}\r`);
      screen.press('echo loaded\r');
      await screen.waitFor(/^loaded$/m);

      screen.press(`jp con${list}`);
      await screen.waitFor(/config/, { on: 'screen' });
      await screen.waitFor(/conversation/, { on: 'screen' });
      screen.press('v\t');
      await screen.waitFor(/jp conversation $/m, { on: 'screen' });
      screen.press('print \t');
      await screen.waitFor(`jp conversation print ${conversationId}`, { on: 'screen' });
      screen.press('\r');
      await screen.waitFor('hi', { on: 'screen' });
      screen.press('exit\r');
      await screen.exited;
    });
  }

  it('the candidates come from the command tree, option choices, providers and the workspace', async () => {
    const { sandbox, conversationId } = await prepared();
    const candidates = async (...words: string[]): Promise<string[]> => {
      const result = await runJp(sandbox, ['__complete', '--', ...words]);
      assert.equal(result.code, 0, result.stderr);
      return result.stdout.split('\n').filter((line) => line !== '');
    };
    assert.ok((await candidates('')).includes('conversation'));
    assert.ok(!(await candidates('')).includes('__complete'), 'the hidden command is not offered');
    assert.deepEqual(await candidates('conversation', 'attach', ''), [conversationId]);
    assert.deepEqual(await candidates('query', '--id', ''), [conversationId]);
    assert.deepEqual(await candidates('q', '-F', ''), ['auto', 'text', 'text-pretty', 'json']);
    // Every provider the config schema has is offered: by its name, or for openai-compatible, by
    // each name configured under it in the user's and the workspace's config.
    const userDirectory = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp');
    mkdirSync(userDirectory, { recursive: true });
    writeFileSync(
      path.join(userDirectory, 'config.toml'),
      '[providers.openai-compatible.llamacpp]\nbase_url = "http://127.0.0.1:8080/v1"\n',
    );
    appendFileSync(
      path.join(sandbox.workspace, '.jp', 'config.toml'),
      '\n[providers.openai-compatible]\nvllm = { base_url = "http://127.0.0.1:8000/v1" }\n',
    );
    const models = await candidates('query', '-m', '');
    const providers = Object.keys(configSchema.shape.providers.def.innerType.shape);
    assert.ok(providers.includes('openai-compatible'), `the schema's providers: ${providers.join(', ')}`);
    for (const provider of providers.filter((name) => name !== 'openai-compatible')) {
      assert.ok(
        models.some((model) => model === provider || model.startsWith(`${provider}/`)),
        `${provider} is offered: ${models.join(' ')}`,
      );
    }
    for (const configured of ['llamacpp/', 'vllm/'])
      assert.ok(models.includes(configured), `${configured} is offered: ${models.join(' ')}`);
    // A cloned repository names its providers: a name a shell could expand is never offered.
    appendFileSync(
      path.join(sandbox.workspace, '.jp', 'config.toml'),
      '\n[providers.openai-compatible."$(touch PWNED)"]\nbase_url = "http://127.0.0.1:8000/v1"\n',
    );
    assert.deepEqual(
      (await candidates('query', '-m', '')).filter((model) => model.includes('$')),
      [],
    );
    const flags = await candidates('query', '--');
    for (const flag of ['--detach', '--no-server', '--json', '--cfg']) assert.ok(flags.includes(flag), flag);
    assert.deepEqual(await candidates('completion', 'x'), [], 'a leaf without subcommands or ids offers nothing');
    const script = await runJp(sandbox, ['completion', 'tcsh']);
    assert.equal(script.code, 2);
    assert.match(script.stderr, /bash, zsh, fish/);
  });

  it('--tool offers tool names (builtins and configured local tools), and ids carry their titles for zsh and fish', async () => {
    const { sandbox, conversationId } = await prepared();
    const candidates = async (...words: string[]): Promise<string[]> => {
      const result = await runJp(sandbox, ['__complete', ...words]);
      assert.equal(result.code, 0, result.stderr);
      return result.stdout.split('\n').filter((line) => line !== '');
    };
    appendFileSync(
      path.join(sandbox.workspace, '.jp', 'config.toml'),
      '\n[conversation.tools.lint]\ncommand = "true"\n[conversation.tools."$(touch PWNED)"]\ncommand = "true"\n',
    );
    const tools = await candidates('--', 'query', '--tool', '');
    for (const name of [
      'fs_read_file',
      'fs_list_files',
      'fs_create_file',
      'fs_modify_file',
      'run_command',
      'ask_user',
      'lint',
    ])
      assert.ok(tools.includes(name), `${name} in ${tools.join(' ')}`);
    assert.equal(
      tools.some((name) => name.includes('$') || name.includes('.')),
      false,
      'no file names, nothing a shell could expand',
    );
    assert.deepEqual(await candidates('--describe', '--', 'conversation', 'attach', ''), [`${conversationId}\thello`]);
    assert.deepEqual(await candidates('--', 'conversation', 'attach', ''), [conversationId], 'bash gets bare ids');
  });

  for (const { shell, program, args, load, list } of shells.filter(({ shell }) => shell !== 'bash')) {
    it(`${shell}: conversation ids are listed with their titles`, async () => {
      const { sandbox, conversationId, env } = await prepared();
      const second = await runJp(sandbox, [
        'query',
        '--new',
        ...testProvider(sandbox, { steps: [{ parts: [{ text: 'hi' }] }] }),
        'the second one',
      ]);
      assert.equal(second.code, 0, second.stderr);
      const screen = Screen.program(sandbox, program, args, { env, cleanup, columns: 120 });
      screen.press(`${load}\r`);
      screen.press('echo loaded\r');
      await screen.waitFor(/^loaded$/m);
      const ids = conversationIds(sandbox);
      let common = ids[0]!;
      while (!ids.every((id) => id.startsWith(common))) common = common.slice(0, -1);
      screen.press(`jp conversation print ${common}${list}`);
      // fish shortens the common prefix to `…`: each id is told by the rest of it.
      const other = ids.find((id) => id !== conversationId)!;
      await screen.waitFor(new RegExp(`${conversationId.slice(common.length)}\\W+hello`), { on: 'screen' });
      await screen.waitFor(new RegExp(`${other.slice(common.length)}\\W+the second one`), { on: 'screen' });
      screen.close();
    });
  }

  // What a shell does with a candidate jp prints is the script's part: stand in for jp with a function
  // that prints one a shell could expand, and press Tab.
  for (const { shell, program, args, load } of shells) {
    it(`${shell}: a candidate is never evaluated by the shell (no $(...) in one runs)`, async () => {
      const { sandbox, env } = await prepared();
      const standIn =
        shell === 'fish'
          ? "function jp; printf '%s\\n' '$(touch PWNED)' 'sa''fe'; end"
          : "jp() { printf '%s\\n' '$(touch PWNED)' 'sa''fe'; }";
      const screen = Screen.program(sandbox, program, args, { env, cleanup, columns: 120 });
      screen.press(`${load}\r`);
      screen.press(`${standIn}\r`);
      screen.press('echo loaded\r');
      await screen.waitFor(/^loaded$/m);
      screen.press('jp \t\t');
      await screen.waitFor(/\bsafe\b/, { on: 'screen' });
      // A candidate is evaluated, if at all, while the shell completes: before it draws the list.
      assert.equal(existsSync(path.join(sandbox.workspace, 'PWNED')), false);
      screen.close();
    });
  }
});
