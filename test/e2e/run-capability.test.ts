/**
 * Steering a run needs its capability, not just the same uid (DESIGN §8 "Capability"; issue 35,
 * attack 1). The attacker is a script, not jp: a process of the same user (an MCP server, a hook, a
 * command of another run, any program) that finds a detached run's socket and speaks the protocol
 * as jp's own clients do, adapting to the server's protocol version, but without the secret the
 * run gave its starting client and keeps in jp's private state. `XDG_RUNTIME_DIR` is unset, as in
 * cron, `su` and many CI shells. Every attempt, to prompt, watch, or stop, is refused; the run's log
 * never says a user answered; the legitimate clients, which read the capability, still get in.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { gate, textStep } from '../support/fake-provider.ts';
import { eventually, fakeModel, readEvents, runJp, type Sandbox, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

/**
 * The attacker: connects, says hello as a prompting client (or as `kill`, or as a viewer), retries
 * with the version the server says it speaks, answers every inquiry it is sent with "run", and once
 * greeted (when its goal is to stop it) tries every way to stop the run. It prints each message it receives, one JSON per line.
 */
const attackerSource = `
import net from 'node:net';
const [socketPath, helloJson, goal] = process.argv.slice(2);
const asks = JSON.parse(helloJson);
function attempt(version) {
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath);
    const received = [];
    let buffered = '';
    socket.on('error', () => {});
    socket.on('close', () => resolve(received));
    socket.on('data', (chunk) => {
      buffered += chunk.toString();
      for (let newline = buffered.indexOf('\\n'); newline !== -1; newline = buffered.indexOf('\\n')) {
        const message = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        received.push(message);
        process.stdout.write(JSON.stringify(message) + '\\n');
        const send = (reply) => socket.write(JSON.stringify(reply) + '\\n');
        if (message.type === 'inquiry') send({ type: 'inquiry_response', id: message.id, answer: 'run' });
        if (message.type === 'hello' && goal === 'stop') {
          send({ type: 'signal', kind: 'interrupt' });
          send({ type: 'interrupt_action', action: 'stop' });
          send({ type: 'shutdown', reason: 'user' });
        }
      }
    });
    socket.on('connect', () => socket.write(JSON.stringify({ type: 'hello', version, ...asks }) + '\\n'));
  });
}
let received = await attempt(2);
const mismatch = received.find((message) => message.code === 'version_mismatch');
if (mismatch) received = await attempt(Number([...mismatch.message.matchAll(/speaks version (\\d+)/g)].at(-1)[1]));
`;

interface Attacker {
  child: ChildProcess;
  /** Messages the server sent it, so far. */
  received: Record<string, any>[];
  exited: Promise<void>;
}

