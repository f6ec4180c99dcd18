/**
 * The stdio transport of an MCP server jp starts: the SDK's framing (ReadBuffer, serializeMessage)
 * over a child process that jp places itself. A query server leads its own process group, and its
 * MCP servers stay in it (a `kill --force` of the group takes them along). A run inside the user's
 * command (`--no-server`) shares the terminal's foreground group, where Ctrl+C would reach the
 * servers too: there each server gets a group of its own, registered like a tool's, so that the
 * run's end and `kill --force` still reach it. The SDK's own StdioClientTransport cannot place the
 * process; its environment rule is kept (getDefaultEnvironment plus the server's `env`), with the
 * run's process marker (JP_TOOL_PROCESS) as every tool subprocess has.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadBuffer, serializeMessage, STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { markerVariable } from '../marked-processes.ts';
import type { ProcessTracker } from '../tool.ts';

export interface StdioServerOptions {
  command: string;
  args: string[];
  /** Added to the SDK's default environment (PATH, HOME, USER, LOGNAME, SHELL, TERM). */
  env: Record<string, string>;
  cwd: string;
  /** Start it in a process group of its own, told to `processes` (see above). */
  ownGroup: boolean;
  processes: ProcessTracker | undefined;
  stderrLine(line: string): void;
}

/** How long a server gets to leave after EOF, then after SIGTERM, before SIGKILL. */
const graceMilliseconds = 2000;

export class ServerProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly options: StdioServerOptions;
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Why jp stopped the server itself, when it did. */
  private stoppedBecause: string | undefined;

  constructor(options: StdioServerOptions) {
    this.options = options;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** How the process ended ("exit code 3", "signal SIGKILL"), once it has. */
  /** Why jp stopped the server itself ("it sent a message larger than …"), when it did. */
  get stopReason(): string | undefined {
    return this.stoppedBecause;
  }

  get exitDescription(): string | undefined {
    if (!this.exit) return undefined;
    return this.exit.signal ? `signal ${this.exit.signal}` : `exit code ${this.exit.code}`;
  }

  start(): Promise<void> {
    const { options } = this;
    // Marked like a tool's subprocess, so that the run's sweeps find it and what it starts.
    const marker = options.processes?.nextMarker();
    return new Promise((resolve, reject) => {
      const child = spawn(options.command, options.args, {
        cwd: options.cwd,
        env: { ...getDefaultEnvironment(), ...options.env, ...(marker ? { [markerVariable]: marker } : {}) },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: options.ownGroup,
      });
      this.child = child;
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        if (options.ownGroup && child.pid !== undefined && marker) options.processes?.started(child.pid, marker);
        resolve();
      });
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        if (options.ownGroup && child.pid !== undefined) options.processes?.ended(child.pid);
        this.onclose?.();
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => {
        if (this.stoppedBecause) return;
        try {
          this.buffer.append(chunk);
        } catch {
          // A message over the SDK's buffer: it cannot be read, and what follows it cannot be told
          // apart from it. The server is stopped at once, saying why (its call fails now, not at
          // its time limit).
          this.stoppedBecause =
            `it sent a message larger than ${STDIO_DEFAULT_MAX_BUFFER_SIZE / 1024 / 1024} MiB, ` +
            `the most jp reads from an MCP server, and was stopped`;
          this.signal('SIGKILL');
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      let partial = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        partial += chunk.toString('utf8');
        const lines = partial.split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) options.stderrLine(line);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.exit) return Promise.reject(new Error('the server is not running'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** EOF, then SIGTERM, then SIGKILL (to its group when it has one), each after a grace period. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.exit) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const within = (milliseconds: number): Promise<boolean> =>
      Promise.race([
        closed.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), milliseconds).unref()),
      ]);
    child.stdin!.end();
    if (await within(graceMilliseconds)) return;
    this.signal('SIGTERM');
    if (await within(graceMilliseconds)) return;
    this.signal('SIGKILL');
    await within(graceMilliseconds);
  }

  /** SIGKILL now, synchronously (the process is exiting). */
  killNow(): void {
    if (!this.exit) this.signal('SIGKILL');
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined || this.exit) return;
    try {
      if (this.options.ownGroup) process.kill(-pid, signal);
      else process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
