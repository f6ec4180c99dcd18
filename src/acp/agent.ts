/**
 * `jp acp`: an Agent Client Protocol agent on stdio (DESIGN §14), built on the SDK's agent app. A
 * session is a conversation of the workspace of its `cwd`; each prompt is one run of it, started
 * and spoken to exactly as `jp query` does (a query server, through the protocol of DESIGN §8), so
 * locks, trust, the sandbox, the log and `jp conversation attach`/`ls`/`kill` work the same.
 * Nothing but JSON-RPC is written to stdout; tracing goes to the log.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import {
  agent,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type AgentConnection,
  type ClientCapabilities,
  type ContentBlock,
  type SessionInfo,
  type SessionUpdate,
  type Stream,
  type StopReason,
} from '@agentclientprotocol/sdk';
import { jpVersion } from '../version.ts';
import { requireExisting } from '../conversation/targets.ts';
import { untrustedWarning, type WorkspaceTrust } from '../config/trust.ts';
import type { LogSettings } from '../output/logger.ts';
import { connectToServer } from '../client/socket-link.ts';
import { readEventLog } from '../conversation/reader.ts';
import {
  createConversation,
  eventsFile,
  lastCompleteEvent,
  listConversationIds,
  readMetadata,
  removeConversation,
} from '../conversation/store.ts';
import { findIncompleteTurn } from '../conversation/turn-state.ts';
import { JpError, toJpError } from '../errors.ts';
import type { Logger } from '../output/logger.ts';
import { visible } from '../output/sanitize.ts';
import { resultQuery } from '../report/result.ts';
import type { RunRequest } from '../protocol/run-request.ts';
import { spawnServer } from '../server/spawn.ts';
import { acquireLock, refusalIfHeld } from '../workspace/lock.ts';
import { prepareWorkspace, resolveWorkspace, userSubdirectory, type Workspace } from '../workspace/workspace.ts';
import { AcpRunClient, type EditorPeer } from './run-client.ts';
import { messageOfPrompt, stopReasonOf, UpdateMapper } from './updates.ts';

/** JSON-RPC error codes jp answers with (besides the SDK's own for malformed requests). */
const errorCodes = { invalidParams: -32602, notFound: -32002, internal: -32603 } as const;

/** A jp error as a JSON-RPC error: the message names what and where, `data` carries jp's code, exit code and hint. */
export function requestErrorOf(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  const jpError = toJpError(error);
  const code =
    jpError.code === 'conversation_not_found'
      ? errorCodes.notFound
      : jpError.status === 'usage'
        ? errorCodes.invalidParams
        : errorCodes.internal;
  return new RequestError(code, jpError.message, {
    code: jpError.code,
    exit_code: jpError.exitCode,
    ...(jpError.hint ? { hint: jpError.hint } : {}),
  });
}

/**
 * What a session needs of the front end that started `jp acp` (the composition root builds it):
 * `jp acp`'s own settings in the session's working directory, never prompting at a terminal.
 */
export interface AcpSessionContext {
  workspace(): Workspace;
  /** Loads the configuration (a broken one is this request's error, with its file, line and key), then decides trust as a headless run does: never asked. */
  trust(): Promise<WorkspaceTrust>;
  /** The configuration part of a run request, with the trust decided. */
  requestConfig(trust: WorkspaceTrust): RunRequest['config'];
  logSettings(): LogSettings;
  /** The jp entry point a query server is spawned from. */
  readonly programFile: string;
  readonly environment: NodeJS.ProcessEnv;
}

interface Session {
  id: string;
  cwd: string;
  context: AcpSessionContext;
  workspace: Workspace;
  /** Set from the moment a prompt is accepted until its response. */
  prompting: boolean;
  running: AcpRunClient | undefined;
  /** session/cancel arrived while the prompt's run was starting: it is cancelled once it can be. */
  cancelRequested: boolean;
  /** Made by session/new in this connection: removed again when the editor leaves without a prompt sent in it. */
  created: boolean;
}

export interface AcpAgentOptions {
  /** `jp acp`'s own context, in its working directory. */
  context: AcpSessionContext;
  /** The same in a session's working directory (absolute, a directory: checked before). */
  contextIn(cwd: string): AcpSessionContext;
  logger: Logger;
  stream: Stream;
}

