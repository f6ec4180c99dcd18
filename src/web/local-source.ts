/**
 * This machine as a source of runs: every workspace this user's jp has run in (and the one `jp web`
 * was started in), listed as `jp conversation ls` lists them; views attach in this process as
 * `attach` does; a deferred run is continued, a run killed and a turn's changes shown by the jp
 * commands that do it (jp-process.ts), in the conversation's workspace.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { encodeLine, LineDecoder, SERVER_LINE_BYTES } from '../protocol/framing.ts';
import { parseServerMessage, PROTOCOL_VERSION } from '../protocol/messages.ts';
import { readEventLog } from '../conversation/reader.ts';
import { eventsFile } from '../conversation/store.ts';
import { canonicalJson } from '../conversation/seal.ts';
import { addUsage, type Usage } from '../llm/types.ts';
import { listConversations } from '../server/listing.ts';
import { knownWorkspaces } from '../workspace/known-workspaces.ts';
import type { Workspace } from '../workspace/workspace.ts';
import { runJpCommand, startJp, type JpProgram } from './jp-process.ts';
import { openLocalView, pendingInquiries } from './local-view.ts';
import type {
  ContinueRequest,
  ConversationReference,
  ListedRun,
  OpenRequest,
  Source,
  ViewHandle,
  ViewMessage,
} from './types.ts';

/** How often the list is read again while someone watches it. */
const listIntervalMilliseconds = 1000;
/** How long a continued run may take to ask again the inquiry it was continued for. */
const continueTimeoutMilliseconds = 30_000;

export interface LocalSourceOptions extends JpProgram {
  /** The workspace `jp web` was started in, listed even before a query recorded it. */
  current: Workspace | undefined;
}

export class LocalSource implements Source {
  readonly name = 'local';
  private readonly options: LocalSourceOptions;
  private readonly usageCache = new Map<string, { size: number; mtime: number; usage: Usage | null }>();
  private readonly watchers = new Set<(runs: ListedRun[]) => void>();
  private timer: NodeJS.Timeout | undefined;
  private lastList = '';
  private lastRuns: ListedRun[] = [];
  /**
   * Conversations this page is continuing, until the continue has answered or given up: the
   * continued run's prompting client is the continue itself, so a view opened meanwhile (the list
   * shows the run again) only watches.
   */
  private readonly continuing = new Set<string>();

  constructor(options: LocalSourceOptions) {
    this.options = options;
  }

  workspaces(): Workspace[] {
    const known = knownWorkspaces(this.options.environment);
    const current = this.options.current;
    if (current && !known.some((workspace) => workspace.id === current.id)) known.unshift(current);
    return known;
  }

  private workspace(id: string): Workspace {
    const workspace = this.workspaces().find((candidate) => candidate.id === id);
    if (!workspace) throw new Error(`no workspace ${id} on this machine`);
    return workspace;
  }

  list(): ListedRun[] {
    const runs: ListedRun[] = [];
    for (const workspace of this.workspaces()) {
      let listed: ReturnType<typeof listConversations>;
      try {
        listed = listConversations(workspace, this.options.environment);
      } catch {
        continue;
      }
      for (const conversation of listed) {
        runs.push({
          source: this.name,
          workspace: { id: workspace.id, root: workspace.root, name: path.basename(workspace.root) },
          id: conversation.id,
          title: conversation.title,
          created_at: conversation.created_at,
          updated_at: conversation.updated_at,
          state: conversation.state,
          status: conversation.status,
          tool: conversation.tool,
          usage: this.usageOf(workspace, conversation.id),
          changed_turns: conversation.changed_turns,
        });
      }
    }
    return runs;
  }

