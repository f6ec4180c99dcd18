/**
 * The JSON Schemas in `schema/`: they compile, every $ref resolves, hand-written examples of every
 * event, output line, result status and protocol message pass, broken ones fail, and what the real
 * code writes (results, renderer lines) passes too.
 */
import { Secrets } from '../../src/redact.ts';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { JsonRenderer } from '../../src/client/json-renderer.ts';
import { TerminalOutput } from '../../src/client/terminal-output.ts';
import { eventTypes, isConversationEvent, type ConversationEvent } from '../../src/conversation/events.ts';
import { exitCodeOf, JpError, type RunStatus } from '../../src/errors.ts';
import { SafeWriter } from '../../src/output/channels.ts';
import { parseClientMessage } from '../../src/protocol/client-messages.ts';
import { buildErrorResult, buildTurnResult } from '../../src/report/result.ts';
import type { TurnOutcome } from '../../src/turn/engine.ts';
import { StopRequest } from '../../src/turn/host.ts';
import { createAjv, loadSchemas, schemaBase } from '../support/schemas.ts';

const base = schemaBase;
const EVENT = `${base}event.schema.json`;
const LINE = `${base}output-line.schema.json`;
const RESULT = `${base}result.schema.json`;
const LIST = `${base}conversation-list.schema.json`;
const PROTOCOL = `${base}protocol-message.schema.json`;

type Json = Record<string, unknown>;

const schemas = loadSchemas();
const schemaFiles = schemas.map((entry) => entry.name);

const ajv = createAjv();

function validator(ref: string) {
  const validate = ajv.getSchema(ref);
  assert.ok(validate, `no schema ${ref}`);
  return validate;
}

function assertValid(ref: string, value: unknown, label = JSON.stringify(value)): void {
  const validate = validator(ref);
  const ok = validate(value);
  assert.ok(ok, `expected ${label} to match ${ref}: ${ajv.errorsText(validate.errors)}`);
}

function assertInvalid(ref: string, value: unknown, label = JSON.stringify(value)): void {
  assert.equal(validator(ref)(value), false, `expected ${label} NOT to match ${ref}`);
}

const ts = '2025-03-01T12:34:56.789Z';
const cid = 'jp-c1740832496789123';

// ---- examples ------------------------------------------------------------------------------------

const runInquiry = { kind: 'run_tool', tool: 'run_command', arguments: { command: 'ls -la' } };
const deliverInquiry = { kind: 'deliver_tool_result', tool: 'read_file', result: 'file contents', is_error: false };
const questionInquiry = {
  kind: 'tool_question',
  tool: 'write_file',
  question: {
    id: 'overwrite',
    text: 'Overwrite notes.md?',
    answer_type: 'select',
    options: ['yes', 'no'],
    default: 'no',
    exclusive: true,
  },
};

const formInquiry = {
  kind: 'tool_question',
  tool: 'mcp__everything__trigger-elicitation-request',
  question: {
    id: 'elicitation',
    text: 'Please provide inputs',
    answer_type: 'form',
    exclusive: false,
    fields: [
      { name: 'name', type: 'string', title: 'Name', required: true, min_length: 1 },
      { name: 'integer', type: 'integer', required: false, minimum: 1, maximum: 100, default: 42 },
      { name: 'pets', type: 'multi_enum', required: false, options: [{ value: 'cat', label: 'Cats' }], max_items: 1 },
    ],
  },
};