export class AcpAgent {
  private readonly options: AcpAgentOptions;
  private readonly sessions = new Map<string, Session>();
  private capabilities: ClientCapabilities = {};
  private connection: AgentConnection | undefined;

  constructor(options: AcpAgentOptions) {
    this.options = options;
  }

  /** Serves the editor until it closes the connection; the runs still going are stopped (saved, resumable). */
  async serve(): Promise<void> {
    const app = agent({ name: 'jp' })
      .onRequest(methods.agent.initialize, ({ params }) => {
        this.capabilities = params.clientCapabilities ?? {};
        this.options.logger.info('acp: initialize', {
          client: params.clientInfo?.name ?? null,
          protocol_version: params.protocolVersion,
        });
        return {
          protocolVersion: PROTOCOL_VERSION,
          agentCapabilities: {
            loadSession: true,
            promptCapabilities: { embeddedContext: true },
            sessionCapabilities: { list: {} },
          },
          agentInfo: { name: 'jp', title: 'jp', version: jpVersion },
          authMethods: [],
        };
      })
      .onRequest(methods.agent.session.new, ({ params }) =>
        this.guard(() => this.newSession(params.cwd, params.mcpServers.length)),
      )
      .onRequest(methods.agent.session.load, ({ params }) =>
        this.guard(() => this.loadSession(params.sessionId, params.cwd)),
      )
      .onRequest(methods.agent.session.list, ({ params }) =>
        this.guard(() => this.listSessions(params.cwd ?? undefined)),
      )
      .onRequest(methods.agent.session.prompt, ({ params }) =>
        this.guard(() => this.prompt(params.sessionId, params.prompt)),
      )
      .onNotification(methods.agent.session.cancel, ({ params }) => {
        this.options.logger.info('acp: cancel', { session: params.sessionId });
        const session = this.sessions.get(params.sessionId);
        if (!session?.prompting) return;
        if (session.running) session.running.cancel();
        else session.cancelRequested = true;
      });
    const connection = app.connect(this.options.stream);
    this.connection = connection;
    await connection.closed;
    for (const session of this.sessions.values()) {
      session.running?.close();
      if (session.created) this.removeIfUnused(session);
    }
  }

  /** A session opened and left without a prompt leaves no conversation behind (an editor opens one per panel). */
  private removeIfUnused(session: Session): void {
    try {
      const { conversationsDirectory } = session.workspace;
      if (lastCompleteEvent(eventsFile(conversationsDirectory, session.id)).kind === 'empty')
        removeConversation(conversationsDirectory, session.id);
    } catch (error) {
      this.options.logger.warn('acp: an unused session was not removed', {
        session: session.id,
        error: (error as Error).message,
      });
    }
  }

