/**
 * The pure parts of MCP support: an elicitation's schema as form fields, form answers checked
 * against them, the defaults an unattended run may send, routing of form questions, tool results
 * as text, and the checks on `[mcp.servers]` that the schema alone cannot make.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../../src/config/load.ts';
import { testConfigInputs, testUserConfig } from '../../support/config.ts';
import { JpError } from '../../../src/errors.ts';
import {
  contentFromModel,
  defaultFormAnswer,
  formContentSchema,
  formProblem,
  isValidFormAnswer,
} from '../../../src/inquiry/form.ts';
import { route } from '../../../src/inquiry/route.ts';
import type { Inquiry } from '../../../src/inquiry/types.ts';
import { elicitationQuestion, elicitationResult, fieldsOf } from '../../../src/tools/mcp/elicitation.ts';
import { describeCallResult } from '../../../src/tools/mcp/result.ts';
import { configuredMcpServers } from '../../../src/tools/mcp/config.ts';
import { mcpToolName } from '../../../src/tools/mcp/tool.ts';
import { applyQuestionConfig } from '../../../src/turn/inquiries.ts';

/** A trimmed copy of server-everything's trigger-elicitation-request schema. */
const requestedSchema = {
  type: 'object',
  properties: {
    name: { title: 'String', type: 'string', description: 'Your full, legal name' },
    check: { title: 'Boolean', type: 'boolean' },
    email: { type: 'string', format: 'email' },
    integer: { title: 'Integer', type: 'integer', minimum: 1, maximum: 100, default: 42 },
    friend: { type: 'string', enum: ['Monica', 'Rachel'], default: 'Monica' },
    instruments: {
      type: 'array',
      minItems: 1,
      maxItems: 2,
      items: { type: 'string', enum: ['Guitar', 'Piano', 'Drums'] },
      default: ['Guitar'],
    },
    hero: {
      type: 'string',
      oneOf: [
        { const: 'hero-1', title: 'Superman' },
        { const: 'hero-2', title: 'Wonder Woman' },
      ],
    },
    fish: { type: 'array', items: { anyOf: [{ const: 'fish-1', title: 'Tuna' }] } },
    pet: { type: 'string', enum: ['pet-1', 'pet-2'], enumNames: ['Cats', 'Dogs'] },
  },
  required: ['name'],
};

const fields = fieldsOf(requestedSchema);
const byName = (name: string) => fields.find((field) => field.name === name)!;

function loaded(toml: string) {
  return { file: testUserConfig, config: loadConfig(testConfigInputs({ user: toml })) };
}

describe('elicitation schema as form fields', () => {
  it('reads every kind of field, its bounds, choices (titled, untitled, legacy) and default', () => {
    assert.deepEqual(byName('name'), {
      name: 'name',
      type: 'string',
      required: true,
      title: 'String',
      description: 'Your full, legal name',
    });
    assert.equal(byName('check').type, 'boolean');
    assert.equal(byName('email').format, 'email');
    assert.deepEqual(
      [byName('integer').type, byName('integer').minimum, byName('integer').maximum, byName('integer').default],
      ['integer', 1, 100, 42],
    );
    assert.deepEqual(byName('friend').options, [
      { value: 'Monica', label: 'Monica' },
      { value: 'Rachel', label: 'Rachel' },
    ]);
    assert.deepEqual(
      [byName('instruments').type, byName('instruments').min_items, byName('instruments').max_items],
      ['multi_enum', 1, 2],
    );
    assert.deepEqual(byName('hero').options![1], { value: 'hero-2', label: 'Wonder Woman' });
    assert.deepEqual(byName('fish').options, [{ value: 'fish-1', label: 'Tuna' }]);
    assert.deepEqual(byName('pet').options![0], { value: 'pet-1', label: 'Cats' });
  });

  it('numbers its questions: elicitation, elicitation_2, ...; not exclusive; a default only when every required field has one', () => {
    const first = elicitationQuestion(0, 'Who are you?', requestedSchema);
    assert.equal(first.id, 'elicitation');
    assert.equal(first.answer_type, 'form');
    assert.equal(first.exclusive, false);
    assert.equal(first.default, undefined, '"name" is required and has no default');
    const second = elicitationQuestion(1, 'Again?', {
      type: 'object',
      properties: { size: { type: 'integer', default: 3 } },
      required: ['size'],
    });
    assert.equal(second.id, 'elicitation_2');
    assert.deepEqual(second.default, { action: 'accept', content: { size: 3 } });
  });
});

