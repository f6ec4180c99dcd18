/**
 * The HTTP side of `jp web` (node:http, nothing else): the page and its assets, the list of runs
 * and each opened view as streamed NDJSON (one message a line; a view's history comes in a few
 * `events` batches, live events one by one), and the few actions the page takes, each a JSON POST.
 * Every request passes the guard (guard.ts) first. The server is one more client of the runs
 * (DESIGN §8): what it does to a run, it does through a source (types.ts), as `attach` would.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { canonicalJson } from '../conversation/seal.ts';
import { conversationIdPattern } from '../conversation/store.ts';
import type { Inquiry } from '../inquiry/types.ts';
import { guard, type GuardSettings } from './guard.ts';
import type { ListedRun, Source, ViewHandle, ViewMessage } from './types.ts';

export interface WebServerOptions extends Omit<GuardSettings, 'port'> {
  /** Where the built page is (index.html, app.js, app.css). */
  pageDirectory: string;
  sources: Source[];
  /** The name the page's answers are recorded with (`jp web`). */
  clientName: string;
  bind: string;
  port: number;
}

interface OpenView {
  handle: ViewHandle;
  /** Inquiries this view was asked and has not seen settled: only these may be answered. */
  inquiries: Map<string, Inquiry>;
  prompting: boolean;
}

const securityHeaders = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
};

const assetTypes: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'icon.svg': 'image/svg+xml',
};

const maxBodyBytes = 1024 * 1024;

export class WebServer {
  private readonly options: WebServerOptions;
  private readonly server: http.Server;
  private readonly views = new Map<string, OpenView>();
  private readonly lists = new Map<string, ListedRun[]>();
  private readonly problems = new Map<string, string>();
  private readonly listStreams = new Set<http.ServerResponse>();
  private readonly unwatch: (() => void)[] = [];
  private viewSequence = 0;
  private port = 0;
  private readonly pages = new Map<string, Buffer>();

  constructor(options: WebServerOptions) {
    this.options = options;
    this.server = http.createServer((request, response) => this.handle(request, response));
  }