  private async guard<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      const requestError = requestErrorOf(error);
      this.options.logger.warn('acp: request failed', { code: requestError.code, message: requestError.message });
      throw requestError;
    }
  }

  private update(sessionId: string, update: SessionUpdate): Promise<void> {
    return this.connection!.client.notify(methods.client.session.update, { sessionId, update }).catch(
      (error: unknown) => {
        this.options.logger.warn('acp: an update could not be sent', { error: (error as Error).message });
      },
    );
  }

  /** A session's context: `jp acp`'s own, in the session's working directory. */
  private contextFor(cwd: string): AcpSessionContext {
    if (!path.isAbsolute(cwd))
      throw new RequestError(errorCodes.invalidParams, `cwd ${JSON.stringify(cwd)} is not an absolute path`);
    let directory = false;
    try {
      directory = statSync(cwd).isDirectory();
    } catch {
      // reported below
    }
    if (!directory) throw new RequestError(errorCodes.invalidParams, `cwd ${cwd} is not a directory`);
    return this.options.contextIn(cwd);
  }

  /** The session's first update when its workspace config is not trusted: which keys are ignored. */
  private untrustedUpdate(trust: WorkspaceTrust): SessionUpdate | undefined {
    const warning = untrustedWarning(trust);
    if (!warning) return undefined;
    const text = `jp: ${warning}`;
    return this.capabilities.session?.notices
      ? { sessionUpdate: 'notice', severity: 'warning', title: 'Workspace config not trusted', description: text }
      : { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${text}\n\n` } };
  }

  private async newSession(cwd: string, editorMcpServers: number): Promise<{ sessionId: string }> {
    const context = this.contextFor(cwd);
    const trust = await context.trust();
    const workspace = context.workspace();
    prepareWorkspace(workspace);
    const { id } = createConversation(workspace.conversationsDirectory, { title: null });
    this.sessions.set(id, {
      id,
      cwd,
      context,
      workspace,
      prompting: false,
      running: undefined,
      cancelRequested: false,
      created: true,
    });
    this.options.logger.info('acp: new session', {
      session: id,
      workspace: workspace.root,
      untrusted_keys: trust.ignored.map((key) => key.key),
    });
    if (editorMcpServers > 0)
      this.options.logger.info('acp: the editor offered MCP servers; jp uses those of its own configuration', {
        count: editorMcpServers,
      });
    const first = this.untrustedUpdate(trust);
    // After the response, which the SDK writes once this handler has returned.
    if (first) setImmediate(() => void this.update(id, first));
    return { sessionId: id };
  }

  private async loadSession(sessionId: string, cwd: string): Promise<Record<string, never>> {
    const context = this.contextFor(cwd);
    const trust = await context.trust();
    const workspace = context.workspace();
    const id = requireExisting(workspace, sessionId);
    const held = refusalIfHeld(userSubdirectory(workspace, 'locks'), id);
    if (held) throw held;
    if (this.sessions.get(id)?.prompting)
      throw new RequestError(errorCodes.invalidParams, `session ${id} has a prompt running`);
    const first = this.untrustedUpdate(trust);
    if (first) await this.update(id, first);
    const mapper = new UpdateMapper(workspace.toolRoot);
    for (const event of readEventLog(eventsFile(workspace.conversationsDirectory, id)).events) {
      for (const update of mapper.event(event, true)) await this.update(id, update);
    }
    this.sessions.set(id, {
      id,
      cwd,
      context,
      workspace,
      prompting: false,
      running: undefined,
      cancelRequested: false,
      created: false,
    });
    this.options.logger.info('acp: session loaded', { session: id, workspace: workspace.root });
    return {};
  }

  private async listSessions(cwd: string | undefined): Promise<{ sessions: SessionInfo[] }> {
    const workspace =
      cwd === undefined ? this.options.context.workspace() : resolveWorkspace(cwd, this.options.context.environment);
    const sessions: SessionInfo[] = [];
    for (const id of listConversationIds(workspace.conversationsDirectory).reverse()) {
      try {
        // A conversation with nothing in it yet (a session just opened) is not worth listing.
        if (lastCompleteEvent(eventsFile(workspace.conversationsDirectory, id)).kind === 'empty') continue;
        const metadata = readMetadata(workspace.conversationsDirectory, id);
        sessions.push({
          sessionId: id,
          cwd: workspace.toolRoot,
          title: metadata.title === null ? null : visible(metadata.title),
          updatedAt: metadata.updated_at,
        });
      } catch {
        sessions.push({ sessionId: id, cwd: workspace.toolRoot });
      }
    }
    return { sessions };
  }

  private async prompt(sessionId: string, blocks: ContentBlock[]): Promise<{ stopReason: StopReason }> {
    const session = this.sessions.get(sessionId);
    if (!session) {
      throw new RequestError(errorCodes.notFound, `no session ${sessionId} in this connection`, {
        hint: 'Create one with session/new, or open it with session/load.',
      });
    }
    if (session.prompting)
      throw new RequestError(errorCodes.invalidParams, `session ${sessionId} has a prompt running; cancel it first`);
    const message = messageOfPrompt(blocks);
    if (message.trim() === '')
      throw new RequestError(errorCodes.invalidParams, 'the prompt is empty: it has no text and no resource');
    session.prompting = true;
    session.cancelRequested = false;
    try {
      return await this.runPrompt(session, message);
    } finally {
      session.prompting = false;
      session.running = undefined;
    }
  }

  /** One prompt as one run of the session's conversation: lock, server, client, result. */
  private async runPrompt(session: Session, message: string): Promise<{ stopReason: StopReason }> {
    const sessionId = session.id;
    const { context, workspace } = session;
    const { logger } = this.options;
    const trust = await context.trust();
    if (session.cancelRequested) return { stopReason: 'cancelled' };
    const lock = acquireLock(userSubdirectory(workspace, 'locks'), sessionId, { waitSeconds: 0, role: 'client' });
    let request: RunRequest;
    try {
      const incomplete = findIncompleteTurn(
        readEventLog(eventsFile(workspace.conversationsDirectory, sessionId)).events,
      );
      request = {
        conversation_id: sessionId,
        workspace: { root: workspace.root, is_default: workspace.isDefault, tool_root: workspace.toolRoot },
        cwd: session.cwd,
        // A prompt after a stopped turn (a cancel, a crash) is the user's reply to it, as Ctrl+C → reply.
        message: incomplete ? null : message,
        ...(incomplete ? { reply: message } : {}),
        resume: incomplete !== undefined,
        discard_turn: false,
        detached: false,
        config: context.requestConfig(trust),
        tools: { no_tools: false, enabled: [] },
        lock_token: lock.token,
        log: context.logSettings(),
        run_log: path.join(userSubdirectory(workspace, 'processes'), `${sessionId}.log`),
        query: resultQuery(message),
        started_at: Date.now(),
      };
    } catch (error) {
      lock.release();
      throw error;
    }
    logger.info('acp: prompt', { session: sessionId, resume: request.resume });
    let spawned: Awaited<ReturnType<typeof spawnServer>>;
    try {
      spawned = await spawnServer(request, {
        entry: context.programFile,
        environment: context.environment,
        shareStderr: request.log.file === '-' && request.log.verbosity > 0,
      });
    } catch (error) {
      lock.release();
      throw error;
    }
    lock.forget();
    const link = await connectToServer(spawned.socketPath);
    const client = new AcpRunClient({
      link,
      peer: this.peerOf(sessionId),
      mapper: new UpdateMapper(workspace.toolRoot),
      logger,
      conversationId: sessionId,
      capability: spawned.capability,
    });
    session.running = client;
    const running = client.run();
    if (session.cancelRequested) client.cancel();
    const result = await running;
    logger.info('acp: prompt ended', { session: sessionId, status: result.status, exit_code: result.exit_code });
    const stopReason = stopReasonOf(result);
    if (stopReason) return { stopReason };
    throw new JpError(
      result.status,
      result.error?.code ?? 'run_failed',
      result.error?.message ?? `the run ended: ${result.status}`,
      result.error?.hint ? { hint: result.error.hint } : {},
    );
  }

  private peerOf(sessionId: string): EditorPeer {
    const connection = this.connection!;
    const { logger } = this.options;
    return {
      update: (update) => void this.update(sessionId, update),
      requestPermission: async (toolCall, options, signal) =>
        (
          await connection.client.request(
            methods.client.session.requestPermission,
            { sessionId, toolCall, options },
            { cancellationSignal: signal },
          )
        ).outcome,
      elicit: this.capabilities.elicitation?.form
        ? (message, requestedSchema, toolCallId, signal) =>
            connection.client.request(
              methods.client.elicitation.create,
              { sessionId, mode: 'form', message, requestedSchema, ...(toolCallId ? { toolCallId } : {}) },
              { cancellationSignal: signal },
            )
        : undefined,
      readTextFile: this.capabilities.fs?.readTextFile
        ? async (file, signal) =>
            (
              await connection.client.request(
                methods.client.fs.readTextFile,
                { sessionId, path: file },
                { cancellationSignal: signal, stopWaitingOnCancel: true },
              )
            ).content
        : undefined,
      writeTextFile: this.capabilities.fs?.writeTextFile
        ? async (file, content, signal) => {
            await connection.client.request(
              methods.client.fs.writeTextFile,
              { sessionId, path: file, content },
              { cancellationSignal: signal, stopWaitingOnCancel: true },
            );
          }
        : undefined,
      notice: (level, text) => {
        logger[level === 'info' ? 'info' : 'warn'](`run notice: ${text}`, { session: sessionId });
        if (this.capabilities.session?.notices)
          void this.update(sessionId, { sessionUpdate: 'notice', severity: level, title: text });
      },
    };
  }
}