describe('form answers', () => {
  it('accepts content that fits, with optional fields left out', () => {
    assert.equal(formProblem(fields, { name: 'Ada', integer: 7, instruments: ['Piano'], hero: 'hero-1' }), undefined);
    assert.ok(isValidFormAnswer(fields, { action: 'accept', content: { name: 'Ada' } }));
    assert.ok(isValidFormAnswer(fields, { action: 'decline' }));
    assert.ok(isValidFormAnswer(fields, { action: 'cancel' }));
  });

  it('refuses what does not fit, saying which field and why', () => {
    assert.equal(formProblem(fields, {}), 'name: required');
    assert.equal(formProblem(fields, { name: 'Ada', integer: 0 }), 'integer: must be at least 1');
    assert.equal(formProblem(fields, { name: 'Ada', integer: 2.5 }), 'integer: must be a whole number');
    assert.equal(formProblem(fields, { name: 'Ada', email: 'not-an-address' }), 'email: is not an email address');
    assert.equal(formProblem(fields, { name: 'Ada', friend: 'Ross' }), 'friend: must be one of "Monica", "Rachel"');
    assert.equal(formProblem(fields, { name: 'Ada', instruments: [] }), 'instruments: must have at least 1 choice(s)');
    assert.equal(
      formProblem(fields, { name: 'Ada', instruments: ['Guitar', 'Piano', 'Drums'] }),
      'instruments: must have at most 2 choice(s)',
    );
    assert.equal(formProblem(fields, { name: 'Ada', check: 'yes' }), 'check: must be true or false');
    assert.equal(formProblem(fields, { name: 'Ada', color: 'red' }), 'color: no such field');
    assert.ok(!isValidFormAnswer(fields, { action: 'accept' }));
    assert.ok(!isValidFormAnswer(fields, { name: 'Ada' }), 'an answer says accept, decline or cancel');
    assert.ok(!isValidFormAnswer(fields, 'decline'));
  });

  it("defaults: the schema's defaults, or none when a required field has no default", () => {
    assert.equal(defaultFormAnswer(fields), undefined);
    const optional = fields.map((field) => ({ ...field, required: false }));
    assert.deepEqual(defaultFormAnswer(optional), {
      action: 'accept',
      content: { integer: 42, friend: 'Monica', instruments: ['Guitar'] },
    });
  });

  it("the model's schema lists every field (strict structured output), optional ones nullable; nulls are dropped", () => {
    const schema = formContentSchema(fields) as {
      required: string[];
      properties: Record<string, any>;
      additionalProperties: boolean;
    };
    assert.deepEqual(
      schema.required,
      fields.map((field) => field.name),
    );
    assert.equal(schema.additionalProperties, false);
    assert.deepEqual(schema.properties.name, { type: 'string', description: 'String: Your full, legal name' });
    assert.deepEqual(schema.properties.integer.anyOf, [
      { type: 'integer', minimum: 1, maximum: 100, description: 'Integer' },
      { type: 'null' },
    ]);
    assert.deepEqual(contentFromModel({ name: 'Ada', check: null }), { name: 'Ada' });
    assert.equal(contentFromModel('Ada'), undefined);
  });

  it('what the server is sent: accept with content, decline (also when nobody could answer), cancel on defer', () => {
    assert.deepEqual(
      elicitationResult({
        kind: 'answered',
        answer: { action: 'accept', content: { name: 'Ada' } },
        by: 'user',
        reason: undefined,
      }),
      { action: 'accept', content: { name: 'Ada' } },
    );
    assert.deepEqual(
      elicitationResult({ kind: 'answered', answer: { action: 'decline' }, by: 'user', reason: undefined }),
      { action: 'decline' },
    );
    assert.deepEqual(elicitationResult({ kind: 'unanswered', reason: 'no user' }), { action: 'decline' });
    assert.deepEqual(elicitationResult({ kind: 'deferred' }), { action: 'cancel' });
  });
});

