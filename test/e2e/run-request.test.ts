/**
 * The run request a client hands its query server (src/protocol/run-request.ts) is checked where
 * the server reads it: a malformed one is refused with an error naming the field, reported on the
 * readiness pipe as a client reads it, and the server starts nothing (attacker: the pipe's other end).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { parseRunRequest, type RunRequest } from '../../src/protocol/run-request.ts';
import { createSandbox, jpBinary, type Sandbox } from '../support/jp.ts';

function validRequest(sandbox: Sandbox): RunRequest {
  return {
    conversation_id: 'jp-c1700000000000000',
    workspace: { root: sandbox.workspace, is_default: false, tool_root: sandbox.workspace },
    cwd: sandbox.workspace,
    message: 'hello',
    resume: false,
    discard_turn: false,
    detached: true,
    config: {
      user_file: undefined,
      workspace_file: undefined,
      cfg_arguments: [],
      trusted_workspace_sha256: null,
      workspace_trust_state: 'no workspace config',
      flags: [{ label: '--model', path: ['assistant', 'model'], value: 'test/echo' }],
    },
    tools: { no_tools: true, enabled: [] },
    lock_token: null,
    log: { verbosity: 0, file: '-', format: 'text' },
    run_log: `${sandbox.root}/run.log`,
    query: 'hello',
    started_at: 1_700_000_000_000,
  };
}

interface Served {
  code: number | null;
  /** What the server reported on its readiness pipe. */
  ready: { ready: boolean; error?: { code: string; message: string; hint?: string; exit_code: number } };
  stderr: string;
}

/** Starts `jp __serve` as a client does, hands it `line` on the readiness pipe (fd 3), and reads its answer. */
function serve(sandbox: Sandbox, line: string): Promise<Served> {
  const child = spawn(process.execPath, [jpBinary, '__serve'], {
    cwd: sandbox.workspace,
    env: sandbox.env,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  const pipe = child.stdio[3] as Duplex;
  let readiness = '';
  let stderr = '';
  pipe.setEncoding('utf8');
  pipe.on('data', (chunk: string) => (readiness += chunk));
  pipe.on('error', () => {});
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  pipe.write(`${line}\n`);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      try {
        resolve({ code, ready: JSON.parse(readiness), stderr });
      } catch {
        reject(new Error(`no readiness message (exit ${code}): ${JSON.stringify(readiness)}; stderr: ${stderr}`));
      }
    });
  });
}

describe('the run request', () => {
  let sandbox: Sandbox;
  beforeEach(() => (sandbox = createSandbox()));
  afterEach(() => sandbox.cleanup());

  it('a request as the client makes it passes the check; one with a field of the wrong type does not, naming it', () => {
    assert.deepEqual(parseRunRequest(validRequest(sandbox)), { ok: true, request: validRequest(sandbox) });
    const wrong = { ...validRequest(sandbox), tools: { no_tools: 'yes', enabled: [] } };
    assert.deepEqual(parseRunRequest(wrong), {
      ok: false,
      message: 'the run request is invalid at tools.no_tools: expected boolean',
    });
  });

  const malformed: [string, (sandbox: Sandbox) => string, RegExp][] = [
    ['not JSON', () => '{"conversation_id": ', /^the run request is not valid JSON; /],
    ['an empty object', () => '{}', /^the run request is invalid at conversation_id: expected string; /],
    [
      'a list where the config arguments go',
      (sandbox) => {
        const request = validRequest(sandbox);
        return JSON.stringify({ ...request, config: { ...request.config, cfg_arguments: 'assistant.model=x' } });
      },
      /^the run request is invalid at config\.cfg_arguments: expected array; /,
    ],
    [
      'no log settings',
      (sandbox) => JSON.stringify({ ...validRequest(sandbox), log: undefined }),
      /^the run request is invalid at log: expected object; /,
    ],
  ];
  for (const [name, line, message] of malformed) {
    it(`${name} is refused with an error naming what is wrong; the server starts nothing (attacker)`, async () => {
      const served = await serve(sandbox, line(sandbox));
      assert.equal(served.ready.ready, false);
      assert.equal(served.ready.error?.code, 'invalid_run_request');
      assert.match(served.ready.error?.message ?? '', message);
      assert.match(served.ready.error?.message ?? '', /the query server did not start$/);
      assert.match(served.ready.error?.hint ?? '', /reinstall jp/);
      assert.equal(served.ready.error?.exit_code, 1);
      assert.equal(served.code, 1);
      assert.match(served.stderr, /^jp server: the run request is/);
      // No lock taken over, no socket, no registry entry: nothing under jp's user-local directory.
      assert.equal(existsSync(`${sandbox.dataHome}/jp`), false);
    });
  }
});