const validEvents: Record<string, Json[]> = {
  turn_start: [{ type: 'turn_start', timestamp: ts }],
  chat_request: [
    { type: 'chat_request', timestamp: ts, content: 'list the files' },
    { type: 'chat_request', timestamp: ts, content: 'list the files', context: 'Branch: main' },
    { type: 'chat_request', timestamp: ts, content: 'run the tests first', hook: '~/bin/stop-check.sh' },
  ],
  chat_response: [
    { type: 'chat_response', timestamp: ts, message: 'Here they are.' },
    { type: 'chat_response', timestamp: ts, reasoning: 'The user wants a listing.' },
    {
      type: 'chat_response',
      timestamp: ts,
      reasoning: '',
      provider_metadata: { anthropic: { signature: 'EqQBCkYIBxgCKkBf' } },
    },
    { type: 'chat_response', timestamp: ts, message: 'Partial ans', incomplete: true },
    { type: 'chat_response', timestamp: ts, message: '', sources: [{ url: 'https://example.com/a', title: 'A' }] },
  ],
  tool_call_request: [
    { type: 'tool_call_request', timestamp: ts, id: 'call_1', name: 'run_command', arguments: { command: 'ls' } },
    { type: 'tool_call_request', timestamp: ts, id: 'call_2', name: 'run_command', arguments: 'not json {' },
    {
      type: 'tool_call_request',
      timestamp: ts,
      id: 'ws_1',
      name: 'web_search',
      arguments: { query: 'news' },
      provider_executed: true,
    },
  ],
  tool_call_start: [{ type: 'tool_call_start', timestamp: ts, id: 'call_1' }],
  tool_call_response: [
    { type: 'tool_call_response', timestamp: ts, id: 'call_1', content: 'a\nb\n', is_error: false, outcome: 'ok' },
    {
      type: 'tool_call_response',
      timestamp: ts,
      id: 'call_2',
      content: 'Tool call denied: no user.',
      is_error: true,
      outcome: 'denied',
    },
  ],
  inquiry_request: [
    { type: 'inquiry_request', timestamp: ts, id: 'inq_1', tool_call_id: 'call_1', inquiry: runInquiry },
    { type: 'inquiry_request', timestamp: ts, id: 'inq_2', tool_call_id: 'call_1', inquiry: deliverInquiry },
    { type: 'inquiry_request', timestamp: ts, id: 'inq_3', tool_call_id: 'call_3', inquiry: questionInquiry },
    {
      type: 'inquiry_request',
      timestamp: ts,
      id: 'inq_4',
      tool_call_id: 'call_4',
      inquiry: formInquiry,
      during_call: true,
    },
  ],
  inquiry_response: [
    { type: 'inquiry_response', timestamp: ts, id: 'inq_1', answer: 'run', by: 'user' },
    {
      type: 'inquiry_response',
      timestamp: ts,
      id: 'inq_1',
      answer: 'skip',
      by: 'hook',
      hook: 'node approval-hook.mjs',
      reason: 'not run: the hook `node approval-hook.mjs` denied it',
    },
    { type: 'inquiry_response', timestamp: ts, id: 'inq_1', answer: { edit: { command: 'ls' } }, by: 'user' },
    {
      type: 'inquiry_response',
      timestamp: ts,
      id: 'inq_2',
      answer: 'skip',
      by: 'policy',
      action: 'Fail',
      reason: 'conversation.tools.defaults.detached = "deny"',
    },
    {
      type: 'inquiry_response',
      timestamp: ts,
      id: 'inq_3',
      answer: null,
      by: 'policy',
      action: 'Fail',
      reason: 'no user',
    },
    { type: 'inquiry_response', timestamp: ts, id: 'inq_3', answer: 'no', by: 'assistant', action: 'LlmInquiry' },
    {
      type: 'inquiry_response',
      timestamp: ts,
      id: 'inq_4',
      answer: { action: 'accept', content: { name: 'Ada', integer: 7 } },
      by: 'user',
    },
    { type: 'inquiry_response', timestamp: ts, id: 'inq_4', answer: { action: 'decline' }, by: 'user' },
  ],
  turn_end: [
    { type: 'turn_end', timestamp: ts, status: 'completed' },
    { type: 'turn_end', timestamp: ts, status: 'completed', finish_reason: 'length' },
    {
      type: 'turn_end',
      timestamp: ts,
      status: 'error',
      error: { code: 'refused', message: 'refused' },
      exit_code: 1,
      finish_reason: 'content-filter',
    },
    { type: 'turn_end', timestamp: ts, status: 'discarded', signal: 'SIGINT', exit_code: 130 },
    { type: 'turn_end', timestamp: ts, status: 'interrupted', signal: 'SIGTERM', exit_code: 143 },
    {
      type: 'turn_end',
      timestamp: ts,
      status: 'error',
      error: { code: 'provider_error', message: 'HTTP 500' },
      exit_code: 1,
    },
  ],
  config_delta: [{ type: 'config_delta', timestamp: ts, delta: { assistant: { model: 'openai/gpt-4.1-mini' } } }],
  usage: [
    {
      type: 'usage',
      timestamp: ts,
      model: 'anthropic/claude-sonnet-4-5',
      purpose: 'step',
      usage: {
        input_tokens: 1200,
        output_tokens: 30,
        reasoning_tokens: null,
        cached_input_tokens: 1100,
        cache_write_tokens: 90,
        total_tokens: 1230,
      },
    },
    {
      type: 'usage',
      timestamp: ts,
      model: 'ollama/qwen3',
      purpose: 'compaction',
      usage: {
        input_tokens: 9,
        output_tokens: null,
        reasoning_tokens: null,
        cached_input_tokens: null,
        cache_write_tokens: null,
        total_tokens: null,
      },
    },
  ],
  compaction: [
    {
      type: 'compaction',
      timestamp: ts,
      summary: 'The user asked for a review; files a and b were read.',
      replaces: [0, 41],
      reason: 'threshold',
    },
    { type: 'compaction', timestamp: ts, summary: '', replaces: [0, 3], reason: 'manual' },
  ],
  checkpoint: [
    {
      type: 'checkpoint',
      timestamp: ts,
      when: 'before',
      root: '/home/me/project',
      commit: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    },
    {
      type: 'checkpoint',
      timestamp: ts,
      when: 'after',
      turn: 2,
      root: '/home/me/project',
      commit: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',
      changed: 2,
      files: ['src/a.ts', 'run.sh'],
      not_covered: [
        { path: 'data/huge.bin', reason: 'size' },
        { path: 'vendor/lib', reason: 'repository' },
      ],
    },
  ],
  undo: [
    {
      type: 'undo',
      timestamp: ts,
      root: '/home/me/project',
      undone: ['turn 2', 'turn 3'],
      before: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',
      after: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      files: ['src/a.ts'],
      forced: ['src/a.ts'],
    },
  ],
  system_prompt: [
    { type: 'system_prompt', timestamp: ts, text: 'You are jp.', files: [] },
    {
      type: 'system_prompt',
      timestamp: ts,
      text: 'You are jp.\n\n## AGENTS.md\n\nRun npm test.',
      files: [{ path: 'AGENTS.md', bytes: 40000, included: 32768 }],
    },
  ],
};

