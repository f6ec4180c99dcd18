/**
 * The cascade merges (config/cascade.ts), the same for every pair of layers: built-in, user,
 * workspace, JP_CFG_*, the conversation's recorded settings, --cfg. A table fills in under an earlier
 * scalar of RFD 019's scalar-or-table `detached`, a scalar sets the keys it covers and keeps the
 * rest, any other table goes over a table key by key, and the merged configuration (not each layer
 * alone) must have what a table needs (a provider's base_url).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigInputs } from '../../../src/config/layers.ts';
import { loadConfig, type LoadedConfig } from '../../../src/config/load.ts';
import { describeEffective, resolveDetachedPolicy } from '../../../src/config/policy.ts';
import { configContentHash } from '../../../src/config/trust.ts';
import { JpError } from '../../../src/errors.ts';
import { mergeOver } from '../../../src/config/cascade.ts';
import { testConfigInputs, testUserConfig, testWorkspaceConfig } from '../../support/config.ts';

type LayerName = 'user' | 'workspace' | 'env' | 'conversation' | 'cfg';
const layerNames: LayerName[] = ['user', 'workspace', 'env', 'conversation', 'cfg'];

/** One setting, `key = value` (a TOML value), as each layer writes it. */
type Setting = [key: string, value: string];

/** Inputs in which `layer` sets `settings`, merged into what `inputs` has already. */
function withLayer(
  inputs: ConfigInputs & { user?: string; workspace?: string },
  layer: LayerName,
  settings: Setting[],
) {
  switch (layer) {
    case 'user':
    case 'workspace': {
      const text = (inputs[layer] ?? '') + settings.map(([key, value]) => `${key} = ${value}\n`).join('');
      return { ...inputs, [layer]: text };
    }
    case 'env':
      return {
        ...inputs,
        environment: {
          ...inputs.environment,
          ...Object.fromEntries(
            settings.map(([key, value]) => [
              `JP_CFG_${key.toUpperCase().replaceAll('.', '__')}`,
              value.replace(/^"|"$/g, ''),
            ]),
          ),
        },
      };
    case 'conversation': {
      let delta = inputs.conversation?.delta ?? {};
      for (const [key, value] of settings) {
        const parsed: unknown = JSON.parse(value);
        delta = mergeOver(
          delta,
          key.split('.').reduceRight<unknown>((inner, segment) => ({ [segment]: inner }), parsed) as Record<
            string,
            unknown
          >,
        );
      }
      return { ...inputs, conversation: { id: 'jp-c1', delta } };
    }
    case 'cfg':
      return {
        ...inputs,
        cfgArguments: [...inputs.cfgArguments, ...settings.map(([key, value]) => `${key}=${value}`)],
      };
  }
}

/** Loads the configuration with `lower` setting `below` and `upper` setting `above`; the workspace is trusted as written. */
function load(lower: LayerName, below: Setting[], upper: LayerName, above: Setting[]): LoadedConfig {
  const base = { ...testConfigInputs(), user: undefined, workspace: undefined } as ConfigInputs & {
    user?: string;
    workspace?: string;
  };
  const inputs = withLayer(withLayer(base, lower, below), upper, above);
  const { user, workspace, snapshot: _ignored, ...rest } = inputs;
  const final = testConfigInputs({
    ...rest,
    ...(user !== undefined ? { user } : {}),
    ...(workspace !== undefined ? { workspace, trustedWorkspaceSha256: configContentHash(workspace) } : {}),
  });
  return loadConfig(final);
}

/** Where each layer says a key came from. */
function labelOf(layer: LayerName, key: string, value: string): string {
  switch (layer) {
    case 'user':
      return testUserConfig;
    case 'workspace':
      return testWorkspaceConfig;
    case 'env':
      return `JP_CFG_${key.toUpperCase().replaceAll('.', '__')}`;
    case 'conversation':
      return 'conversation jp-c1 (settings recorded by earlier queries)';
    case 'cfg':
      return `--cfg ${key}=${value}`;
  }
}

const pairs = layerNames.flatMap((lower, index) => layerNames.slice(index + 1).map((upper) => [lower, upper] as const));
const detached = 'conversation.tools.defaults.detached';

