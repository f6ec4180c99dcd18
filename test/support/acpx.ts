/**
 * A real ACP client in the suite: `acpx` (npm), the headless client people script agents with,
 * driving the built `jp acp` as its agent (`--agent`). Its `--format json` output is the whole
 * ACP traffic, one JSON-RPC message a line, both ways: `agentMessages` picks what jp sent, so a
 * test can check it against the SDK's schema. acpx needs Node >= 22.13 (CI's `npm test` runs on 24);
 * on an older Node these tests fail saying so, never skip.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { validateAgentMessage, type JsonRpcMessage } from './acp.ts';
import { collect, jpBinary, processesMatching, processAlive, type RunResult, type Sandbox } from './jp.ts';

const require = createRequire(import.meta.url);

export const acpxEntry = path.join(path.dirname(require.resolve('acpx/package.json')), 'dist', 'cli.js');

/** Fails (never skips) on a Node acpx cannot run on, saying what to do. */
export function requireNodeForAcpx(): void {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  if (major > 22 || (major === 22 && minor >= 13)) return;
  throw new Error(
    `the acpx tests need Node >= 22.13 (acpx's own requirement); this is Node ${process.versions.node}. Run them on Node 24, as CI's npm test does.`,
  );
}

/**
 * The user's jp config pointing `openai/*` at the fake provider (acpx splits the agent command
 * like a shell, so settings travel in the config rather than in quoted -c arguments).
 */
export function fakeProviderConfig(sandbox: Sandbox, baseUrl: string, extra = ''): void {
  const file = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp', 'config.toml');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `[providers.openai]\nbase_url = ${JSON.stringify(baseUrl)}\napi = "chat"\n${extra}`);
}

export interface Acpx {
  /** `jp acp` as acpx starts it: the built binary with these arguments. */
  agent: string;
  /** Runs `acpx --agent <agent> --format json <arguments>` in the workspace and waits for it. */
  run(acpxArguments: string[]): Promise<RunResult>;
  /** The same, left running (its own process group), for a test that acts while it runs. */
  start(acpxArguments: string[]): ChildProcess;
  /** Waits until acpx's queue owners (and the jp acp they hold) for this sandbox are gone. */
  idle(): Promise<void>;
}

export function acpx(sandbox: Sandbox, agentArguments: string[], env: NodeJS.ProcessEnv): Acpx {
  requireNodeForAcpx();
  const agent = [process.execPath, jpBinary, 'acp', ...agentArguments].join(' ');
  const start = (acpxArguments: string[]): ChildProcess =>
    spawn(process.execPath, [acpxEntry, '--agent', agent, '--format', 'json', ...acpxArguments], {
      cwd: sandbox.workspace,
      env: { ...sandbox.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  // The queue owner acpx leaves behind keeps jp acp for --ttl seconds; it is this sandbox's own.
  const owners = (): number[] =>
    processesMatching(acpxEntry, '__queue-owner').filter(
      (pid) => processAlive(pid) && environmentHome(pid) === sandbox.env.HOME,
    );
  return {
    agent,
    start,
    run: (acpxArguments) => collect(start(acpxArguments), ['acpx', ...acpxArguments], 120_000),
    async idle() {
      for (let waited = 0; owners().length > 0; waited += 50) {
        if (waited > 60_000) {
          for (const pid of owners()) process.kill(pid, 'SIGKILL');
          assert.fail("acpx's queue owner did not end within a minute of its --ttl");
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

function environmentHome(pid: number): string | undefined {
  try {
    const environment = readFileSync(`/proc/${pid}/environ`, 'utf8');
    return environment
      .split('\0')
      .find((entry) => entry.startsWith('HOME='))
      ?.slice('HOME='.length);
  } catch {
    return undefined;
  }
}

/** The JSON-RPC messages of acpx's --format json output (other lines, such as its own results, are left out). */
export function traffic(stdout: string): JsonRpcMessage[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as JsonRpcMessage)
    .filter((message) => message.jsonrpc === '2.0');
}

const agentMethods = /^(initialize|authenticate|logout|session\/)/;
const notificationsToAgent = new Set(['session/cancel']);

/**
 * What jp sent, in order, each with the method of the request it answers: its notifications and
 * requests to acpx, and its responses to acpx's requests (matched by id to the open request of
 * the other side).
 */
export function agentMessages(messages: JsonRpcMessage[]): { message: JsonRpcMessage; answers?: string }[] {
  const openToAgent = new Map<string, string>();
  const openToClient = new Set<string>();
  const sent: { message: JsonRpcMessage; answers?: string }[] = [];
  for (const message of messages) {
    const id = message.id === undefined || message.id === null ? undefined : String(message.id);
    if (message.method !== undefined) {
      const toAgent =
        message.method !== 'session/update' &&
        message.method !== 'session/request_permission' &&
        (agentMethods.test(message.method) || notificationsToAgent.has(message.method));
      if (toAgent) {
        if (id !== undefined) openToAgent.set(id, message.method);
      } else {
        if (id !== undefined) openToClient.add(id);
        sent.push({ message });
      }
      continue;
    }
    if (id === undefined) continue;
    // A response: jp's when it answers a request acpx sent (and acpx has none open by that id).
    if (openToAgent.has(id) && !openToClient.has(id)) {
      sent.push({ message, answers: openToAgent.get(id)! });
      openToAgent.delete(id);
    } else openToClient.delete(id);
  }
  return sent;
}

/** Checks every message jp sent acpx against the SDK's schema; returns how many. */
export function validateAgentTraffic(stdout: string): number {
  const sent = agentMessages(traffic(stdout));
  for (const { message, answers } of sent) validateAgentMessage(message, answers);
  return sent.length;
}