const invalidEvents: [string, unknown][] = [
  ['not an object', 'turn_start'],
  ['unknown event type', { type: 'chat_started', timestamp: ts }],
  ['missing type', { timestamp: ts }],
  ['missing timestamp', { type: 'turn_start' }],
  ['timestamp not a date-time', { type: 'turn_start', timestamp: 'yesterday' }],
  ['chat_request without content', { type: 'chat_request', timestamp: ts }],
  ['chat_response with neither message nor reasoning', { type: 'chat_response', timestamp: ts }],
  [
    'chat_response with both message and reasoning',
    { type: 'chat_response', timestamp: ts, message: 'a', reasoning: 'b' },
  ],
  ['tool_call_request without arguments', { type: 'tool_call_request', timestamp: ts, id: 'c', name: 'n' }],
  ['tool_call_start without id', { type: 'tool_call_start', timestamp: ts }],
  [
    'tool_call_response without outcome',
    { type: 'tool_call_response', timestamp: ts, id: 'c', content: '', is_error: false },
  ],
  [
    'tool_call_response with unknown outcome',
    { type: 'tool_call_response', timestamp: ts, id: 'c', content: '', is_error: false, outcome: 'maybe' },
  ],
  [
    'inquiry_request with unknown kind',
    { type: 'inquiry_request', timestamp: ts, id: 'i', tool_call_id: 'c', inquiry: { kind: 'ask', tool: 't' } },
  ],
  [
    'deliver inquiry without result',
    {
      type: 'inquiry_request',
      timestamp: ts,
      id: 'i',
      tool_call_id: 'c',
      inquiry: { kind: 'deliver_tool_result', tool: 't' },
    },
  ],
  [
    'question without exclusive',
    {
      type: 'inquiry_request',
      timestamp: ts,
      id: 'i',
      tool_call_id: 'c',
      inquiry: { kind: 'tool_question', tool: 't', question: { id: 'q', text: 'q?', answer_type: 'text' } },
    },
  ],
  ['inquiry_response without answer', { type: 'inquiry_response', timestamp: ts, id: 'i', by: 'user' }],
  ['inquiry_response by nobody', { type: 'inquiry_response', timestamp: ts, id: 'i', answer: 'run', by: 'nobody' }],
  [
    'inquiry_response with unknown action',
    { type: 'inquiry_response', timestamp: ts, id: 'i', answer: 'run', by: 'policy', action: 'Approve' },
  ],
  ['turn_end with unknown status', { type: 'turn_end', timestamp: ts, status: 'done' }],
  [
    'chat_response marked incomplete with false',
    { type: 'chat_response', timestamp: ts, message: 'a', incomplete: false },
  ],
  [
    'turn_end with an unknown finish reason',
    { type: 'turn_end', timestamp: ts, status: 'completed', finish_reason: 'done' },
  ],
  ['turn_end with unknown signal', { type: 'turn_end', timestamp: ts, status: 'interrupted', signal: 'SIGKILL' }],
  ['turn_end error without message', { type: 'turn_end', timestamp: ts, status: 'error', error: { code: 'x' } }],
  ['config_delta without delta', { type: 'config_delta', timestamp: ts }],
  ['usage without its counts', { type: 'usage', timestamp: ts, model: 'm', purpose: 'step' }],
  [
    'compaction with one position',
    { type: 'compaction', timestamp: ts, summary: 's', replaces: [3], reason: 'manual' },
  ],
  [
    'compaction with a negative position',
    { type: 'compaction', timestamp: ts, summary: 's', replaces: [-1, 3], reason: 'manual' },
  ],
  [
    'checkpoint with turn 0',
    {
      type: 'checkpoint',
      timestamp: ts,
      when: 'before',
      turn: 0,
      root: '/w',
      commit: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    },
  ],
  ['checkpoint without its commit', { type: 'checkpoint', timestamp: ts, when: 'before', root: '/w' }],
  [
    'checkpoint at an unknown moment',
    {
      type: 'checkpoint',
      timestamp: ts,
      when: 'during',
      root: '/w',
      commit: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    },
  ],
  [
    'checkpoint with an unknown not-covered reason',
    {
      type: 'checkpoint',
      timestamp: ts,
      when: 'after',
      root: '/w',
      commit: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      not_covered: [{ path: 'x', reason: 'big' }],
    },
  ],
  [
    'undo without files',
    {
      type: 'undo',
      timestamp: ts,
      root: '/w',
      undone: [],
      before: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      after: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',
    },
  ],
  ['system_prompt without text', { type: 'system_prompt', timestamp: ts, files: [] }],
  [
    'system_prompt file without its size',
    { type: 'system_prompt', timestamp: ts, text: '', files: [{ path: 'AGENTS.md', included: 1 }] },
  ],
];

function result(status: RunStatus, exitCode: number, overrides: Json = {}): Json {
  const failed = ['error', 'usage', 'locked', 'retryable', 'interrupted'].includes(status);
  return {
    v: 1,
    type: 'result',
    ts,
    conversation_id: cid,
    log_file: `.jp/conversations/${cid}/events.ndjson`,
    status,
    exit_code: exitCode,
    query: 'list the files',
    answer: status === 'success' ? 'Here they are.' : '',
    sources: status === 'success' ? [{ url: 'https://example.com/a', title: 'A' }] : [],
    tools: [{ id: 'call_1', name: 'run_command', arguments: { command: 'ls' }, result: 'a\nb\n', status: 'ok' }],
    permission_denials:
      status === 'denied'
        ? [
            {
              tool_name: 'run_command',
              tool_call_id: 'call_2',
              kind: 'run_tool',
              tool_input: { command: 'rm x' },
              reason: 'detached = "deny"',
            },
          ]
        : [],
    unanswered:
      status === 'denied'
        ? [
            {
              tool_name: 'write_file',
              tool_call_id: 'call_3',
              question_id: 'overwrite',
              question: 'Overwrite?',
              reason: 'no user',
            },
          ]
        : [],
    hook_answers:
      status === 'success'
        ? [
            {
              tool_name: 'run_command',
              tool_call_id: 'call_1',
              kind: 'run_tool',
              answer: 'run',
              hook: '~/bin/approve.sh',
              reason: 'run with the approval of the hook `~/bin/approve.sh`',
            },
          ]
        : [],
    pending_inquiry:
      status === 'deferred'
        ? { id: 'inq_1', tool_call_id: 'call_4', tool: 'run_command', kind: 'run_tool', inquiry: runInquiry }
        : null,
    metadata: {
      model: 'openai/gpt-4.1-mini',
      iterations: 2,
      duration_ms: 1534,
      usage: {
        input_tokens: 120,
        output_tokens: 30,
        reasoning_tokens: null,
        cached_input_tokens: 100,
        cache_write_tokens: null,
        total_tokens: 150,
      },
      cost_usd: status === 'success' ? 0.000_104 : null,
      finish_reason: failed ? null : 'stop',
      response_model: failed ? null : 'gpt-4.1-mini-2025-04-14',
    },
    warnings: [],
    error: failed
      ? {
          code: `${status}_code`,
          message: `the run ended with ${status}`,
          ...(status === 'usage' ? { hint: 'Run jp --help.' } : {}),
        }
      : null,
    ...overrides,
  };
}

const statuses: RunStatus[] = ['success', 'error', 'usage', 'denied', 'deferred', 'locked', 'retryable', 'interrupted'];
const expectedExitCodes: Record<RunStatus, number[]> = {
  success: [0],
  error: [1],
  usage: [2],
  denied: [3],
  deferred: [4],
  locked: [5],
  retryable: [6],
  interrupted: [130, 143],
};

function line(type: string, fields: Json, conversationId: string | null = cid): Json {
  return { v: 1, type, ts, conversation_id: conversationId, ...fields };
}