describe('the cascade merges across every pair of layers', () => {
  it('there are ten pairs, each lower layer below each upper one', () => assert.equal(pairs.length, 10));

  for (const [lower, upper] of pairs) {
    describe(`${lower} below ${upper}`, () => {
      it('a table fills in under an earlier scalar: detached = "auto", then detached.escalate = "auto"', () => {
        const loaded = load(lower, [[detached, '"auto"']], upper, [[`${detached}.escalate`, '"auto"']]);
        const run = resolveDetachedPolicy(loaded, 'run_command', 'run', 'deny');
        assert.deepEqual(
          [run.value, run.key, run.layer],
          ['auto', detached, labelOf(lower, detached, '"auto"')],
          'run keeps the scalar, named as written, in its layer',
        );
        for (const kind of ['deliver', 'tool'] as const)
          assert.equal(resolveDetachedPolicy(loaded, 'run_command', kind, 'deny').value, 'auto');
        const escalate = resolveDetachedPolicy(loaded, 'run_command', 'escalate', 'deny');
        assert.deepEqual(
          [escalate.value, escalate.key, escalate.layer],
          ['auto', `${detached}.escalate`, labelOf(upper, `${detached}.escalate`, '"auto"')],
        );
      });

      it('a table setting one kind over a scalar changes only that kind: detached = "auto", then detached.tool = "deny"', () => {
        const loaded = load(lower, [[detached, '"auto"']], upper, [[`${detached}.tool`, '"deny"']]);
        const policies = (['run', 'deliver', 'tool', 'escalate'] as const).map(
          (kind) => resolveDetachedPolicy(loaded, 'x', kind, 'deny').value,
        );
        assert.deepEqual(policies, ['auto', 'auto', 'deny', 'deny']);
      });

      it('a scalar sets the kinds it covers and keeps the rest: detached.escalate = "auto", then detached = "defer"', () => {
        const loaded = load(
          lower,
          [
            [`${detached}.escalate`, '"auto"'],
            [`${detached}.run`, '"deny"'],
          ],
          upper,
          [[detached, '"defer"']],
        );
        const policies = (['run', 'deliver', 'tool', 'escalate'] as const).map(
          (kind) => resolveDetachedPolicy(loaded, 'x', kind, 'deny').value,
        );
        assert.deepEqual(policies, ['defer', 'defer', 'defer', 'auto']);
        assert.equal(resolveDetachedPolicy(loaded, 'x', 'run', 'deny').key, detached);
        assert.equal(resolveDetachedPolicy(loaded, 'x', 'escalate', 'deny').key, `${detached}.escalate`);
      });

      it("any table: a provider's context_window over its base_url keeps both (checked merged, not alone)", () => {
        const table = 'providers.openai-compatible.llamacpp';
        const loaded = load(lower, [[`${table}.base_url`, '"http://127.0.0.1:8080/v1"']], upper, [
          [`${table}.context_window`, '2048'],
        ]);
        assert.deepEqual(loaded.value.providers?.['openai-compatible']?.llamacpp, {
          base_url: 'http://127.0.0.1:8080/v1',
          context_window: 2048,
        });
        assert.equal(
          loaded.sources.get(`${table}.base_url`)?.label,
          labelOf(lower, `${table}.base_url`, '"http://127.0.0.1:8080/v1"'),
        );
        assert.equal(
          loaded.sources.get(`${table}.context_window`)?.label,
          labelOf(upper, `${table}.context_window`, '2048'),
        );
      });
    });
  }

  it('the built-in layer: a table of any layer fills in under the built-in one', () => {
    for (const layer of layerNames) {
      const loaded = load(layer, [['assistant.request.idle_timeout_secs', '30']], layer, []);
      assert.deepEqual(loaded.value.assistant?.request, {
        max_retries: 4,
        backoff_base_ms: 1000,
        backoff_max_ms: 30000,
        headers_timeout_secs: 600,
        idle_timeout_secs: 30,
      });
      assert.equal(loaded.sources.get('assistant.request.max_retries')?.label, 'built-in default');
    }
  });

  it('what no layer supplies is missing from the merged configuration, named at the layer that made the table', () => {
    let error: unknown;
    try {
      load('user', [], 'cfg', [['providers.openai-compatible.llamacpp.context_window', '2048']]);
    } catch (caught) {
      error = caught;
    }
    assert.ok(JpError.isInstance(error));
    assert.equal(error.exitCode, 2);
    assert.match(
      error.message,
      /^--cfg providers\.openai-compatible\.llamacpp\.context_window=2048: invalid value for providers\.openai-compatible\.llamacpp\.base_url: expected string, got nothing$/,
    );
  });

  it('show --effective names the key as each layer wrote it and the layer that set it', () => {
    const loaded = load('user', [[detached, '"auto"']], 'cfg', [[`${detached}.escalate`, '"auto"']]);
    const text = describeEffective(loaded, 'run_command', 'deny').join('\n');
    assert.match(
      text,
      new RegExp(`detached\\.run\\s+= auto\\s+set by ${detached.replaceAll('.', '\\.')} \\(${testUserConfig}\\)`),
    );
    assert.match(
      text,
      new RegExp(
        `detached\\.escalate\\s+= auto\\s+set by ${detached.replaceAll('.', '\\.')}\\.escalate \\(--cfg ${detached.replaceAll('.', '\\.')}\\.escalate="auto"\\)`,
      ),
    );
  });

  it('the settings a conversation records merge by the same rule', () => {
    assert.deepEqual(
      mergeOver({ a: { detached: 'auto' } }, { a: { detached: { escalate: 'auto' } } }),
      { a: { detached: { escalate: 'auto' } } },
      'elsewhere a later table replaces a scalar: only conversation.tools.<tool>.detached takes either',
    );
    const tools = (detachedValue: unknown) => ({ conversation: { tools: { defaults: { detached: detachedValue } } } });
    assert.deepEqual(
      mergeOver(tools('auto'), tools({ escalate: 'auto' })),
      tools({ run: 'auto', deliver: 'auto', tool: 'auto', escalate: 'auto' }),
    );
    assert.deepEqual(
      mergeOver(tools({ run: 'auto' }), tools('deny')),
      tools('deny'),
      'a scalar over only what it covers stays a scalar',
    );
  });
});
