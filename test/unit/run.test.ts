/**
 * One run in-process, in milliseconds (src/run/): the real setup (workspace, lock, log, config, the
 * test provider as the model), the real Run and its turn sequence, and a recording RunClients in
 * place of the server's client hub. What only the binary can show (sockets, signals, the terminal)
 * stays in test/e2e/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { ConversationEvent } from '../../src/conversation/events.ts';
import { createConversation, eventsFile } from '../../src/conversation/store.ts';
import type { ServerMessage } from '../../src/protocol/messages.ts';
import { Secrets } from '../../src/redact.ts';
import type { RunPayloads } from '../../src/report/payloads.ts';
import type { RunClients } from '../../src/run/clients.ts';
import type { RunRequest } from '../../src/protocol/run-request.ts';
import { Run } from '../../src/run/run.ts';
import { setUpRun } from '../../src/run/setup.ts';
import { silentLogger } from '../../src/output/logger.ts';
import { acquireLock } from '../../src/workspace/lock.ts';
import {
  describeWorkspace,
  prepareWorkspace,
  userSubdirectory,
  type Workspace,
} from '../../src/workspace/workspace.ts';

class RecordingClients implements RunClients {
  readonly sent: ServerMessage<RunPayloads>[] = [];
  firstClient(): Promise<void> {
    return Promise.resolve();
  }
  broadcast(message: ServerMessage<RunPayloads>): void {
    this.sent.push(message);
  }
  hasPromptingClient(): boolean {
    return false;
  }
  askClient(): Promise<{ answered: false }> {
    return Promise.resolve({ answered: false });
  }
  editorFiles(): undefined {
    return undefined;
  }
  editorTerminal(): undefined {
    return undefined;
  }
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function place(): { workspace: Workspace; environment: NodeJS.ProcessEnv; conversationId: string; lockFile: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'jp-run-'));
  roots.push(root);
  const directory = path.join(root, 'w');
  mkdirSync(path.join(directory, '.jp', 'conversations'), { recursive: true });
  const environment = {
    HOME: path.join(root, 'home'),
    XDG_DATA_HOME: path.join(root, 'd'),
    XDG_CONFIG_HOME: path.join(root, 'c'),
    PATH: process.env.PATH,
  };
  const workspace = describeWorkspace(directory, false, directory, environment);
  prepareWorkspace(workspace);
  writeFileSync(
    path.join(directory, 'script.json'),
    JSON.stringify({ steps: [{ parts: [{ text: 'the answer is sk-run-secret-0123456789' }] }] }),
  );
  const conversationId = createConversation(workspace.conversationsDirectory, { title: null }).id;
  return {
    workspace,
    environment,
    conversationId,
    lockFile: path.join(userSubdirectory(workspace, 'locks'), `${conversationId}.lock`),
  };
}

function requestFor(at: ReturnType<typeof place>, changes: Partial<RunRequest> = {}): RunRequest {
  return {
    conversation_id: at.conversationId,
    workspace: { root: at.workspace.root, is_default: false, tool_root: at.workspace.toolRoot },
    cwd: at.workspace.root,
    message: 'hello',
    resume: false,
    discard_turn: false,
    detached: false,
    config: {
      user_file: undefined,
      workspace_file: undefined,
      cfg_arguments: [
        'assistant.model="test"',
        `providers.test.script="${path.join(at.workspace.root, 'script.json')}"`,
        'secrets.env_vars=["RUN_SECRET"]',
      ],
      trusted_workspace_sha256: null,
      workspace_trust_state: 'no config',
      flags: [],
    },
    tools: { no_tools: true, enabled: [] },
    lock_token: null,
    log: { verbosity: 0, file: '-', format: 'text', isDefaultFile: false },
    run_log: path.join(at.workspace.root, 'run.log'),
    query: 'hello',
    started_at: Date.now(),
    ...changes,
  };
}

function runOf(
  at: ReturnType<typeof place>,
  request: RunRequest,
  clients: RecordingClients,
  secrets = new Secrets(),
): Run {
  const setup = setUpRun(request, { ...at.environment, RUN_SECRET: 'sk-run-secret-0123456789' }, secrets, (workspace) =>
    acquireLock(userSubdirectory(workspace, 'locks'), request.conversation_id, { waitSeconds: 0, role: 'in-process' }),
  );
  return new Run({
    request,
    setup,
    clients,
    logger: silentLogger,
    processes: { nextMarker: () => 'run-test.1', started: () => {}, ended: () => {} },
    version: 'test',
    leadsProcessGroup: false,
    serverOutput: () => {},
    hookOutput: 'ignore',
  });
}

function logged(at: ReturnType<typeof place>): ConversationEvent[] {
  return readFileSync(eventsFile(at.workspace.conversationsDirectory, at.conversationId), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ConversationEvent);
}

describe('run (in-process)', () => {
  it("a message runs to a completed result; every appended event reaches the clients in log order, redacted by the run's secrets", async () => {
    const at = place();
    const clients = new RecordingClients();
    const run = runOf(at, requestFor(at), clients);
    const result = await run.run();
    run.finish(result);
    run.closeLog();
    assert.equal(result.status, 'success');
    assert.equal(result.exit_code, 0);
    const events = logged(at);
    const broadcast = clients.sent.flatMap((message) => (message.type === 'event' ? [message] : []));
    assert.deepEqual(
      broadcast.map((message) => message.seq),
      events.map((_, index) => index),
    );
    assert.deepEqual(
      broadcast.map((message) => message.event),
      events,
    );
    const text = JSON.stringify(events) + JSON.stringify(clients.sent) + JSON.stringify(result);
    assert.ok(!text.includes('sk-run-secret-0123456789'), 'the secret is nowhere the run wrote');
    assert.ok(text.includes('[REDACTED]'));
    assert.equal(run.hello().event_count, events.length);
    assert.equal(run.finished, true);
  });

  it('--discard-turn: the incomplete turn is marked discarded before the new one starts', async () => {
    const at = place();
    writeFileSync(
      eventsFile(at.workspace.conversationsDirectory, at.conversationId),
      [
        { type: 'turn_start', timestamp: '2026-01-01T00:00:00.000Z' },
        { type: 'chat_request', timestamp: '2026-01-01T00:00:00.000Z', content: 'an old question' },
      ]
        .map((event) => JSON.stringify(event) + '\n')
        .join(''),
    );
    const clients = new RecordingClients();
    const run = runOf(at, requestFor(at, { discard_turn: true }), clients);
    const result = await run.run();
    run.finish(result);
    run.closeLog();
    const events = logged(at);
    assert.deepEqual(events[2], { ...events[2], type: 'turn_end', status: 'discarded' });
    assert.ok(
      events.slice(3).some((event) => event.type === 'turn_start'),
      'a new turn follows',
    );
    assert.ok(
      !events.slice(0, 2).some((event) => event.type === 'turn_end'),
      'the discard is appended, the old turn untouched',
    );
    assert.equal(result.status, 'success');
  });

  it('--continue with nothing incomplete ends as a usage error (exit 2), nothing sent', async () => {
    const at = place();
    const clients = new RecordingClients();
    const run = runOf(at, requestFor(at, { resume: true, message: null }), clients);
    const result = await run.run();
    run.finish(result);
    run.closeLog();
    assert.equal(result.exit_code, 2);
    assert.equal(result.error?.code, 'nothing_to_continue');
    assert.ok(!logged(at).some((event) => event.type === 'chat_request'));
  });

  it('a setup that fails gives back the lock and leaves the log as it was', () => {
    const at = place();
    const before = readFileSync(eventsFile(at.workspace.conversationsDirectory, at.conversationId));
    const broken = requestFor(at);
    broken.config.cfg_arguments = ['assistant.model="no-such-provider/model"'];
    assert.throws(
      () => runOf(at, broken, new RecordingClients()),
      (error: Error & { exitCode?: number }) => error.exitCode === 2,
    );
    assert.equal(existsSync(at.lockFile), false, 'the lock was released');
    assert.deepEqual(readFileSync(eventsFile(at.workspace.conversationsDirectory, at.conversationId)), before);
  });

  it('a stop before the turn starts ends it interrupted (exit 130), resumable', async () => {
    const at = place();
    const clients = new RecordingClients();
    const run = runOf(at, requestFor(at), clients);
    const { StopRequest } = await import('../../src/turn/host.ts');
    run.stop(new StopRequest('SIGINT'));
    const result = await run.run();
    run.finish(result);
    run.closeLog();
    assert.equal(result.status, 'interrupted');
    assert.equal(result.exit_code, 130);
  });
});