const stdoutLines: Record<string, Json[]> = {
  assistant_text: [line('assistant_text', { text: 'Here they are.' })],
  assistant_reasoning: [line('assistant_reasoning', { text: 'Thinking.' })],
  user_message: [line('user_message', { text: 'list the files' }), line('user_message', { text: '' })],
  compaction: [
    line('compaction', {
      summary: 'The user asked for a review; a and b were read.',
      replaces: [0, 41],
      reason: 'threshold',
    }),
  ],
  tool_call: [line('tool_call', { id: 'call_1', name: 'run_command', arguments: { command: 'ls' } })],
  tool_result: [
    line('tool_result', { id: 'call_1', name: 'run_command', outcome: 'ok', is_error: false, content: 'a\nb\n' }),
    line('tool_result', { id: 'call_9', name: null, outcome: 'unknown', is_error: true, content: 'Outcome unknown.' }),
  ],
  inquiry_request: [line('inquiry_request', { id: 'inq_1', tool_call_id: 'call_1', inquiry: questionInquiry })],
  inquiry_response: [
    line('inquiry_response', { id: 'inq_1', answer: 'run', by: 'user', action: null, reason: null }),
    line('inquiry_response', {
      id: 'inq_1',
      answer: 'skip',
      by: 'policy',
      action: 'Fail',
      reason: 'detached = "deny"',
    }),
  ],
  detached: [line('detached', { pid: 4242 })],
  result: [
    result('success', 0),
    result('success', 0, {
      warnings: [{ code: 'output_limit', message: "the answer was cut at the model's output limit" }],
    }),
    result('denied', 3, {
      warnings: [
        {
          code: 'workspace_untrusted',
          message: 'ignored conversation.tools.run_command.detached in .jp/config.toml',
          keys: ['conversation.tools.run_command.detached'],
        },
      ],
    }),
    result('usage', 2, {
      conversation_id: null,
      log_file: null,
      metadata: {
        model: null,
        iterations: 0,
        duration_ms: 0,
        usage: null,
        cost_usd: null,
        finish_reason: null,
        response_model: null,
      },
    }),
  ],
  initialized: [line('initialized', { path: '/home/me/project/.jp' }, null)],
  forked: [line('forked', { forked_from: 'jp-c1740832496789000' })],
  file_changes: [
    line('file_changes', {
      changes: ['turn 2'],
      files: [
        {
          path: 'a.txt',
          root: '/w',
          change: 'modified',
          binary: false,
          added_lines: 1,
          removed_lines: 1,
          mode: '100755',
        },
        {
          path: 'logo.png',
          root: '/w',
          change: 'added',
          binary: true,
          added_lines: null,
          removed_lines: null,
          mode: '100644',
        },
        { path: 'old.txt', root: '/w', change: 'deleted', binary: false, added_lines: 0, removed_lines: 1, mode: null },
      ],
      not_covered: [{ path: 'huge.bin', reason: 'size', root: '/w' }],
    }),
  ],
  undone: [
    line('undone', {
      undone: ['turn 2'],
      files: [{ path: 'a.txt', root: '/w', change: 'modified' }],
      forced: [],
      not_covered: [],
    }),
  ],
  config: [
    line(
      'config',
      {
        keys: {
          'assistant.model': { value: 'openai/gpt-4.1-mini', source: '/home/me/project/.jp/config.toml' },
          'assistant.max_turns': { value: 25, source: 'built-in default' },
          'conversation.tools.run_command.enabled': {
            value: true,
            source: '--cfg conversation.tools.run_command.enabled=true',
          },
        },
      },
      null,
    ),
    line(
      'config',
      {
        keys: { 'assistant.model': { value: 'openai/gpt-4.1-mini', source: 'built-in default' } },
        ignored: {
          'providers.openai.base_url': {
            value: 'http://127.0.0.1:9/v1',
            source: '/home/me/project/.jp/config.toml:2',
            reason: 'decides where your requests go',
          },
        },
      },
      null,
    ),
  ],
  effective_config: [
    line(
      'effective_config',
      {
        tool: 'run_command',
        run: { value: 'ask', key: 'built-in', layer: 'built-in default' },
        result: {
          value: 'unattended',
          key: 'conversation.tools.defaults.result',
          layer: '/home/me/.config/jp/config.toml',
        },
        detached: {
          run: {
            policy: 'deny',
            key: 'built-in',
            layer: 'built-in default for a run with no client',
            with_detach: 'defer',
          },
          deliver: {
            policy: 'auto',
            key: 'conversation.tools.run_command.detached.deliver',
            layer: 'JP_CFG',
            with_detach: 'auto',
          },
          tool: {
            policy: 'defaults',
            key: 'conversation.tools.defaults.detached',
            layer: '.jp/config.toml',
            with_detach: 'defaults',
          },
          escalate: {
            policy: 'deny',
            key: 'built-in',
            layer: 'built-in default for a run with no client',
            with_detach: 'defer',
          },
        },
        sandbox: {
          description: 'workspace-write, no network',
          mode: { value: 'workspace-write', layer: 'built-in default' },
          network: { value: false, layer: 'built-in default' },
          writable_roots: { value: [], layer: 'built-in default' },
          hide_home: { value: false, layer: 'built-in default' },
          readable_roots: { value: [], layer: 'built-in default' },
          hidden_paths: { value: ['~/.config/gh'], builtin: ['~/.ssh'], layer: '/home/me/.config/jp/config.toml' },
        },
      },
      null,
    ),
  ],
  sandbox_check: [
    line(
      'sandbox_check',
      {
        usable: true,
        engine: 'bubblewrap',
        program: '/usr/bin/bwrap',
        version: '0.8.0',
        namespaces: { user: true, pid: true, network: true },
        network_isolation: true,
        mode: 'workspace-write',
        mode_source: 'built-in default',
        network: false,
      },
      null,
    ),
    line(
      'sandbox_check',
      {
        usable: false,
        engine: 'bubblewrap',
        program: null,
        version: null,
        namespaces: null,
        network_isolation: false,
        mode: 'workspace-write',
        mode_source: 'built-in default',
        network: false,
        cause: 'bubblewrap (bwrap) is not on PATH',
        fix: 'install it',
      },
      null,
    ),
  ],
  approvals: [
    line(
      'approvals',
      {
        approvals: [
          {
            number: 1,
            rule: { kind: 'prefix', tool: 'run_command', words: ['npm', 'test'] },
            description: 'run_command: commands that start with npm test',
            approved_at: ts,
          },
        ],
      },
      null,
    ),
    line('approvals', { approvals: [], revoked: true }, null),
  ],
  trust: [
    line(
      'trust',
      {
        workspace: '/home/me/project',
        config_file: '/home/me/project/.jp/config.toml',
        config_sha256: 'a'.repeat(64),
        state: 'no decision',
        decided_at: null,
        needs_trust: [{ key: 'conversation.hooks', value: { on_waiting: 'notify-send jp' }, reason: 'runs a command' }],
      },
      null,
    ),
    line(
      'trust',
      {
        workspace: '/w',
        config_file: '/w/.jp/config.toml',
        config_sha256: null,
        state: 'no config',
        decided_at: null,
        needs_trust: [],
      },
      null,
    ),
  ],
  wait_result: [
    line('wait_result', { exit_code: 0, status: 'success' }),
    line('wait_result', { exit_code: 4, status: 'waiting for input (run_command)' }),
  ],
  mcp_servers: [
    line(
      'mcp_servers',
      {
        servers: [
          {
            name: 'everything',
            transport: 'stdio',
            state: 'ready',
            problem: null,
            tools: [{ name: 'mcp__everything__echo', mcp_name: 'echo', description: 'Echoes' }],
          },
          { name: 'remote', transport: 'http', state: 'failed', problem: 'fetch failed', tools: [] },
        ],
      },
      null,
    ),
  ],
};

