/**
 * `jp web` for the tests and the bench: started as a user starts it (the URL it prints, with its
 * token; a stop that interrupts it as Ctrl+C does), a page of it in a real browser, requests and
 * streams made as the page makes them, and detached runs for it to show.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { Page } from 'playwright-core';
import { launchBrowser } from './browser.ts';
import { collect, type RunResult, runJp, type Sandbox, startJp, testProvider } from './jp.ts';

/** Safety net for what the page waits on (a loaded machine); never a timed assertion. */
export const patience = { timeout: 60_000 };

/** A command that waits until the test creates `release` in the workspace. */
export const releaseWait = 'while [ ! -f release ]; do sleep 0.05; done';
export const unattendedCommands = ['-c', 'conversation.tools.run_command.run="unattended"'];

/** The list row of a conversation (its title), and its state as the page shows it. */
export function row(page: Page, title: string) {
  return page.locator('.run', { hasText: title });
}

/** `jp query --detach` with the test provider's script; the conversation's id. */
export async function detached(
  sandbox: Sandbox,
  script: unknown,
  message: string,
  extra: string[] = [],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<string> {
  const result = await runJp(
    sandbox,
    ['query', '--detach', ...testProvider(sandbox, script), ...extra, message],
    options,
  );
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim();
}

/** `jp web` and pages of it that the test file's cleanup stops and closes. */
export function webTesting(cleanup: { add(cleanup: () => unknown): void }) {
  return {
    async web(sandbox: Sandbox, args: string[] = [], options: { cwd?: string } = {}): Promise<RunningWeb> {
      const running = await startWeb(sandbox, args, options);
      cleanup.add(() => running.stop());
      return running;
    },
    async openPage(running: RunningWeb, options: Parameters<typeof launchBrowser>[0] = {}): Promise<Page> {
      const browser = await launchBrowser(options);
      cleanup.add(() => browser.close());
      const page = await browser.context.newPage();
      await page.goto(running.url);
      return page;
    },
  };
}

export interface RunningWeb {
  url: string;
  origin: string;
  port: number;
  token: string;
  process: ChildProcess;
  stop(): Promise<RunResult>;
}

export async function startWeb(
  sandbox: Sandbox,
  args: string[] = [],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<RunningWeb> {
  const child = startJp(sandbox, ['web', ...args], { ...options, stdin: 'null' });
  const result = collect(child, ['web', ...args], 600_000);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^(http:\/\/\S+)\n/m.exec(output);
      if (line) resolve(line[1]!);
    });
    void result.then((ended) => reject(new Error(`jp web ended before it printed its URL: ${ended.stderr}`)));
  });
  const parsed = new URL(url);
  let stopped: Promise<RunResult> | undefined;
  return {
    url,
    origin: parsed.origin,
    port: Number(parsed.port),
    token: new URLSearchParams(parsed.hash.slice(1)).get('token')!,
    process: child,
    stop() {
      if (!stopped) {
        child.kill('SIGINT');
        stopped = result;
      }
      return stopped;
    },
  };
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request to `jp web` from outside a browser, with the headers given (no others). A stream
 * (/api/runs, /api/view) never ends by itself: its reply is its status and headers, then it is closed.
 */
export function request(
  running: RunningWeb,
  pathname: string,
  headers: http.OutgoingHttpHeaders,
  method = 'GET',
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      { host: '127.0.0.1', port: running.port, path: pathname, method, headers },
      (response) => {
        if ((response.headers['content-type'] ?? '').startsWith('application/x-ndjson')) {
          resolve({ status: response.statusCode!, headers: response.headers, body: '' });
          response.destroy();
          return;
        }
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The headers the page sends: this server's Host, its origin, the token. */
export function pageHeaders(running: RunningWeb): http.OutgoingHttpHeaders {
  return { host: `127.0.0.1:${running.port}`, origin: running.origin, authorization: `Bearer ${running.token}` };
}

/** A JSON POST as the page makes it. */
export async function postAsPage(running: RunningWeb, pathname: string, body: unknown): Promise<Reply> {
  return request(
    running,
    pathname,
    { ...pageHeaders(running), 'content-type': 'application/json' },
    'POST',
    JSON.stringify(body),
  );
}

/** An NDJSON stream of `jp web` (/api/runs, /api/view) read as the page reads it. */
export interface MessageStream {
  /** The next message that `matches`, after the one the previous call returned. */
  next(matches: (message: Record<string, any>) => boolean): Promise<Record<string, any>>;
  /** Every message so far. */
  seen: Record<string, any>[];
  close(): void;
}

export function openStream(running: RunningWeb, pathname: string): Promise<MessageStream> {
  return new Promise((resolve, reject) => {
    const seen: Record<string, any>[] = [];
    let cursor = 0;
    let ended = false;
    let wanted: { matches: (message: Record<string, any>) => boolean; settle(error?: Error): void } | undefined;
    const look = (): void => {
      if (!wanted) return;
      const index = seen.findIndex((message, at) => at >= cursor && wanted!.matches(message));
      if (index === -1 && !ended) return;
      const waiting = wanted;
      wanted = undefined;
      if (index === -1) waiting.settle(new Error(`the stream ended first: ${JSON.stringify(seen).slice(0, 2000)}`));
      else {
        cursor = index + 1;
        waiting.settle();
      }
    };
    const outgoing = http.get(
      { host: '127.0.0.1', port: running.port, path: pathname, headers: pageHeaders(running) },
      (response) => {
        if (response.statusCode !== 200) {
          reject(new Error(`${pathname}: ${response.statusCode}`));
          response.resume();
          return;
        }
        let buffer = '';
        response.on('data', (chunk: Buffer) => {
          buffer += chunk.toString();
          const lines = buffer.split('\n');
          buffer = lines.pop()!;
          for (const line of lines) if (line) seen.push(JSON.parse(line));
          look();
        });
        response.on('close', () => {
          ended = true;
          look();
        });
        resolve({
          seen,
          next(matches) {
            return new Promise((resolveNext, rejectNext) => {
              wanted = {
                matches,
                settle: (error) => (error ? rejectNext(error) : resolveNext(seen[cursor - 1]!)),
              };
              look();
            });
          },
          close() {
            outgoing.destroy();
          },
        });
      },
    );
    outgoing.on('error', (error) => {
      if (!ended) reject(error);
    });
  });
}