  /** The tokens a conversation's requests used, read again only when its log changed. */
  private usageOf(workspace: Workspace, id: string): Usage | null {
    const file = eventsFile(workspace.conversationsDirectory, id);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(file);
    } catch {
      return null;
    }
    const cached = this.usageCache.get(file);
    if (cached && cached.size === stat.size && cached.mtime === stat.mtimeMs) return cached.usage;
    let usage: Usage | null = null;
    try {
      for (const event of readEventLog(file).events) if (event.type === 'usage') usage = addUsage(usage, event.usage);
    } catch {
      usage = null;
    }
    this.usageCache.set(file, { size: stat.size, mtime: stat.mtimeMs, usage });
    return usage;
  }

  watch(onList: (runs: ListedRun[]) => void, onProblem: (message: string | undefined) => void): () => void {
    this.watchers.add(onList);
    if (this.lastList) onList(this.lastRuns);
    else this.poll();
    onProblem(undefined);
    this.timer ??= setInterval(() => this.poll(), listIntervalMilliseconds);
    return () => {
      this.watchers.delete(onList);
      if (this.watchers.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
        this.lastList = '';
      }
    };
  }

  private poll(): void {
    const runs = this.list();
    const text = JSON.stringify(runs);
    if (text === this.lastList) return;
    this.lastList = text;
    this.lastRuns = runs;
    for (const watcher of this.watchers) watcher(runs);
  }

  open(request: OpenRequest, sink: (message: ViewMessage) => void): ViewHandle {
    let workspace: Workspace;
    try {
      workspace = this.workspace(request.workspace);
    } catch (error) {
      sink({ type: 'closed', reason: 'failed', error: { code: 'no_workspace', message: (error as Error).message } });
      return { send() {}, close() {} };
    }
    const continuing = this.continuing.has(`${request.workspace}/${request.conversation}`);
    return openLocalView(workspace, continuing ? { ...request, prompt: false } : request, sink);
  }

  /**
   * Continues a deferred run as `jp query --continue` does, with this client prompting: the run
   * asks its pending inquiry again and gets the page's answer only if it is the very inquiry the
   * page showed (same id, same call, same payload); then this client detaches and the run goes on
   * in the background.
   */
  continueRun(request: ContinueRequest): Promise<{ ok: boolean; message: string }> {
    let workspace: Workspace;
    try {
      workspace = this.workspace(request.workspace);
    } catch (error) {
      return Promise.resolve({ ok: false, message: (error as Error).message });
    }
    const { events } = readEventLog(eventsFile(workspace.conversationsDirectory, request.conversation));
    const expected = pendingInquiries(events).find((pending) => pending.id === request.inquiry_id);
    if (
      !expected ||
      expected.tool_call_id !== request.tool_call_id ||
      canonicalJson(expected.inquiry) !== canonicalJson(request.inquiry)
    )
      return Promise.resolve({
        ok: false,
        message: `${request.conversation} no longer waits on that inquiry: reload to see what it waits on now`,
      });
    const child = startJp(
      this.options,
      workspace.root,
      ['query', '--continue', '--id', request.conversation, '--stdio'],
      'pipe',
    );
    const key = `${request.workspace}/${request.conversation}`;
    this.continuing.add(key);
    return new Promise((resolve) => {
      let settled = false;
      const stderr: Buffer[] = [];
      const settle = (ok: boolean, message: string): void => {
        if (settled) return;
        settled = true;
        this.continuing.delete(key);
        clearTimeout(timer);
        resolve({ ok, message });
      };
      const timer = setTimeout(() => {
        child.stdin!.end();
        settle(false, 'the continued run did not ask its inquiry again in time; it stopped, still waiting');
      }, continueTimeoutMilliseconds);
      const decoder = new LineDecoder(SERVER_LINE_BYTES);
      child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.stdout!.on('data', (chunk: Buffer) => {
        const results = decoder.push(chunk);
        if (results === 'overflow') return;
        for (const result of results) {
          if (result.kind !== 'message') continue;
          const message = parseServerMessage(result.value);
          if (message?.type === 'error') settle(false, message.message);
          if (message?.type !== 'inquiry' || settled) continue;
          if (message.id === expected.id && canonicalJson(message.inquiry) === canonicalJson(expected.inquiry)) {
            child.stdin!.write(encodeLine({ type: 'inquiry_response', id: message.id, answer: request.answer }));
            child.stdin!.end(encodeLine({ type: 'disconnect', detach: true }));
            settle(true, `answered; ${request.conversation} goes on in the background`);
          } else {
            // Not what the page showed: leave it unanswered (the run stops, still waiting) and say so.
            child.stdin!.end();
            settle(false, `${request.conversation} asked something else than the page showed: reload and answer that`);
          }
        }
      });
      child.on('error', (error) => settle(false, error.message));
      child.on('close', () =>
        settle(false, Buffer.concat(stderr).toString('utf8').trim() || 'the continued run ended before it asked'),
      );
      child.stdin!.on('error', () => {});
      child.stdin!.write(
        encodeLine({ type: 'hello', version: PROTOCOL_VERSION, can_prompt: true, client: request.client }),
      );
    });
  }

  async kill(reference: ConversationReference): Promise<{ ok: boolean; message: string }> {
    const workspace = this.workspaces().find((candidate) => candidate.id === reference.workspace);
    if (!workspace) return { ok: false, message: `no workspace ${reference.workspace} on this machine` };
    const result = await runJpCommand(this.options, workspace.root, [
      'conversation',
      'kill',
      '--',
      reference.conversation,
    ]);
    return {
      ok: result.code === 0,
      message: result.code === 0 ? `${reference.conversation} stopped` : result.stderr.trim(),
    };
  }

  async diff(reference: ConversationReference, turn: number | undefined): Promise<{ ok: boolean; text: string }> {
    const workspace = this.workspaces().find((candidate) => candidate.id === reference.workspace);
    if (!workspace) return { ok: false, text: `no workspace ${reference.workspace} on this machine` };
    const args = [
      'conversation',
      'diff',
      ...(turn === undefined ? [] : ['--turn', String(turn)]),
      '--',
      reference.conversation,
    ];
    const result = await runJpCommand(this.options, workspace.root, args);
    return { ok: result.code === 0, text: result.code === 0 ? result.stdout : result.stderr.trim() };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.watchers.clear();
  }
}