const stderrLines: Record<string, Json[]> = {
  status: [line('status', { message: 'jp: test provider: replaying script.json' }, null)],
  warning: [line('warning', { message: 'rate limited; retrying in 2.0 s (attempt 1 of 4)' })],
  error: [
    line('error', { code: 'config_invalid', message: 'bad key', hint: 'See jp config show.', exit_code: 2 }, null),
    line('error', { code: 'conversation_locked', message: 'held by pid 1', exit_code: 5 }),
  ],
};

const invalidLines: [string, unknown][] = [
  ['wrong v', { ...stdoutLines.assistant_text![0]!, v: 2 }],
  ['missing v', (({ v: _v, ...rest }) => rest)(stdoutLines.assistant_text![0]!)],
  ['missing ts', (({ ts: _ts, ...rest }) => rest)(stdoutLines.assistant_text![0]!)],
  ['ts not a date-time', { ...stdoutLines.assistant_text![0]!, ts: 'now' }],
  ['missing conversation_id', (({ conversation_id: _c, ...rest }) => rest)(stdoutLines.assistant_text![0]!)],
  ['conversation_id a number', { ...stdoutLines.assistant_text![0]!, conversation_id: 7 }],
  ['unknown line type', line('assistant_delta', { text: 'x' })],
  ['assistant_text without text', line('assistant_text', {})],
  ['empty assistant_text', line('assistant_text', { text: '' })],
  ['tool_result without outcome', line('tool_result', { id: 'c', name: 'n', is_error: false, content: '' })],
  ['inquiry_response without action', line('inquiry_response', { id: 'i', answer: 'run', by: 'user', reason: null })],
  ['detached without pid', line('detached', {})],
  ['error line without exit_code', line('error', { code: 'x', message: 'y' })],
  ['config key without source', line('config', { keys: { 'a.b': { value: 1 } } })],
  [
    'effective_config with unknown run mode',
    line('effective_config', {
      tool: 't',
      run: { value: 'maybe', key: 'k', layer: 'l' },
      result: { value: 'ask', key: 'k', layer: 'l' },
      detached: stdoutLines.effective_config![0]!.detached,
    }),
  ],
  ['wait_result without exit_code', line('wait_result', { status: 'success' })],
  [
    'trust with an unknown state',
    line(
      'trust',
      {
        workspace: '/w',
        config_file: '/w/.jp/config.toml',
        config_sha256: null,
        state: 'maybe',
        decided_at: null,
        needs_trust: [],
      },
      null,
    ),
  ],
  [
    'mcp_servers with an unknown state',
    line('mcp_servers', { servers: [{ name: 'x', transport: 'stdio', state: 'starting', problem: null, tools: [] }] }),
  ],
  ['result line with a wrong exit_code', result('success', 1)],
  ['result line with wrong v', result('success', 0, { v: 2 })],
];

const listed = [
  {
    id: 'jp-c1740832496789000',
    title: 'files',
    created_at: ts,
    updated_at: ts,
    status: 'idle',
    state: 'idle',
    pid: null,
    tool: null,
    resume_point: null,
    active: false,
    usage: null,
    changed_turns: [],
  },
  {
    id: 'jp-c1740832496789001',
    title: null,
    created_at: ts,
    updated_at: ts,
    status: 'running (pid 42)',
    state: 'running',
    pid: 42,
    tool: null,
    resume_point: null,
    active: true,
    changed_turns: [1, 3],
    usage: {
      input_tokens: 5000,
      output_tokens: 70,
      reasoning_tokens: null,
      cached_input_tokens: 4200,
      cache_write_tokens: 500,
      total_tokens: 5070,
    },
  },
  {
    id: 'jp-c1740832496789002',
    title: null,
    created_at: ts,
    updated_at: ts,
    status: 'waiting-for-input (run_command)',
    state: 'waiting-for-input',
    pid: null,
    tool: 'run_command',
    resume_point: null,
    active: false,
    usage: null,
    changed_turns: [],
  },
  {
    id: 'jp-c1740832496789003',
    title: null,
    created_at: ts,
    updated_at: ts,
    status: 'interrupted (awaiting LLM response)',
    state: 'interrupted',
    pid: null,
    tool: null,
    resume_point: 'awaiting LLM response',
    active: false,
    usage: null,
    changed_turns: [],
  },
];

const capability = 'd2hhdCBhIHJ1bidzIGNhcGFiaWxpdHkgbG9va3MgbGlrZQ';

const clientMessages: Json[] = [
  { type: 'hello', version: 2, capability, can_prompt: true },
  { type: 'hello', version: 2, capability, can_prompt: false, read_only: true },
  // `jp conversation kill`'s hello.
  { type: 'hello', version: 2, capability, can_prompt: false, kill: true },
  // `jp acp`'s hello, for an editor that reads and writes files.
  { type: 'hello', version: 2, capability, can_prompt: true, owner: true, editor_files: { read: true, write: false } },
  { type: 'inquiry_response', id: 'inq_1', answer: 'run_always' },
  { type: 'inquiry_declined', id: 'inq_2' },
  { type: 'file_response', id: 'file-1', content: 'unsaved text' },
  { type: 'file_response', id: 'file-2', error: 'permission denied' },
  { type: 'file_response', id: 'file-3' },
  { type: 'inquiry_response', id: 'inq_3', answer: null },
  { type: 'signal', kind: 'interrupt' },
  { type: 'interrupt_action', action: 'stop' },
  { type: 'interrupt_action', action: 'reply', reply: 'use ls -1 instead' },
  { type: 'disconnect' },
  { type: 'disconnect', detach: true },
  { type: 'shutdown' },
  { type: 'shutdown', reason: 'output_closed' },
];

