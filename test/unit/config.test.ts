import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig, parseScalar, type ConfigInputs } from '../../src/config/load.ts';
import { locateKey } from '../../src/config/locate.ts';
import { describeEffective, resolveDetachedPolicy, resolveRunMode } from '../../src/config/policy.ts';
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

    loaded = loadConfig(inputs({ userFile: user, workspaceFile: workspace, environment: { JP_CFG_ASSISTANT__MODEL: 'ollama/c' } }));
    assert.equal(loaded.value.assistant?.model, 'ollama/c');
    assert.equal(loaded.sources.get('assistant.model')?.label, 'JP_CFG_ASSISTANT__MODEL');

    loaded = loadConfig(
      inputs({ workspaceFile: workspace, environment: { JP_CFG_ASSISTANT__MODEL: 'ollama/c' }, cfgArguments: ['assistant.model=ollama/d'] }),
    );
    assert.equal(loaded.value.assistant?.model, 'ollama/d');

    loaded = loadConfig(
      inputs({ cfgArguments: ['assistant.model=ollama/d'], flags: [{ label: '--model', path: ['assistant', 'model'], value: 'ollama/e' }] }),
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
    const loaded = loadConfig(inputs({ cfgArguments: ['conversation.tools.defaults.detached={ run = "auto", tool = "defaults" }'] }));
    assert.deepEqual(loaded.value.conversation?.tools?.defaults?.detached, { run: 'auto', tool: 'defaults' });
  });

  it('a scalar replaces a table from a lower layer, and vice versa', () => {
    const workspace = tempFile('[conversation.tools.defaults.detached]\nrun = "auto"\n');
    const loaded = loadConfig(inputs({ workspaceFile: workspace, cfgArguments: ['conversation.tools.defaults.detached=deny'] }));
    assert.equal(loaded.value.conversation?.tools?.defaults?.detached, 'deny');
    assert.equal(loaded.sources.has('conversation.tools.defaults.detached.run'), false);
  });
});

describe('config errors name the file, line and key path, and write nothing', () => {
  it('unknown key in a file', () => {
    const file = tempFile('[assistant]\nmodel = "openai/x"\n\n[conversation.tools.fs_modify_file]\nrun = "ask"\ncolour = "red"\n');
    const before = readdirSync(path.dirname(file));
    const error = configError(() => loadConfig(inputs({ workspaceFile: file })));
    assert.equal(error.exitCode, 2);
    assert.equal(error.code, 'config_invalid');
    assert.match(error.message, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6: unknown key conversation\\.tools\\.fs_modify_file\\.colour`));
    assert.deepEqual(readdirSync(path.dirname(file)), before);
    assert.equal(readFileSync(file, 'utf8').includes('colour'), true);
  });

  it('wrong type in a file', () => {
    const file = tempFile('[assistant]\nmax_turns = "many"\n');
    const error = configError(() => loadConfig(inputs({ userFile: file })));
    assert.match(error.message, /config\.toml:2: invalid value for assistant\.max_turns: expected (int|number), got string "many"/);
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
    assert.match(error.message, /environment variable JP_CFG_ASSISTANT__MAX_TURNS: invalid value for assistant\.max_turns/);
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
    assert.equal(locateKey(source, ['conversation', 'tools', 'git', 'questions', 'confirm_force_push', 'exclusive']), 6);
    assert.equal(locateKey(source, ['conversation', 'tools', 'git', 'questions', 'confirm_force_push', 'quoted key']), 7);
    assert.equal(locateKey(source, ['conversation', 'tools', 'defaults', 'detached', 'tool']), 9);
    assert.equal(locateKey(source, ['conversation', 'tools', 'defaults', 'run']), 8);
    assert.equal(locateKey(source, ['nothing']), undefined);
  });
});

describe('detached policy resolution (five steps, first match wins)', () => {
  const load = (toml: string) => loadConfig(inputs({ workspaceFile: tempFile(toml) }));
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
    const file = tempFile('[conversation.tools.fs_modify_file]\ndetached = { run = "auto" }\n');
    const loaded = loadConfig(inputs({ workspaceFile: file }));
    const text = describeEffective(loaded, 'fs_modify_file', 'deny').join('\n');
    assert.match(text, /detached\.run\s+= auto\s+set by conversation\.tools\.fs_modify_file\.detached\.run \(.*config\.toml\)/);
    assert.match(text, /detached\.deliver\s+= deny\s+set by built-in/);
  });
});