function attack(
  sandbox: Sandbox,
  socketPath: string,
  hello: Record<string, unknown>,
  goal: 'answer' | 'stop',
): Attacker {
  const script = path.join(sandbox.root, 'attacker.mjs');
  writeFileSync(script, attackerSource);
  const environment = { ...sandbox.env };
  delete environment.XDG_RUNTIME_DIR;
  const child = spawn(process.execPath, [script, socketPath, JSON.stringify(hello), goal], {
    env: environment,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const received: Record<string, any>[] = [];
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
      received.push(JSON.parse(buffered.slice(0, newline)));
      buffered = buffered.slice(newline + 1);
    }
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  cleanup.add(() => child.kill('SIGKILL'));
  return { child, received, exited };
}

/** The server took the attacker in, or refused it for good (not for its protocol version, which it then retries). */
function answered(attacker: Attacker): boolean {
  return attacker.received.some(
    (message) => message.type === 'hello' || (message.type === 'error' && message.code !== 'version_mismatch'),
  );
}

/** A detached run held by the model's gate; its registry entry, read once it is there. */
async function detachedRun(
  sandbox: Sandbox,
  steps: Parameters<typeof fakeModel>[1],
  extra: string[] = [],
): Promise<{ id: string; socketPath: string }> {
  const model = await fakeModel(cleanup, steps);
  const environment = { ...model.env };
  const detached = await runJp(sandbox, ['query', '--detach', ...model.args, ...extra, 'go'], { env: environment });
  assert.equal(detached.code, 0, detached.stderr);
  const id = detached.stdout.trim();
  const entryFile = path.join(sandbox.userDirectory(), 'processes', `${id}.json`);
  const entry = await eventually('the run is registered', () =>
    existsSync(entryFile) ? (JSON.parse(readFileSync(entryFile, 'utf8')) as { socket_path: string }) : undefined,
  );
  return { id, socketPath: entry.socket_path };
}

describe('a run is steered only with its capability', () => {
  it("a script without it cannot answer a detached run's run_tool and escalate inquiries: refused, nothing runs, nobody is recorded as the user", async () => {
    const sandbox = cleanup.sandbox();
    assert.equal(sandbox.env.XDG_RUNTIME_DIR, undefined);
    const modelAnswers = gate();
    const run = await detachedRun(
      sandbox,
      [
        {
          parts: [
            { gate: modelAnswers },
            { toolCall: { name: 'fs_create_file', arguments: { path: 'planted.txt', content: 'by the attacker' } } },
            {
              toolCall: {
                name: 'run_command',
                arguments: {
                  command: 'echo out > "$HOME/escalated.txt"',
                  escalate: true,
                  justification: 'needs to write outside the workspace',
                },
              },
            },
          ],
        },
        textStep('done'),
      ],
      ['-c', 'conversation.tools.run_command.run="unattended"'],
    );
    const attacker = attack(sandbox, run.socketPath, { can_prompt: true }, 'answer');
    await eventually('the server answered the attacker', () => answered(attacker));
    modelAnswers.open();
    const waited = await runJp(sandbox, ['conversation', 'wait', run.id]);
    await attacker.exited;

    assert.equal(existsSync(path.join(sandbox.workspace, 'planted.txt')), false, 'the file tool ran');
    assert.equal(
      existsSync(path.join(sandbox.env.HOME!, 'escalated.txt')),
      false,
      'the command ran outside the sandbox',
    );
    assert.equal(waited.code, 4, `the run deferred both inquiries: ${waited.stderr}`);
    const events = readEvents(sandbox, run.id);
    assert.deepEqual(
      events.filter((event) => event.type === 'inquiry_request').map((event) => event.inquiry.kind),
      ['run_tool', 'escalate'],
    );
    assert.equal(
      events.some((event) => event.type === 'inquiry_response' && event.by === 'user'),
      false,
    );
    const log = readFileSync(path.join(sandbox.workspace, '.jp', 'conversations', run.id, 'events.ndjson'), 'utf8');
    assert.doesNotMatch(log, /"by":"user"/);
    assert.deepEqual(
      attacker.received.map((message) => `${message.type}:${message.code ?? ''}`),
      ['error:capability_required'],
    );
    assert.match(attacker.received[0]!.message, /did not prove it may use .*jp conversation attach/);
    // Where the capability is kept: private to the user, gone with the run.
    const capabilityFile = path.join(sandbox.userDirectory(), 'processes', `${run.id}.capability`);
    assert.equal(existsSync(capabilityFile), false);
  });

  for (const [label, hello] of [
    ['as a prompting client', { can_prompt: true }],
    ['as `jp conversation kill`', { can_prompt: false, kill: true }],
    ['as the owner', { can_prompt: true, owner: true }],
    ['as a viewer', { can_prompt: false, read_only: true }],
  ] as const) {
    it(`a script without it cannot stop the run or watch it ${label}: refused before anything, the run completes`, async () => {
      const sandbox = cleanup.sandbox();
      const released = gate();
      const run = await detachedRun(sandbox, [
        { parts: [{ text: 'Working on it. ' }, { gate: released }, { text: 'Finished.' }] },
      ]);
      const attacker = attack(sandbox, run.socketPath, hello, 'stop');
      await eventually('the server answered the attacker', () => answered(attacker));
      assert.deepEqual(
        attacker.received.map((message) => `${message.type}:${message.code ?? ''}`),
        ['error:capability_required'],
        'it saw nothing of the run: no hello, no event',
      );
      await attacker.exited;
      released.open();
      const waited = await runJp(sandbox, ['conversation', 'wait', run.id]);
      assert.equal(waited.code, 0, waited.stderr);
      const events = readEvents(sandbox, run.id);
      assert.equal(events.at(-1)!.status, 'completed');
      assert.equal(
        events.some((event) => event.type === 'chat_response' && /Finished/.test(event.message ?? '')),
        true,
      );
    });
  }

  it('the same script holding the capability, read from jp’s private state as attach reads it, is let in: its stop is the user’s', async () => {
    const sandbox = cleanup.sandbox();
    const released = gate();
    const run = await detachedRun(sandbox, [
      { parts: [{ text: 'Working on it. ' }, { gate: released }, { text: 'Finished.' }] },
    ]);
    const capability = readFileSync(
      path.join(sandbox.userDirectory(), 'processes', `${run.id}.capability`),
      'utf8',
    ).trim();
    assert.equal(statSync(path.join(sandbox.userDirectory(), 'processes', `${run.id}.capability`)).mode & 0o777, 0o600);
    const holder = attack(sandbox, run.socketPath, { can_prompt: true, capability }, 'stop');
    await holder.exited;
    assert.equal(holder.received[0]!.type, 'hello');
    assert.equal(holder.received[0]!.prompting, true);
    const waited = await runJp(sandbox, ['conversation', 'wait', run.id]);
    assert.equal(readEvents(sandbox, run.id).at(-1)!.status, 'interrupted', waited.stderr);
    released.open();
  });
});