const serverMessages: Json[] = [
  {
    type: 'hello',
    version: 2,
    conversation_id: cid,
    pid: 4242,
    event_count: 12,
    partial: { message: 'Here', reasoning: '' },
    prompting: true,
  },
  { type: 'event', seq: 12, event: validEvents.tool_call_request![0]! },
  { type: 'delta', event: { type: 'chat_response', timestamp: ts, message: 'Here' } },
  { type: 'inquiry', id: 'inq_1', inquiry: runInquiry },
  { type: 'inquiry_resolved', id: 'inq_1', by: 'policy' },
  { type: 'file_request', id: 'file-1', operation: 'read', path: '/w/notes.txt' },
  { type: 'file_request', id: 'file-2', operation: 'write', path: '/w/notes.txt', content: 'new text' },
  { type: 'interrupt_menu', options: ['stop', 'abort', 'continue', 'reply', 'detach'] },
  { type: 'notice', level: 'warning', message: 'retrying' },
  { type: 'tool_output', id: 'call_1', stream: 'stdout', text: 'line 1\nline 2\n' },
  { type: 'tool_output', id: 'call_1', stream: 'stderr', text: 'bye\n', omitted: 3 },
  { type: 'activity', text: 'compacting the conversation' },
  { type: 'turn_complete', result: result('deferred', 4) },
  { type: 'process_exiting', reason: 'the run ended: deferred' },
  { type: 'error', code: 'version_mismatch', message: 'protocol version mismatch' },
];

// ---- tests ---------------------------------------------------------------------------------------

describe('schema files', () => {
  it('has the five schemas, each with a draft 2020-12 $schema and an $id named after its file', () => {
    assert.deepEqual(schemaFiles, [
      'conversation-list.schema.json',
      'event.schema.json',
      'output-line.schema.json',
      'protocol-message.schema.json',
      'result.schema.json',
    ]);
    for (const { name, schema } of schemas) {
      assert.equal(schema.$schema, 'https://json-schema.org/draft/2020-12/schema', name);
      assert.equal(schema.$id, `${base}${name}`, name);
    }
  });

  it('compiles every schema and every $defs entry (strict mode; all $refs resolve)', () => {
    for (const { name, schema } of schemas) {
      assert.ok(ajv.validateSchema(schema), `${name}: ${ajv.errorsText(ajv.errors)}`);
      assert.equal(typeof ajv.getSchema(`${base}${name}`), 'function', name);
      for (const definition of Object.keys((schema.$defs as Json | undefined) ?? {})) {
        assert.equal(
          typeof ajv.getSchema(`${base}${name}#/$defs/${definition}`),
          'function',
          `${name}#/$defs/${definition}`,
        );
      }
    }
  });

  it('references other files only by their $id, and every reference names an existing definition', () => {
    const ids = new Map(schemas.map(({ name, schema }) => [name, schema]));
    const walk = (node: unknown, from: string): void => {
      if (Array.isArray(node)) {
        for (const item of node) walk(item, from);
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref') {
          assert.equal(typeof value, 'string');
          const [file, pointer = ''] = (value as string).split('#');
          const target = file === '' ? ids.get(from) : ids.get(file!);
          assert.ok(target, `${from}: $ref ${String(value)} names no schema file`);
          let cursor: unknown = target;
          for (const part of pointer.split('/').filter(Boolean)) cursor = (cursor as Json)[part];
          assert.ok(cursor !== undefined, `${from}: $ref ${String(value)} points nowhere`);
        } else walk(value, from);
      }
    };
    for (const { name, schema } of schemas) walk(schema, name);
  });

  it('a fresh Ajv fails to compile when a referenced schema is missing', () => {
    const lonely = createAjv({ withSchemas: false });
    const result = schemas.find(({ name }) => name === 'result.schema.json')!.schema;
    assert.throws(() => lonely.compile(result), /can't resolve reference|resolve/i);
  });
});

describe('event.schema.json', () => {
  it('lists exactly the event types of the code', () => {
    const schema = schemas.find(({ name }) => name === 'event.schema.json')!.schema;
    const listedTypes = ((schema.$defs as Json).event_type as { enum: string[] }).enum;
    assert.deepEqual([...listedTypes].sort(), [...eventTypes].sort());
    assert.deepEqual(Object.keys(validEvents).sort(), [...eventTypes].sort());
  });

  for (const [type, examples] of Object.entries(validEvents)) {
    it(`accepts ${type} events`, () => {
      for (const example of examples) {
        assertValid(EVENT, example);
        assert.ok(isConversationEvent(example), `the reader would skip ${JSON.stringify(example)}`);
      }
    });
  }

  it('accepts unknown extra properties (forward compatibility)', () => {
    assertValid(EVENT, { type: 'turn_start', timestamp: ts, new_field: [1, 2] });
    assertValid(EVENT, {
      type: 'tool_call_response',
      timestamp: ts,
      id: 'c',
      content: '',
      is_error: false,
      outcome: 'skipped',
      duration_ms: 5,
    });
  });

  for (const [label, example] of invalidEvents) {
    it(`rejects: ${label}`, () => assertInvalid(EVENT, example, label));
  }
});

