/**
 * An SSH host as a source of runs: `ssh <host> jp web --stdio`, with the user's own ssh (its
 * config, keys and agent), one session per host kept open while the page is served and opened
 * again (after a pause) when it ends. Everything of the host goes through that session: its list,
 * its views, its answers. Nothing of jp listens on the network on either side.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { encodeLine, LineDecoder, SERVER_LINE_BYTES } from '../protocol/framing.ts';
import type { ClientMessage } from '../protocol/messages.ts';
import type { SourceReply, SourceRequest } from './source-protocol.ts';
import type {
  ContinueRequest,
  ConversationReference,
  ListedRun,
  OpenRequest,
  Source,
  ViewHandle,
  ViewMessage,
} from './types.ts';

const reconnectMilliseconds = 5000;

export interface SshSourceOptions {
  host: string;
  /** The ssh program and its options, before the host: `["ssh"]` by default (web.ssh_command). */
  sshCommand: string[];
  /** The command that starts jp on the host (web.remote_command): `jp` by default. */
  remoteCommand: string;
}

export class SshSource implements Source {
  readonly name: string;
  private readonly options: SshSourceOptions;
  private child: ChildProcess | undefined;
  private problem: string | undefined = 'connecting';
  private lastRuns: ListedRun[] = [];
  private readonly listWatchers = new Set<(runs: ListedRun[]) => void>();
  private readonly problemWatchers = new Set<(message: string | undefined) => void>();
  private readonly views = new Map<string, (message: ViewMessage) => void>();
  private readonly replies = new Map<string, (reply: { ok: boolean; message: string }) => void>();
  private sequence = 0;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: SshSourceOptions) {
    this.options = options;
    this.name = options.host;
  }

  private connect(): void {
    if (this.closed || this.child) return;
    const stderr: string[] = [];
    const child = spawn(
      this.options.sshCommand[0]!,
      [
        ...this.options.sshCommand.slice(1),
        '-T',
        '-o',
        'BatchMode=yes',
        '--',
        this.options.host,
        `${this.options.remoteCommand} web --stdio`,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.child = child;
    const decoder = new LineDecoder(SERVER_LINE_BYTES);
    child.stdout!.on('data', (chunk: Buffer) => {
      const results = decoder.push(chunk);
      if (results === 'overflow') return;
      for (const result of results) if (result.kind === 'message') this.receive(result.value);
    });
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
    child.stdin!.on('error', () => {});
    child.on('error', (error) => stderr.push(error.message));
    child.on('close', (code) => {
      this.child = undefined;
      const said = stderr.join('').trim().split('\n').slice(-3).join(' ');
      this.setProblem(`ssh ${this.options.host} ended (exit ${code ?? 'signal'})${said ? `: ${said}` : ''}`);
      for (const sink of this.views.values())
        sink({ type: 'closed', reason: 'failed', error: { code: 'source_lost', message: this.problem! } });
      this.views.clear();
      for (const reply of this.replies.values()) reply({ ok: false, message: this.problem! });
      this.replies.clear();
      if (!this.closed && this.listWatchers.size > 0)
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.connect();
        }, reconnectMilliseconds);
    });
    if (this.listWatchers.size > 0) this.request({ op: 'watch' });
  }

  private setProblem(problem: string | undefined): void {
    this.problem = problem;
    for (const watcher of this.problemWatchers) watcher(problem);
  }

  private request(request: SourceRequest): void {
    this.child?.stdin?.write(encodeLine(request));
  }

  private receive(value: unknown): void {
    if (typeof value !== 'object' || value === null) return;
    const reply = value as SourceReply | { type: 'hello' };
    switch (reply.type) {
      case 'hello':
        this.setProblem(undefined);
        return;
      case 'list':
        if (!Array.isArray(reply.runs)) return;
        this.lastRuns = reply.runs.map((run) => ({ ...run, source: this.name }));
        for (const watcher of this.listWatchers) watcher(this.lastRuns);
        return;
      case 'view': {
        const sink = this.views.get(reply.view);
        if (!sink || typeof reply.message !== 'object' || reply.message === null) return;
        if (reply.message.type === 'closed') this.views.delete(reply.view);
        sink(reply.message);
        return;
      }
      case 'reply': {
        const waiting = this.replies.get(reply.id);
        this.replies.delete(reply.id);
        waiting?.({ ok: reply.ok === true, message: String(reply.message) });
        return;
      }
    }
  }

  watch(onList: (runs: ListedRun[]) => void, onProblem: (message: string | undefined) => void): () => void {
    this.listWatchers.add(onList);
    this.problemWatchers.add(onProblem);
    onProblem(this.problem);
    if (this.child) {
      if (this.listWatchers.size === 1) this.request({ op: 'watch' });
      else onList(this.lastRuns);
    } else this.connect();
    return () => {
      this.listWatchers.delete(onList);
      this.problemWatchers.delete(onProblem);
    };
  }

  open(request: OpenRequest, sink: (message: ViewMessage) => void): ViewHandle {
    const view = `v${++this.sequence}`;
    if (!this.child) {
      sink({
        type: 'closed',
        reason: 'failed',
        error: { code: 'source_lost', message: this.problem ?? 'not connected' },
      });
      return { send() {}, close() {} };
    }
    this.views.set(view, sink);
    this.request({ op: 'open', view, ...request });
    return {
      send: (message: ClientMessage) => this.request({ op: 'send', view, message }),
      close: () => {
        if (this.views.delete(view)) this.request({ op: 'close', view });
      },
    };
  }

  private ask(request: SourceRequest & { id: string }): Promise<{ ok: boolean; message: string }> {
    if (!this.child) return Promise.resolve({ ok: false, message: this.problem ?? 'not connected' });
    return new Promise((resolve) => {
      this.replies.set(request.id, resolve);
      this.request(request);
    });
  }

  continueRun(request: ContinueRequest): Promise<{ ok: boolean; message: string }> {
    return this.ask({ op: 'continue', id: `r${++this.sequence}`, ...request });
  }

  kill(reference: ConversationReference): Promise<{ ok: boolean; message: string }> {
    return this.ask({ op: 'kill', id: `r${++this.sequence}`, ...reference });
  }

  async diff(reference: ConversationReference, turn: number | undefined): Promise<{ ok: boolean; text: string }> {
    const { ok, message } = await this.ask({ op: 'diff', id: `r${++this.sequence}`, ...reference, turn });
    return { ok, text: message };
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.child?.stdin?.end();
    this.child?.kill();
  }
}
