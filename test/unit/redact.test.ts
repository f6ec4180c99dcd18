import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSecretName, Secrets } from '../../src/redact.ts';
import { toolEnvironment } from '../../src/tools/environment.ts';

const secrets = new Secrets();
secrets.add({ KEY: 'sk-canary-0123456789', SHORT: 'abc', OTHER: 'hunter2hunter2' }, [
  'KEY',
  'SHORT',
  'OTHER',
  'MISSING',
]);
const redact = (text: string): string => secrets.redact(text);
const redactValue = <T>(value: T): T => secrets.redactValue(value);

describe('redact', () => {
  it('replaces the registered values only, and never a value shorter than 8 characters', () => {
    assert.equal(redact('key=sk-canary-0123456789; pw hunter2hunter2; abc'), 'key=[REDACTED]; pw [REDACTED]; abc');
    assert.equal(redact('sk-something-else'), 'sk-something-else', 'no guessing from shapes');
  });

  it('redacts every string of a value, keys included, and keeps an unchanged value as it is', () => {
    const clean = { a: ['x', { b: 1 }] };
    assert.equal(redactValue(clean), clean);
    assert.deepEqual(
      redactValue({ content: 'sk-canary-0123456789', list: ['hunter2hunter2'], 'sk-canary-0123456789': true, n: 1 }),
      {
        content: '[REDACTED]',
        list: ['[REDACTED]'],
        '[REDACTED]': true,
        n: 1,
      },
    );
  });

  it('catches a secret split across streamed pieces, and releases text that turned out not to be one', () => {
    const stream = secrets.stream();
    const pieces = ['the key is sk-can', 'ary-01234', '56789 and sk-', 'cannot'];
    const released = pieces.map((piece) => stream.push(piece)).join('') + stream.end();
    assert.equal(released, 'the key is [REDACTED] and sk-cannot');
    const ending = secrets.stream();
    assert.equal(ending.push('ends with sk-ca'), 'ends with ');
    assert.equal(ending.end(), 'sk-ca');
  });
});

describe('toolEnvironment', () => {
  it('withholds the provider key variables unless passed through by name, and sets literal values last', () => {
    const parent = { PATH: '/bin', OPENAI_API_KEY: 'k1', ANTHROPIC_API_KEY: 'k2', GITHUB_TOKEN: 'g' };
    const environment = toolEnvironment(parent, {
      withheld: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'],
      passThrough: ['ANTHROPIC_API_KEY'],
      set: { X: '1' },
    });
    assert.deepEqual(environment, { PATH: '/bin', ANTHROPIC_API_KEY: 'k2', GITHUB_TOKEN: 'g', X: '1' });
    assert.equal(parent.OPENAI_API_KEY, 'k1', 'the parent environment is left alone');
  });
});

describe('secrets in JSON-escaped text and by name', () => {
  it('a secret holding " and \\ is redacted raw, JSON-escaped once and twice', () => {
    const secret = 'pa"ss\\word-42';
    secrets.add({ QUOTED: secret }, ['QUOTED']);
    const once = JSON.stringify(secret).slice(1, -1);
    const twice = JSON.stringify(once).slice(1, -1);
    assert.equal(redact(`raw ${secret}`), 'raw [REDACTED]');
    assert.equal(redact(JSON.stringify({ line: `argv ${secret}` })), '{"line":"argv [REDACTED]"}');
    assert.equal(redact(`{"body":"${twice}"}`), '{"body":"[REDACTED]"}');
  });

  it('an MCP env value is a secret when its name ends in _TOKEN, _API_KEY, _SECRET or _PASSWORD', () => {
    assert.deepEqual(
      ['SERVICE_TOKEN', 'DEPLOY_API_KEY', 'APP_SECRET', 'DB_PASSWORD', 'LOG_LEVEL', 'TOKENS'].map(isSecretName),
      [true, true, true, true, false, false],
    );
    secrets.addNamed({ SERVICE_TOKEN: 'svc-token-value-1', LOG_LEVEL: 'debug-verbose-level' });
    assert.equal(redact('svc-token-value-1 debug-verbose-level'), '[REDACTED] debug-verbose-level');
  });
});

describe('Secrets is an object, not a process global', () => {
  it('what one registry knows, another made in the same process does not', () => {
    const first = new Secrets();
    const second = new Secrets();
    first.add({ ONLY_FIRST: 'first-registry-secret' }, ['ONLY_FIRST']);
    assert.equal(first.redact('x first-registry-secret'), 'x [REDACTED]');
    assert.equal(second.redact('x first-registry-secret'), 'x first-registry-secret');
    assert.equal(second.stream().push('first-registry-secret'), 'first-registry-secret');
  });
});
