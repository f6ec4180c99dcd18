/**
 * Real MCP servers for tests: `@modelcontextprotocol/server-everything` (from the npm registry) run
 * as a subprocess by jp over stdio, or started here over streamable HTTP on 127.0.0.1. Each server
 * jp starts gets a marker argument (the server ignores it) so a test can find its own processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { processAlive, processesMatching, type Sandbox } from './jp.ts';

const require = createRequire(import.meta.url);

/** The server's entry point (its `mcp-server-everything` binary). */
export const everythingEntry = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);

/**
 * server-everything's stdio server in a process that, like many real servers, outlives its input:
 * it ignores SIGTERM and keeps running after EOF on stdin. Only SIGKILL ends it.
 */
const stubbornLauncher =
  "process.on('SIGTERM', () => {}); setInterval(() => {}, 1 << 30); process.stdout.on('error', () => {}); import(process.argv[1]);";

/**
 * TOML for `[mcp.servers.<name>]` starting server-everything over stdio; `marker` tags its process.
 * `stubborn`: a server that only SIGKILL ends (see above).
 */
export function everythingStdio(
  name: string,
  marker: string,
  extra = '',
  options: { stubborn?: boolean } = {},
): string {
  const args = options.stubborn
    ? ['-e', stubbornLauncher, path.join(path.dirname(everythingEntry), 'transports', 'stdio.js'), marker]
    : [everythingEntry, 'stdio', marker];
  return `[mcp.servers.${name}]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ${JSON.stringify(args)}\n${extra}`;
}

/** TOML for `[mcp.servers.<name>]` reaching a streamable HTTP server. */
export function httpServer(name: string, url: string, extra = ''): string {
  return `[mcp.servers.${name}]\nurl = ${JSON.stringify(url)}\n${extra}`;
}

/** The pids of the stdio servers started for `marker`. */
export function serverProcesses(marker: string): number[] {
  return processesMatching(path.dirname(everythingEntry), marker).filter(processAlive);
}

/** Writes the user's own config (always trusted, unlike a workspace's .jp/config.toml); returns its path. */
export function writeUserConfig(sandbox: Sandbox, toml: string): string {
  const file = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp', 'config.toml');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, toml);
  return file;
}

/** Ends what a failed test left running (safety net; tests assert that nothing is left). */
export function killServers(marker: string): void {
  for (const pid of serverProcesses(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface HttpEverything {
  url: string;
  process: ChildProcess;
  close(): Promise<void>;
}

/** server-everything over streamable HTTP; resolves once it listens (a free port chosen here). */
export async function startEverythingHttp(): Promise<HttpEverything> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [everythingEntry, 'streamableHttp'], {
      env: { PATH: process.env.PATH, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const listening = await new Promise<boolean>((resolve) => {
      let output = '';
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (output.includes(`listening on port ${port}`)) resolve(true);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', () => resolve(false));
    });
    if (listening) {
      child.stdout!.resume();
      child.stderr!.resume();
      return {
        url: `http://127.0.0.1:${port}/mcp`,
        process: child,
        close: () =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      };
    }
    // Another process took the port between our check and the server's listen: try another.
    if (attempt >= 5) throw new Error('server-everything (streamableHttp) did not start');
  }
}