  /** Listens; resolves with the port (the one asked for, or one the system chose for 0). */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.bind, () => {
        const address = this.server.address();
        this.port = typeof address === 'object' && address ? address.port : this.options.port;
        resolve(this.port);
      });
    });
  }

  close(): Promise<void> {
    for (const stop of this.unwatch) stop();
    for (const view of this.views.values()) view.handle.close();
    for (const stream of this.listStreams) stream.end();
    for (const source of this.options.sources) source.close();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private asset(name: string): Buffer {
    let content = this.pages.get(name);
    if (!content) {
      content = readFileSync(path.join(this.options.pageDirectory, name));
      this.pages.set(name, content);
    }
    return content;
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://jp-web.invalid');
    const decision = guard(
      { method: request.method ?? 'GET', url, headers: request.headers },
      { token: this.options.token, hosts: this.options.hosts, port: this.port },
    );
    if (!decision.ok) {
      response.writeHead(decision.status, { ...securityHeaders, 'content-type': 'text/plain; charset=utf-8' });
      response.end(`jp web: ${decision.reason}\n`);
      return;
    }
    void this.route(request, response, url).catch((error: unknown) => {
      const status = error instanceof RequestError ? 400 : 500;
      if (!response.headersSent)
        this.json(response, status, { ok: false, message: error instanceof Error ? error.message : String(error) });
      else response.end();
    });
  }

  private async route(request: http.IncomingMessage, response: http.ServerResponse, url: URL): Promise<void> {
    const method = request.method ?? 'GET';
    if (method === 'GET' && (url.pathname === '/' || url.pathname === '/index.html')) {
      response.writeHead(200, { ...securityHeaders, 'content-type': 'text/html; charset=utf-8' });
      response.end(this.asset('index.html'));
      return;
    }
    const assetName = url.pathname.startsWith('/assets/') ? url.pathname.slice('/assets/'.length) : undefined;
    if (method === 'GET' && assetName !== undefined && assetTypes[assetName]) {
      response.writeHead(200, { ...securityHeaders, 'content-type': assetTypes[assetName]! });
      response.end(this.asset(assetName));
      return;
    }
    if (method === 'GET' && url.pathname === '/api/runs') return this.streamRuns(request, response);
    if (method === 'GET' && url.pathname === '/api/view') return this.streamView(request, response, url);
    if (method === 'GET' && url.pathname === '/api/diff') {
      const source = this.source(url.searchParams.get('source'));
      const turn = url.searchParams.get('turn');
      const result = await source.diff(
        {
          workspace: url.searchParams.get('workspace') ?? '',
          conversation: conversationOf(url.searchParams.get('conversation')),
        },
        turn && /^\d+$/.test(turn) ? Number(turn) : undefined,
      );
      this.json(response, 200, result);
      return;
    }
    if (method === 'POST') {
      const body = await readJson(request);
      if (url.pathname === '/api/answer') return this.answer(response, body);
      if (url.pathname === '/api/continue') {
        const source = this.source(stringOf(body.source));
        this.json(
          response,
          200,
          await source.continueRun({
            workspace: stringOf(body.workspace),
            conversation: conversationOf(body.conversation),
            inquiry_id: stringOf(body.inquiry_id),
            tool_call_id: stringOf(body.tool_call_id),
            inquiry: body.inquiry,
            answer: body.answer,
            client: this.clientName(source),
          }),
        );
        return;
      }
      if (url.pathname === '/api/kill') {
        const source = this.source(stringOf(body.source));
        this.json(
          response,
          200,
          await source.kill({ workspace: stringOf(body.workspace), conversation: conversationOf(body.conversation) }),
        );
        return;
      }
    }
    this.json(response, 404, { ok: false, message: `no ${method} ${url.pathname}` });
  }

  private clientName(source: Source): string {
    return source.name === 'local' ? this.options.clientName : `${this.options.clientName} (ssh)`;
  }

  private source(name: string | null): Source {
    const source = this.options.sources.find((candidate) => candidate.name === name);
    if (!source) throw new RequestError(`no source ${JSON.stringify(name)}`);
    return source;
  }

  private json(response: http.ServerResponse, status: number, value: unknown): void {
    response.writeHead(status, { ...securityHeaders, 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(value));
  }

  private startStream(response: http.ServerResponse): (value: unknown) => void {
    response.writeHead(200, {
      ...securityHeaders,
      'content-type': 'application/x-ndjson; charset=utf-8',
      connection: 'keep-alive',
    });
    response.flushHeaders();
    return (value) => {
      if (!response.writableEnded) response.write(`${JSON.stringify(value)}\n`);
    };
  }

  private streamRuns(request: http.IncomingMessage, response: http.ServerResponse): void {
    const send = this.startStream(response);
    this.listStreams.add(response);
    if (this.unwatch.length === 0) {
      for (const source of this.options.sources) {
        this.unwatch.push(
          source.watch(
            (runs) => {
              this.lists.set(source.name, runs);
              this.broadcastRuns();
            },
            (problem) => {
              if (problem === undefined) this.problems.delete(source.name);
              else this.problems.set(source.name, problem);
              this.broadcastRuns();
            },
          ),
        );
      }
    }
    send(this.runsMessage());
    request.on('close', () => this.listStreams.delete(response));
  }

  private runsMessage(): unknown {
    return {
      type: 'runs',
      sources: this.options.sources.map((source) => ({
        name: source.name,
        problem: this.problems.get(source.name) ?? null,
      })),
      runs: this.options.sources.flatMap((source) => this.lists.get(source.name) ?? []),
    };
  }

  private broadcastRuns(): void {
    const text = `${JSON.stringify(this.runsMessage())}\n`;
    for (const stream of this.listStreams) stream.write(text);
  }

  private streamView(request: http.IncomingMessage, response: http.ServerResponse, url: URL): void {
    const source = this.source(url.searchParams.get('source'));
    const conversation = conversationOf(url.searchParams.get('conversation'));
    const send = this.startStream(response);
    const id = `view-${++this.viewSequence}`;
    send({ type: 'view', id });
    const from = Number(url.searchParams.get('from') ?? '0');
    const view: OpenView = { handle: { send() {}, close() {} }, inquiries: new Map(), prompting: false };
    this.views.set(id, view);
    view.handle = source.open(
      {
        workspace: url.searchParams.get('workspace') ?? '',
        conversation,
        from: Number.isInteger(from) && from >= 0 ? from : 0,
        prompt: url.searchParams.get('prompt') !== '0',
        client: this.clientName(source),
      },
      (message: ViewMessage) => {
        if (message.type === 'opened') view.prompting = message.prompting;
        if (message.type === 'inquiry') view.inquiries.set(message.id, message.inquiry);
        if (message.type === 'inquiry_resolved') view.inquiries.delete(message.id);
        send(message);
        if (message.type === 'closed') {
          this.views.delete(id);
          response.end();
        }
      },
    );
    // The page went away (closed, reloaded, detached): the view leaves the run, deciding nothing.
    request.on('close', () => {
      if (!this.views.delete(id)) return;
      view.handle.close();
    });
  }

  /** An answer is taken only for the very inquiry this view was asked, as the page showed it. */
  private answer(response: http.ServerResponse, body: Record<string, unknown>): void {
    const view = this.views.get(stringOf(body.view));
    const id = stringOf(body.inquiry_id);
    const asked = view?.inquiries.get(id);
    if (!view?.prompting || !asked) {
      this.json(response, 409, { ok: false, message: 'that inquiry is not waiting in this view any more' });
      return;
    }
    if (canonicalJson(asked) !== canonicalJson(body.inquiry)) {
      this.json(response, 409, { ok: false, message: 'the answer is for another inquiry than the one asked' });
      return;
    }
    view.inquiries.delete(id);
    view.handle.send({ type: 'inquiry_response', id, answer: body.answer });
    this.json(response, 200, { ok: true, message: 'answered' });
  }
}

/** A request that cannot be done as asked (400), as opposed to a failure of jp web (500). */
class RequestError extends Error {}

/** A conversation named by the page: an id as jp makes them, never a path. */
function conversationOf(value: unknown): string {
  if (typeof value !== 'string' || !conversationIdPattern.test(value))
    throw new RequestError(`${JSON.stringify(value ?? null)} is not a conversation id (jp-c followed by 16 digits)`);
  return value;
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function readJson(request: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        reject(new RequestError('the request is too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      try {
        const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
        resolve(value as Record<string, unknown>);
      } catch (error) {
        reject(new RequestError(`the request is not JSON: ${(error as Error).message}`));
      }
    });
    request.on('error', reject);
  });
}