describe('result.schema.json', () => {
  for (const status of statuses) {
    for (const code of expectedExitCodes[status]) {
      it(`accepts a ${status} result with exit code ${code}`, () => {
        assert.ok(
          code === exitCodeOf(status) || code === exitCodeOf(status, 'SIGTERM'),
          'the table agrees with exitCodeOf',
        );
        assertValid(RESULT, result(status, code));
      });
    }
  }

  it('rejects every status / exit_code pair that does not agree', () => {
    const codes = [0, 1, 2, 3, 4, 5, 6, 7, 127, 130, 137, 143];
    for (const status of statuses) {
      for (const code of codes) {
        if (expectedExitCodes[status].includes(code)) continue;
        assertInvalid(RESULT, result(status, code), `${status} with exit code ${code}`);
      }
    }
  });

  const broken: [string, Json][] = [
    ['unknown status', result('success', 0, { status: 'ok' })],
    ['wrong v', result('success', 0, { v: 2 })],
    ['wrong type', result('success', 0, { type: 'final' })],
    ['missing metadata', (({ metadata: _m, ...rest }) => rest)(result('success', 0))],
    ['missing error', (({ error: _e, ...rest }) => rest)(result('success', 0))],
    ['error without message', result('error', 1, { error: { code: 'x' } })],
    ['an error status with a null error', result('error', 1, { error: null })],
    ['an interrupted status with a null error', result('interrupted', 130, { error: null })],
    [
      'a pending inquiry on a success',
      result('success', 0, { pending_inquiry: result('deferred', 4).pending_inquiry }),
    ],
    [
      'a tool with an unknown status',
      result('success', 0, { tools: [{ id: 'c', name: 'n', arguments: {}, result: null, status: 'running' }] }),
    ],
    [
      'a denial of a question kind',
      result('denied', 3, {
        permission_denials: [
          { tool_name: 't', tool_call_id: 'c', kind: 'tool_question', tool_input: null, reason: 'r' },
        ],
      }),
    ],
    [
      'usage without total_tokens',
      result('success', 0, {
        metadata: { model: null, iterations: 0, duration_ms: 0, usage: { input_tokens: 0, output_tokens: 0 } },
      }),
    ],
    ['a non-integer exit code', result('success', 0.5 as number)],
  ];
  for (const [label, example] of broken) {
    it(`rejects: ${label}`, () => assertInvalid(RESULT, example, label));
  }

  it('accepts the results the code builds', () => {
    const startedAt = Date.now() - 10;
    const errors = [
      new JpError('usage', 'flags_conflict', '--json conflicts with --format text', { hint: 'Use one of them.' }),
      new JpError('locked', 'conversation_locked', 'held by pid 1'),
      new JpError('retryable', 'rate_limited', 'rate limited'),
      new JpError('error', 'server_lost', 'the query server stopped'),
    ];
    for (const error of errors) {
      assertValid(
        RESULT,
        buildErrorResult({ secrets: new Secrets(), conversationId: null, query: '', error, model: null, startedAt }),
        `error result ${error.status}`,
      );
    }
    const events: ConversationEvent[] = [
      { type: 'turn_start', timestamp: ts },
      { type: 'chat_request', timestamp: ts, content: 'go' },
      { type: 'chat_response', timestamp: ts, message: 'Running it.' },
      { type: 'tool_call_request', timestamp: ts, id: 'call_1', name: 'run_command', arguments: { command: 'ls' } },
      {
        type: 'inquiry_request',
        timestamp: ts,
        id: 'inq_1',
        tool_call_id: 'call_1',
        inquiry: { kind: 'run_tool', tool: 'run_command', arguments: { command: 'ls' } },
      },
    ];
    const usage = {
      input_tokens: 3,
      output_tokens: 4,
      reasoning_tokens: null,
      cached_input_tokens: null,
      cache_write_tokens: null,
      total_tokens: 7,
    };
    const outcomes: TurnOutcome[] = [
      { status: 'deferred', iterations: 1, usage, turnStart: 0 },
      { status: 'interrupted', iterations: 1, usage, turnStart: 0, stop: new StopRequest('SIGTERM') },
      { status: 'interrupted', iterations: 1, usage, turnStart: 0, stop: new StopRequest('SIGINT') },
      {
        status: 'error',
        iterations: 1,
        usage,
        turnStart: 0,
        error: new JpError('retryable', 'overloaded', 'overloaded'),
      },
    ];
    for (const outcome of outcomes) {
      const built = buildTurnResult({
        secrets: new Secrets(),
        conversationId: cid,
        query: 'go',
        outcome,
        events,
        model: 'test/script',
        startedAt,
      });
      assertValid(RESULT, built, `turn result ${outcome.status}`);
    }
    const answered: ConversationEvent[] = [
      ...events,
      {
        type: 'inquiry_response',
        timestamp: ts,
        id: 'inq_1',
        answer: 'skip',
        by: 'policy',
        action: 'Fail',
        reason: 'no user',
      },
      {
        type: 'tool_call_response',
        timestamp: ts,
        id: 'call_1',
        content: 'Tool call denied: no user.',
        is_error: true,
        outcome: 'denied',
      },
      { type: 'chat_response', timestamp: ts, message: 'I could not run it.' },
      { type: 'turn_end', timestamp: ts, status: 'completed' },
    ];
    const denied = buildTurnResult({
      secrets: new Secrets(),
      conversationId: cid,
      query: 'go',
      outcome: { status: 'completed', iterations: 2, usage, turnStart: 0 },
      events: answered,
      model: 'test/script',
      startedAt,
    });
    assert.equal(denied.status, 'denied');
    assertValid(RESULT, denied, 'turn result denied');
  });
});

describe('output-line.schema.json', () => {
  const all = { ...stdoutLines, ...stderrLines };

  it('covers every line type', () => {
    const schema = schemas.find(({ name }) => name === 'output-line.schema.json')!.schema;
    const types = ((schema.$defs as Json).line_type as { enum: string[] }).enum;
    assert.deepEqual([...types].sort(), Object.keys(all).sort());
  });

  for (const [type, examples] of Object.entries(stdoutLines)) {
    it(`accepts ${type} lines, on stdout only`, () => {
      for (const example of examples) {
        assertValid(LINE, example);
        assertValid(`${LINE}#/$defs/stdout_line`, example);
        assertInvalid(`${LINE}#/$defs/stderr_line`, example);
      }
    });
  }

  for (const [type, examples] of Object.entries(stderrLines)) {
    it(`accepts ${type} lines, on stderr only`, () => {
      for (const example of examples) {
        assertValid(LINE, example);
        assertValid(`${LINE}#/$defs/stderr_line`, example);
        assertInvalid(`${LINE}#/$defs/stdout_line`, example);
      }
    });
  }

  for (const [label, example] of invalidLines) {
    it(`rejects: ${label}`, () => assertInvalid(LINE, example, label));
  }

  it('accepts every line the JSON renderer writes', async () => {
    const streams = { stdout: new PassThrough(), stderr: new PassThrough() };
    const written = { stdout: '', stderr: '' };
    streams.stdout.on('data', (chunk: Buffer) => (written.stdout += chunk.toString('utf8')));
    streams.stderr.on('data', (chunk: Buffer) => (written.stderr += chunk.toString('utf8')));
    const renderer = new JsonRenderer(
      new TerminalOutput({
        stdout: new SafeWriter(streams.stdout as unknown as NodeJS.WriteStream),
        stderr: new SafeWriter(streams.stderr as unknown as NodeJS.WriteStream),
        statusLine: false,
        color: false,
      }),
      cid,
    );
    renderer.status('starting');
    renderer.notice('info', 'info');
    renderer.notice('warning', 'retrying');
    renderer.delta('reasoning', 'Thinking');
    renderer.delta('message', 'Here');
    for (const examples of Object.values(validEvents))
      for (const event of examples) renderer.event(event as ConversationEvent, true);
    renderer.event(
      { type: 'tool_call_response', timestamp: ts, id: 'never_seen', content: '', is_error: false, outcome: 'ok' },
      false,
    );
    renderer.detached(cid, 4242);
    renderer.finish(
      buildErrorResult({
        secrets: new Secrets(),
        conversationId: cid,
        query: 'q',
        error: new JpError('locked', 'conversation_locked', 'held', { hint: 'wait' }),
        model: null,
        startedAt: Date.now(),
      }),
    );
    await renderer.flush();
    await new Promise((resolve) => setImmediate(resolve));

    const parse = (text: string): Json[] =>
      text
        .split('\n')
        .filter(Boolean)
        .map((entry) => JSON.parse(entry) as Json);
    const stdout = parse(written.stdout);
    const stderr = parse(written.stderr);
    assert.ok(stdout.length > 10 && stderr.length >= 4, `too few lines: ${written.stdout}\n${written.stderr}`);
    for (const entry of stdout) assertValid(`${LINE}#/$defs/stdout_line`, entry);
    for (const entry of stderr) assertValid(`${LINE}#/$defs/stderr_line`, entry);
    const seen = new Set([...stdout, ...stderr].map((entry) => entry.type as string));
    for (const type of [
      'assistant_text',
      'assistant_reasoning',
      'user_message',
      'tool_call',
      'tool_result',
      'inquiry_request',
      'inquiry_response',
      'detached',
      'result',
      'status',
      'warning',
      'error',
    ]) {
      assert.ok(seen.has(type), `the renderer wrote no ${type} line`);
    }
    assert.equal(stdout[stdout.length - 1]!.type, 'result');
  });
});