describe('routing a form question (the one route())', () => {
  const question = elicitationQuestion(0, 'Who are you?', requestedSchema);
  const withDefault = elicitationQuestion(0, 'Size?', {
    type: 'object',
    properties: { size: { type: 'integer', default: 3 } },
    required: ['size'],
  });
  const inquiry = (q: typeof question): Inquiry => ({ kind: 'tool_question', tool: 'mcp__s__t', question: q });
  it('a human gets it; auto asks the model unless exclusive; defaults needs every required default; deny fails; defer defers', () => {
    assert.equal(
      route(inquiry(question), { hasClient: true, policy: 'deny', configExclusive: undefined }),
      'PromptClient',
    );
    assert.equal(
      route(inquiry(question), { hasClient: false, policy: 'auto', configExclusive: undefined }),
      'LlmInquiry',
    );
    assert.equal(route(inquiry(question), { hasClient: false, policy: 'auto', configExclusive: true }), 'Fail');
    assert.equal(
      route(inquiry(question), { hasClient: false, policy: 'defaults', configExclusive: undefined }),
      'Fail',
    );
    assert.equal(
      route(inquiry(withDefault), { hasClient: false, policy: 'defaults', configExclusive: undefined }),
      'UseDefault',
    );
    assert.equal(route(inquiry(question), { hasClient: false, policy: 'deny', configExclusive: undefined }), 'Fail');
    assert.equal(route(inquiry(question), { hasClient: false, policy: 'defer', configExclusive: undefined }), 'Defer');
  });

  it('config: exclusive applies; a scalar default does not stand in for a form, and the reason says so', () => {
    const { config } = loaded(
      '[conversation.tools.mcp__s__t.questions.elicitation]\nexclusive = true\ndefault = "x"\n',
    );
    const applied = applyQuestionConfig(config, 'mcp__s__t', question);
    assert.equal(applied.configExclusive, true);
    assert.equal(applied.question.default, undefined);
    assert.match(applied.defaultProblem!, /do not apply to a form/);
    const plain = applyQuestionConfig(loaded('').config, 'mcp__s__t', question);
    assert.equal(plain.defaultProblem, `the form's required field "name" has no default`);
  });
});

describe('tool results as text', () => {
  it('text as is; structured content once; images and audio described; resource links and resources named', () => {
    const result = describeCallResult({
      content: [
        { type: 'text', text: '{"temperature": 21}' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt', mimeType: 'text/plain', description: 'notes' },
        { type: 'resource', resource: { uri: 'file:///b.txt', text: 'inside b' } },
        { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'AAAA', mimeType: 'application/octet-stream' } },
      ],
      structuredContent: { temperature: 21 },
    });
    assert.equal(result.isError, false);
    assert.equal(
      result.text,
      [
        '{"temperature": 21}',
        '[image: image/png, 8 bytes; not shown to the model]',
        '[audio: audio/wav, 3 bytes; not shown to the model]',
        '[resource link: a.txt <file:///a.txt> (text/plain; notes)]',
        '[resource <file:///b.txt>]\ninside b',
        '[resource <file:///c.bin>: application/octet-stream, 3 bytes]',
      ].join('\n'),
    );
    assert.equal(describeCallResult({ content: [], structuredContent: { a: 1 } }).text, 'structured content: {"a":1}');
    assert.deepEqual(describeCallResult({ content: [{ type: 'text', text: 'no such city' }], isError: true }), {
      text: 'no such city',
      isError: true,
    });
    assert.equal(describeCallResult({ toolResult: { legacy: true } }).text, '{"legacy":true}');
  });

  it('tool names: mcp__<server>__<tool>, characters providers refuse become _', () => {
    assert.equal(mcpToolName('files', 'read.file/v2'), 'mcp__files__read_file_v2');
  });
});

describe('[mcp.servers] checks beyond the schema', () => {
  function failure(toml: string): { message: string; file: string } {
    const { file, config } = loaded(toml);
    try {
      configuredMcpServers(config, {}, '/workspace');
    } catch (error) {
      assert.ok(JpError.isInstance(error));
      assert.equal(error.exitCode, 2);
      return { message: error.message, file };
    }
    assert.fail('expected a configuration error');
  }

  it('needs exactly one of command and url, and no key of the other transport; names file and line', () => {
    let { message, file } = failure('[mcp.servers.a]\nenabled = true\n');
    assert.equal(message, `${file}:1: mcp.servers.a has neither command nor url`);
    ({ message, file } = failure('[mcp.servers.a]\ncommand = "x"\nurl = "http://127.0.0.1:1/mcp"\n'));
    assert.equal(message, `${file}:3: mcp.servers.a has both command and url`);
    ({ message, file } = failure('[mcp.servers.a]\ncommand = "x"\nheaders = { A = "b" }\n'));
    assert.equal(message, `${file}:3: mcp.servers.a.headers applies only to a server reached by url`);
  });

  it('a stdio server gets its env and the env_vars it names, relative cwd from the workspace, defaults for the limits', () => {
    const { config } = loaded(
      '[mcp.servers.a]\ncommand = "x"\nenv = { A = "1" }\nenv_vars = ["B", "MISSING"]\ncwd = "tools"\n',
    );
    const [server] = configuredMcpServers(config, { B: '2', OPENAI_API_KEY: 'sk-secret' }, '/workspace');
    assert.deepEqual(server!.spec.env, { A: '1', B: '2' });
    assert.equal(server!.spec.cwd, '/workspace/tools');
    assert.equal(server!.spec.startupTimeoutSeconds, 30);
    assert.equal(server!.spec.trustAnnotations, false);
    assert.equal(server!.enabled, true);
  });
});
