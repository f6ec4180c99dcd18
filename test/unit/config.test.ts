import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { loadConfig, parseScalar, type ConfigInputs } from '../../src/config/load.ts';
import { locateKey } from '../../src/config/locate.ts';
import {
  describeEffective,
  resolveDetachedPolicy,
  resolveResultMode,
  resolveRunMode,
} from '../../src/config/policy.ts';
import { configContentHash, keysNeedingTrust, trustRequiringKeys } from '../../src/config/trust.ts';
import { JpError } from '../../src/errors.ts';

function inputs(overrides: Partial<ConfigInputs> = {}): ConfigInputs {
  return { userFile: undefined, workspaceFile: undefined, environment: {}, cfgArguments: [], flags: [], ...overrides };
}

function tempFile(content: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'jp-config-'));
  const file = path.join(directory, 'config.toml');
  writeFileSync(file, content);
  return file;
}

function configError(run: () => unknown): JpError {
  try {
    run();
  } catch (error) {
    assert.ok(JpError.isInstance(error), `expected a JpError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a configuration error');
}

describe('config cascade', () => {
  it('applies layers in order: defaults < user < workspace < env < --cfg < flags, and records each source', () => {
    const user = tempFile('[assistant]\nmodel = "anthropic/a"\nmax_turns = 3\n');
    const workspace = tempFile('[assistant]\nmodel = "anthropic/b"\n');
    let loaded = loadConfig(inputs({ userFile: user, workspaceFile: workspace }));
    assert.equal(loaded.value.assistant?.model, 'anthropic/b');
    assert.equal(loaded.value.assistant?.max_turns, 3);
    assert.equal(loaded.sources.get('assistant.model')?.label, workspace);
    assert.equal(loaded.sources.get('assistant.max_turns')?.label, user);

    loaded = loadConfig(
      inputs({ userFile: user, workspaceFile: workspace, environment: { JP_CFG_ASSISTANT__MODEL: 'ollama/c' } }),
    );
    assert.equal(loaded.value.assistant?.model, 'ollama/c');
    assert.equal(loaded.sources.get('assistant.model')?.label, 'JP_CFG_ASSISTANT__MODEL');

    loaded = loadConfig(
      inputs({
        workspaceFile: workspace,
        environment: { JP_CFG_ASSISTANT__MODEL: 'ollama/c' },
        cfgArguments: ['assistant.model=ollama/d'],
      }),
    );
    assert.equal(loaded.value.assistant?.model, 'ollama/d');

    loaded = loadConfig(
      inputs({
        cfgArguments: ['assistant.model=ollama/d'],
        flags: [{ label: '--model', path: ['assistant', 'model'], value: 'ollama/e' }],
      }),
    );
    assert.equal(loaded.value.assistant?.model, 'ollama/e');
    assert.equal(loaded.sources.get('assistant.model')?.label, '--model');
  });

  it('keeps built-in defaults for keys nobody set', () => {
    const loaded = loadConfig(inputs());
    assert.equal(loaded.value.assistant?.model, 'openai/gpt-4.1-mini');
    assert.equal(resolveRunMode(loaded, 'fs_read_file').value, 'unattended');
    assert.equal(resolveRunMode(loaded, 'fs_modify_file').value, 'ask');
  });

  it('parses --cfg values as TOML, falling back to a plain string', () => {
    assert.equal(parseScalar('true'), true);
    assert.equal(parseScalar('42'), 42);
    assert.deepEqual(parseScalar('["a", "b"]'), ['a', 'b']);
    assert.deepEqual({ ...(parseScalar('{ run = "auto" }') as object) }, { run: 'auto' });
    assert.equal(parseScalar('openai/gpt-4.1-mini'), 'openai/gpt-4.1-mini');
    const loaded = loadConfig(
      inputs({ cfgArguments: ['conversation.tools.defaults.detached={ run = "auto", tool = "defaults" }'] }),
    );
    assert.deepEqual(loaded.value.conversation?.tools?.defaults?.detached, { run: 'auto', tool: 'defaults' });
  });

  it('a scalar replaces a table from a lower layer, and vice versa', () => {
    const workspace = tempFile('[conversation.tools.defaults.detached]\nrun = "auto"\n');
    const loaded = loadConfig(
      inputs({ workspaceFile: workspace, cfgArguments: ['conversation.tools.defaults.detached=deny'] }),
    );
    assert.equal(loaded.value.conversation?.tools?.defaults?.detached, 'deny');
    assert.equal(loaded.sources.has('conversation.tools.defaults.detached.run'), false);
  });
});

describe('config errors name the file, line and key path, and write nothing', () => {
  it('unknown key in a file', () => {
    const file = tempFile(
      '[assistant]\nmodel = "openai/x"\n\n[conversation.tools.fs_modify_file]\nrun = "ask"\ncolour = "red"\n',
    );
    const before = readdirSync(path.dirname(file));
    const error = configError(() => loadConfig(inputs({ workspaceFile: file })));
    assert.equal(error.exitCode, 2);
    assert.equal(error.code, 'config_invalid');
    assert.match(
      error.message,
      new RegExp(
        `${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6: unknown key conversation\\.tools\\.fs_modify_file\\.colour`,
      ),
    );
    assert.deepEqual(readdirSync(path.dirname(file)), before);
    assert.equal(readFileSync(file, 'utf8').includes('colour'), true);
  });

  it('wrong type in a file', () => {
    const file = tempFile('[assistant]\nmax_turns = "many"\n');
    const error = configError(() => loadConfig(inputs({ userFile: file })));
    assert.match(
      error.message,
      /config\.toml:2: invalid value for assistant\.max_turns: expected (int|number), got string "many"/,
    );
  });

  it('a value outside its set', () => {
    const file = tempFile('[conversation.tools.defaults]\ndetached = "sometimes"\n');
    const error = configError(() => loadConfig(inputs({ userFile: file })));
    assert.match(error.message, /config\.toml:2: invalid value for conversation\.tools\.defaults\.detached/);
  });

  it('invalid TOML', () => {
    const file = tempFile('[assistant]\nmodel = "unterminated\n');
    const error = configError(() => loadConfig(inputs({ userFile: file })));
    assert.match(error.message, /config\.toml:2:\d+: invalid TOML/);
    assert.equal(error.exitCode, 2);
  });

  it('bad environment variable and bad --cfg name their source', () => {
    let error = configError(() => loadConfig(inputs({ environment: { JP_CFG_ASSISTANT__MAX_TURNS: 'zero' } })));
    assert.match(
      error.message,
      /environment variable JP_CFG_ASSISTANT__MAX_TURNS: invalid value for assistant\.max_turns/,
    );
    error = configError(() => loadConfig(inputs({ cfgArguments: ['assistant.nope=1'] })));
    assert.match(error.message, /--cfg assistant\.nope=1: unknown key assistant\.nope/);
    error = configError(() => loadConfig(inputs({ cfgArguments: ['no-equals-sign'] })));
    assert.match(error.message, /is not KEY=VALUE/);
  });

  it('a missing file is simply absent', () => {
    const loaded = loadConfig(inputs({ userFile: path.join(os.tmpdir(), 'does-not-exist', 'config.toml') }));
    assert.equal(loaded.layers.length, 1);
  });
});

describe('locateKey', () => {
  const source = [
    '# comment',
    '[assistant]',
    'model = "x"',
    '',
    '[conversation.tools.git.questions.confirm_force_push]',
    'exclusive = true',
    '"quoted key" = 1',
    '[conversation.tools.defaults]',
    'detached = { run = "auto", tool = "deny" }',
    'text = """',
    'run = "not a key"',
    '"""',
  ].join('\n');
  it('finds keys under table headers, quoted keys and inline tables', () => {
    assert.equal(locateKey(source, ['assistant', 'model']), 3);
    assert.equal(
      locateKey(source, ['conversation', 'tools', 'git', 'questions', 'confirm_force_push', 'exclusive']),
      6,
    );
    assert.equal(
      locateKey(source, ['conversation', 'tools', 'git', 'questions', 'confirm_force_push', 'quoted key']),
      7,
    );
    assert.equal(locateKey(source, ['conversation', 'tools', 'defaults', 'detached', 'tool']), 9);
    assert.equal(locateKey(source, ['conversation', 'tools', 'defaults', 'run']), 8);
    assert.equal(locateKey(source, ['nothing']), undefined);
  });
});

describe('detached policy resolution (five steps, first match wins)', () => {
  // A workspace its user trusts: its policy keys count.
  const load = (toml: string) =>
    loadConfig(inputs({ workspaceFile: tempFile(toml), trustedWorkspaceSha256: configContentHash(toml) }));
  it('tool.kind → tool scalar → defaults.kind → defaults scalar → built-in', () => {
    const full = load(
      [
        '[conversation.tools.defaults]',
        'detached = { run = "defaults" }',
        '[conversation.tools.a.detached]',
        'run = "auto"',
        '[conversation.tools.b]',
        'detached = "defer"',
      ].join('\n'),
    );
    assert.equal(resolveDetachedPolicy(full, 'a', 'run', 'deny').value, 'auto');
    assert.equal(resolveDetachedPolicy(full, 'a', 'run', 'deny').key, 'conversation.tools.a.detached.run');
    assert.equal(resolveDetachedPolicy(full, 'b', 'run', 'deny').value, 'defer');
    assert.equal(resolveDetachedPolicy(full, 'b', 'run', 'deny').key, 'conversation.tools.b.detached');
    assert.equal(resolveDetachedPolicy(full, 'c', 'run', 'deny').value, 'defaults');
    assert.equal(resolveDetachedPolicy(full, 'c', 'tool', 'deny').value, 'deny');
    assert.equal(resolveDetachedPolicy(full, 'c', 'tool', 'deny').key, 'built-in');
    assert.equal(resolveDetachedPolicy(full, 'c', 'tool', 'defer').value, 'defer');
    // a tool table without this kind falls through to the defaults, not to built-in
    assert.equal(resolveDetachedPolicy(full, 'a', 'tool', 'deny').value, 'deny');
    const scalar = load('[conversation.tools.defaults]\ndetached = "auto"\n');
    assert.equal(resolveDetachedPolicy(scalar, 'x', 'deliver', 'deny').value, 'auto');
    assert.equal(resolveDetachedPolicy(scalar, 'x', 'deliver', 'deny').key, 'conversation.tools.defaults.detached');
  });

  it('show --effective names the layer that set each value', () => {
    const toml = '[conversation.tools.fs_modify_file]\ndetached = { run = "auto" }\n';
    const loaded = loadConfig(
      inputs({ workspaceFile: tempFile(toml), trustedWorkspaceSha256: configContentHash(toml) }),
    );
    const text = describeEffective(loaded, 'fs_modify_file', 'deny').join('\n');
    assert.match(
      text,
      /detached\.run\s+= auto\s+set by conversation\.tools\.fs_modify_file\.detached\.run \(.*config\.toml\)/,
    );
    assert.match(text, /detached\.deliver\s+= deny\s+set by built-in/);
  });
});

describe('workspace trust', () => {
  const workspace = [
    'assistant.model = "anthropic/claude-test"',
    '[providers.openai]',
    'base_url = "http://127.0.0.1:9/v1"',
    'api_key_env = "GITHUB_TOKEN"',
    'api = "chat"',
    '[providers.openai-compatible.local]',
    'base_url = "http://127.0.0.1:8/v1"',
    '[conversation.tools.defaults]',
    'run = "ask"',
    'result = "unattended"',
    'detached = { run = "deny", tool = "defaults" }',
    '[conversation.tools.fs_read_file]',
    'run = "unattended"',
    '[conversation.tools.run_command]',
    'run = "unattended"',
    'timeout_secs = 5',
    'side_effects = false',
    'env_vars = ["OPENAI_API_KEY"]',
    '[conversation.tools.fs_create_file]',
    'detached = "defer"',
    'run = "skip"',
    '[conversation.tools.deploy]',
    'command = "./deploy.sh"',
    'run = "unattended"',
    '[conversation.tools.git.questions.push]',
    'exclusive = false',
    'target = "assistant"',
    'default = true',
    '[conversation.tools.git.questions.tag]',
    'exclusive = true',
    'target = "user"',
    '[conversation.hooks]',
    'on_waiting = "sh -c id"',
    '[mcp.servers.fs]',
    'command = "npx"',
    'trust_annotations = true',
    '[secrets]',
    'env_vars = ["MY_TOKEN"]',
  ].join('\n');

  it('a workspace may not turn checkpoints off without trust, and may keep them on', () => {
    const keys = (text: string): string[] =>
      keysNeedingTrust(parseToml(text) as Record<string, unknown>).map((key) => key.key);
    assert.deepEqual(keys('[checkpoints]\nenabled = false\n'), ['checkpoints.enabled']);
    assert.deepEqual(keys('[checkpoints]\nenabled = true\nmax_files = 10\n'), []);
  });

  it('names every key that needs trust once, the outermost, and nothing that does not', () => {
    const keys = keysNeedingTrust(parseToml(workspace) as Record<string, unknown>).map((key) => key.key);
    assert.deepEqual(keys, [
      'conversation.hooks',
      'conversation.tools.defaults.detached',
      'conversation.tools.deploy',
      'conversation.tools.git.questions.push.default',
      'conversation.tools.git.questions.push.exclusive',
      'conversation.tools.git.questions.push.target',
      'conversation.tools.run_command.env_vars',
      'conversation.tools.run_command.run',
      'conversation.tools.run_command.side_effects',
      'mcp.servers.fs',
      'providers.openai-compatible.local',
      'providers.openai.api_key_env',
      'providers.openai.base_url',
      'secrets.env_vars',
    ]);
  });

  it('an untrusted workspace config applies without those keys; trusted as it is, it applies whole; changed, untrusted again', () => {
    const file = tempFile(workspace);
    const untrusted = loadConfig(inputs({ workspaceFile: file }));
    assert.equal(untrusted.value.providers?.openai?.base_url, undefined);
    assert.equal(untrusted.value.providers?.openai?.api, 'chat', 'the rest of the workspace config applies');
    assert.equal(untrusted.value.assistant?.model, 'anthropic/claude-test');
    assert.equal(untrusted.value.conversation?.hooks?.on_waiting, undefined);
    assert.equal(untrusted.value.mcp?.servers?.fs, undefined);
    assert.equal(resolveRunMode(untrusted, 'run_command').value, 'ask');
    assert.equal(resolveRunMode(untrusted, 'fs_create_file').value, 'skip', 'stricter settings apply');
    assert.equal(resolveDetachedPolicy(untrusted, 'fs_create_file', 'run', 'deny').value, 'defer');
    assert.equal(untrusted.value.secrets?.env_vars, undefined, 'a secret list changes what approvals show');
    assert.equal(untrusted.ignored.length, 14);
    assert.match(untrusted.ignored.find((key) => key.key === 'providers.openai.base_url')!.where, /config\.toml:3$/);
    assert.equal(untrusted.workspace?.trusted, false);

    const trusted = loadConfig(inputs({ workspaceFile: file, trustedWorkspaceSha256: configContentHash(workspace) }));
    assert.equal(trusted.value.providers?.openai?.base_url, 'http://127.0.0.1:9/v1');
    assert.equal(trusted.value.conversation?.hooks?.on_waiting, 'sh -c id');
    assert.deepEqual(trusted.value.secrets?.env_vars, ['MY_TOKEN']);
    assert.deepEqual(trusted.ignored, []);

    writeFileSync(file, workspace + '\n# changed\n');
    const changed = loadConfig(inputs({ workspaceFile: file, trustedWorkspaceSha256: configContentHash(workspace) }));
    assert.equal(changed.value.conversation?.hooks?.on_waiting, undefined);
    assert.equal(changed.ignored.length, 14);
  });

  it('the user config, JP_CFG_*, --cfg and flags always count', () => {
    const user = tempFile('[conversation.hooks]\non_waiting = "notify"\n');
    const loaded = loadConfig(
      inputs({
        userFile: user,
        environment: { JP_CFG_PROVIDERS__OPENAI__BASE_URL: 'http://127.0.0.1:7/v1' },
        cfgArguments: ['conversation.tools.run_command.run="unattended"'],
        flags: [{ label: '--x', path: ['conversation', 'tools', 'defaults', 'detached'], value: 'auto' }],
      }),
    );
    assert.equal(loaded.value.conversation?.hooks?.on_waiting, 'notify');
    assert.equal(loaded.value.providers?.openai?.base_url, 'http://127.0.0.1:7/v1');
    assert.equal(resolveRunMode(loaded, 'run_command').value, 'unattended');
    assert.equal(resolveDetachedPolicy(loaded, 'x', 'run', 'deny').value, 'auto');
    assert.deepEqual(loaded.ignored, []);
  });

  it("a workspace run or result more permissive than the user's own layers give needs trust, not only one looser than the built-in default", () => {
    const user = tempFile(
      '[conversation.tools.fs_read_file]\nrun = "ask"\n[conversation.tools.defaults]\nresult = "ask"\n',
    );
    const workspaceText = [
      '[conversation.tools.fs_read_file]',
      'run = "unattended"',
      '[conversation.tools.run_command]',
      'result = "unattended"',
      '[conversation.tools.fs_list_files]',
      'run = "unattended"',
      '',
    ].join('\n');
    const workspaceFile = tempFile(workspaceText);
    const untrusted = loadConfig(inputs({ userFile: user, workspaceFile }));
    assert.deepEqual(
      untrusted.ignored.map((key) => key.key),
      ['conversation.tools.fs_read_file.run', 'conversation.tools.run_command.result'],
    );
    assert.equal(resolveRunMode(untrusted, 'fs_read_file').value, 'ask', "the user's stricter setting holds");
    assert.equal(resolveResultMode(untrusted, 'run_command').value, 'ask');
    assert.equal(
      resolveRunMode(untrusted, 'fs_list_files').value,
      'unattended',
      "no looser than the user's own: applies",
    );

    const trusted = loadConfig(
      inputs({ userFile: user, workspaceFile, trustedWorkspaceSha256: configContentHash(workspaceText) }),
    );
    assert.equal(resolveRunMode(trusted, 'fs_read_file').value, 'unattended', 'trusted, it applies');
    assert.deepEqual(
      loadConfig(inputs({ workspaceFile })).ignored,
      [],
      'without a user config, the built-in defaults are what it is compared with',
    );
  });

  it('secrets.env_vars is the union over the layers: a later layer adds secrets, never removes one', () => {
    const user = tempFile('[secrets]\nenv_vars = ["USER_SECRET"]\n');
    const emptied = loadConfig(
      inputs({
        userFile: user,
        workspaceFile: tempFile('[secrets]\nenv_vars = []\n'),
        cfgArguments: ['secrets.env_vars=[]'],
      }),
    );
    assert.deepEqual(emptied.value.secrets?.env_vars, ['USER_SECRET']);
    assert.equal(emptied.sources.get('secrets.env_vars')?.label, user, 'set by the last layer that added to it');
    const workspaceText = '[secrets]\nenv_vars = ["WORKSPACE_SECRET"]\n';
    const workspaceFile = tempFile(workspaceText);
    // A workspace's list counts once trusted (it changes what an approval shows); then it adds.
    const untrusted = loadConfig(inputs({ userFile: user, workspaceFile }));
    assert.deepEqual(untrusted.value.secrets?.env_vars, ['USER_SECRET']);
    const added = loadConfig(
      inputs({ userFile: user, workspaceFile, trustedWorkspaceSha256: configContentHash(workspaceText) }),
    );
    assert.deepEqual(added.value.secrets?.env_vars, ['USER_SECRET', 'WORKSPACE_SECRET']);
    assert.equal(added.sources.get('secrets.env_vars')?.label, workspaceFile);
  });

  it('a new rule is one line', () => {
    const rules = [...trustRequiringKeys, { key: 'assistant.system_prompt', reason: 'test' }];
    assert.deepEqual(
      keysNeedingTrust({ assistant: { system_prompt: 'x', model: 'y' } }, rules).map((key) => key.key),
      ['assistant.system_prompt'],
    );
  });
});