describe('conversation-list.schema.json', () => {
  it('accepts a listing with every state, and an empty one', () => {
    assertValid(LIST, listed);
    assertValid(LIST, []);
  });

  const broken: [string, unknown][] = [
    ['an object instead of an array', listed[0]],
    ['running without a pid', [{ ...listed[1]!, pid: null }]],
    ['idle with a pid', [{ ...listed[0]!, pid: 7 }]],
    ['waiting-for-input without a tool', [{ ...listed[2]!, tool: null }]],
    ['interrupted without a resume point', [{ ...listed[3]!, resume_point: null }]],
    ['an unknown resume point', [{ ...listed[3]!, resume_point: 'somewhere' }]],
    ['an unknown state', [{ ...listed[0]!, state: 'sleeping' }]],
    ['missing active', [(({ active: _a, ...rest }) => rest)(listed[0]!)]],
    ['created_at not a date-time', [{ ...listed[0]!, created_at: '2025-13-01' }]],
  ];
  for (const [label, example] of broken) {
    it(`rejects: ${label}`, () => assertInvalid(LIST, example, label));
  }
});

describe('protocol-message.schema.json', () => {
  it('accepts every client message, which the server parser accepts too, whole (no field dropped)', () => {
    for (const message of clientMessages) {
      assertValid(PROTOCOL, message);
      assertValid(`${PROTOCOL}#/$defs/client_message`, message);
      const parsed = parseClientMessage(message);
      assert.ok(parsed.ok, `parseClientMessage refused ${JSON.stringify(message)}`);
      assert.deepEqual(parsed.message, message, 'the parser keeps every field of the message');
    }
  });

  it('accepts every server message', () => {
    for (const message of serverMessages) {
      assertValid(PROTOCOL, message);
      assertValid(`${PROTOCOL}#/$defs/server_message`, message);
    }
  });

  const brokenClient: [string, Json][] = [
    ['hello without can_prompt', { type: 'hello', version: 2, capability }],
    [
      'hello with a kill that is not a boolean',
      { type: 'hello', version: 2, capability, can_prompt: false, kill: 'yes' },
    ],
    ['hello with a capability that is not a string', { type: 'hello', version: 2, capability: 42, can_prompt: true }],
    ['an unknown interrupt action', { type: 'interrupt_action', action: 'pause' }],
    ['a signal of another kind', { type: 'signal', kind: 'terminate' }],
    ['an unknown shutdown reason', { type: 'shutdown', reason: 'bored' }],
    ['inquiry_response without id', { type: 'inquiry_response', answer: 'run' }],
    ['inquiry_declined without id', { type: 'inquiry_declined' }],
    ['a file_response whose content is not text', { type: 'file_response', id: 'file-1', content: 42 }],
    [
      'editor_files without write',
      { type: 'hello', version: 2, capability, can_prompt: true, editor_files: { read: true } },
    ],
  ];
  for (const [label, message] of brokenClient) {
    it(`rejects the client message: ${label}`, () => {
      assertInvalid(`${PROTOCOL}#/$defs/client_message`, message, label);
      assert.equal(parseClientMessage(message).ok, false, `parseClientMessage accepted ${label}`);
    });
  }

  const brokenServer: [string, Json][] = [
    ['an event that is not a conversation event', { type: 'event', seq: 0, event: { type: 'nope', timestamp: ts } }],
    ['an event without seq', { type: 'event', event: validEvents.turn_start![0]! }],
    ['a delta that is not a chat_response', { type: 'delta', event: validEvents.turn_start![0]! }],
    ['a turn_complete with a disagreeing result', { type: 'turn_complete', result: result('deferred', 0) }],
    ['a notice of an unknown level', { type: 'notice', level: 'debug', message: 'x' }],
    [
      'a hello without partial',
      { type: 'hello', version: 2, conversation_id: cid, pid: 1, event_count: 0, prompting: false },
    ],
    ['an error without code', { type: 'error', message: 'x' }],
    ['tool output of an unknown stream', { type: 'tool_output', id: 'call_1', stream: 'stdin', text: 'x' }],
    ['tool output without the call', { type: 'tool_output', stream: 'stdout', text: 'x' }],
    ['an activity without text', { type: 'activity' }],
  ];
  for (const [label, message] of brokenServer) {
    it(`rejects the server message: ${label}`, () =>
      assertInvalid(`${PROTOCOL}#/$defs/server_message`, message, label));
  }

  it('rejects unknown message types', () => {
    assertInvalid(PROTOCOL, { type: 'ping' });
    assertInvalid(PROTOCOL, { kind: 'hello' });
  });
});
