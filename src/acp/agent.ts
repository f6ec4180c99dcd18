/**
 * `jp acp`: an Agent Client Protocol agent on stdio (DESIGN §14), built on the SDK's agent app. A
 * session is a conversation of the workspace of its `cwd`; each prompt is one run of it, started
 * and spoken to exactly as `jp query` does (prompt-turn.ts), so locks, trust, the sandbox, the log
 * and `jp conversation attach`/`ls`/`kill` work the same. Nothing but JSON-RPC is written to
 * stdout; tracing goes to the log.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import {
  agent,
  type AgentConnection,
  type ClientCapabilities,
  type ContentBlock,
  type McpServer,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type SessionConfigOption,
  type SessionInfo,
  type SessionModeState,
  type SessionUpdate,
  type StopReason,
  type Stream,
} from '@agentclientprotocol/sdk';
import { untrustedWarning, type WorkspaceTrust } from '../config/trust.ts';
import { readEventLog } from '../conversation/reader.ts';
import {
  createConversation,
  eventsFile,
  lastCompleteEvent,
  listConversationIds,
  readMetadata,
} from '../conversation/store.ts';
import { requireExisting } from '../conversation/targets.ts';
import { toJpError } from '../errors.ts';
import type { Logger } from '../output/logger.ts';
import { visible } from '../output/sanitize.ts';
import { jpVersion } from '../version.ts';
import { refusalIfHeld } from '../workspace/lock.ts';
import { prepareWorkspace, userSubdirectory } from '../workspace/workspace.ts';
import { availableCommands, commandOf } from './commands.ts';
import { editorPeer } from './editor-peer.ts';
import { imagesOfPrompt, messageOfPrompt } from './prompt-content.ts';
import { runPrompt } from './prompt-turn.ts';
import { readStoredSession, storeSession } from './session-store.ts';
import { type AcpSessionContext, type RunSettings, readRunSettings, Session } from './session.ts';
import { configOptionIds, isModeId, SessionSettings } from './session-settings.ts';
import { UpdateMapper } from './updates.ts';

/** JSON-RPC error codes jp answers with (besides the SDK's own for malformed requests). */
const errorCodes = { authRequired: -32000, invalidParams: -32602, notFound: -32002, internal: -32603 } as const;

/**
 * A jp error as a JSON-RPC error: the message names what and where, `data` carries jp's code, exit
 * code and hint. A model whose key is missing is ACP's authentication error.
 */
export function requestErrorOf(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  const jpError = toJpError(error);
  const code =
    jpError.code === 'api_key_missing'
      ? errorCodes.authRequired
      : jpError.code === 'conversation_not_found'
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

export type { AcpSessionContext } from './session.ts';

export interface AcpAgentOptions {
  /**
   * Where `jp acp` was started: never a workspace it reads by itself (each session names its own
   * `cwd`); only session/list without a `cwd` looks there.
   */
  launchDirectory: string;
  /** `jp acp`'s context in a session's working directory (absolute, a directory: checked before). */
  contextIn(cwd: string): AcpSessionContext;
  logger: Logger;
  stream: Stream;
}

/** What session/new, load and resume answer besides the id: the modes and the config options. */
interface SessionState {
  modes: SessionModeState;
  configOptions: SessionConfigOption[];
}

export class AcpAgent {
  private readonly options: AcpAgentOptions;
  private readonly sessions = new Map<string, Session>();
  private capabilities: ClientCapabilities = {};
  private connection: AgentConnection | undefined;

  constructor(options: AcpAgentOptions) {
    this.options = options;
  }

  /**
   * Serves the editor until it closes the connection; the runs still going are stopped (saved,
   * resumable). Every session stays: its id can be loaded later, by this editor or another.
   */
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
            promptCapabilities: { embeddedContext: true, image: true },
            mcpCapabilities: { http: true },
            sessionCapabilities: { list: {}, resume: {}, close: {} },
          },
          agentInfo: { name: 'jp', title: 'jp', version: jpVersion },
          authMethods: [],
        };
      })
      .onRequest(methods.agent.session.new, ({ params }) =>
        this.guard(() => this.newSession(params.cwd, params.mcpServers)),
      )
      .onRequest(methods.agent.session.load, ({ params }) =>
        this.guard(() => this.openSession(params.sessionId, params.cwd, params.mcpServers, true)),
      )
      .onRequest(methods.agent.session.resume, ({ params }) =>
        this.guard(() => this.openSession(params.sessionId, params.cwd, params.mcpServers ?? [], false)),
      )
      .onRequest(methods.agent.session.close, ({ params }) =>
        this.guard(async () => this.closeSession(params.sessionId)),
      )
      .onRequest(methods.agent.session.list, ({ params }) =>
        this.guard(() => this.listSessions(params.cwd ?? undefined)),
      )
      .onRequest(methods.agent.session.setMode, ({ params }) =>
        this.guard(() => this.setMode(params.sessionId, params.modeId)),
      )
      .onRequest(methods.agent.session.setConfigOption, ({ params }) =>
        this.guard(() => this.setConfigOption(params.sessionId, params.configId, params.value)),
      )
      .onRequest(methods.agent.session.prompt, ({ params }) =>
        this.guard(() => this.prompt(params.sessionId, params.prompt)),
      )
      .onNotification(methods.agent.session.cancel, ({ params }) => {
        this.options.logger.info('acp: cancel', { session: params.sessionId });
        this.cancel(params.sessionId);
      });
    const connection = app.connect(this.options.stream);
    this.connection = connection;
    await connection.closed;
    for (const session of this.sessions.values()) session.running?.close();
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

  /** Sends updates after the response to the request being handled (which the SDK writes once its handler returns). */
  private updateAfterResponse(sessionId: string, updates: SessionUpdate[]): void {
    setImmediate(() => {
      void (async () => {
        for (const update of updates) await this.update(sessionId, update);
      })();
    });
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

  private sessionOf(sessionId: string): Session {
    const session = this.sessions.get(sessionId);
    if (!session)
      throw new RequestError(errorCodes.notFound, `no session ${sessionId} in this connection`, {
        hint: 'Create one with session/new, or open it with session/load.',
      });
    return session;
  }

  /** A note for the session's first updates: a notice when the editor shows them, else a line of the answer. */
  private note(title: string, text: string): SessionUpdate {
    return this.capabilities.session?.notices
      ? { sessionUpdate: 'notice', severity: 'warning', title, description: text }
      : { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${text}\n\n` } };
  }

  /** What a session's first updates say: ignored untrusted keys, editor MCP servers jp cannot use. */
  private notes(trust: WorkspaceTrust, settings: RunSettings): SessionUpdate[] {
    const updates: SessionUpdate[] = [];
    const warning = untrustedWarning(trust);
    if (warning) updates.push(this.note('Workspace config not trusted', `jp: ${warning}`));
    if (settings.editorServers.skipped.length > 0)
      updates.push(this.note('MCP servers not used', `jp: not used: ${settings.editorServers.skipped.join('; ')}`));
    return updates;
  }

  private commandsUpdate(): SessionUpdate {
    return { sessionUpdate: 'available_commands_update', availableCommands: availableCommands() };
  }

  private state(session: Session, settings: RunSettings): SessionState {
    return {
      modes: session.settings.modeState(),
      configOptions: session.settings.configOptions(settings.modelId, session.context.offeredModels),
    };
  }

  private async newSession(cwd: string, editorServers: McpServer[]): Promise<{ sessionId: string } & SessionState> {
    const context = this.contextFor(cwd);
    const workspace = context.workspace();
    const sessionSettings = new SessionSettings();
    const settings = await readRunSettings(context, sessionSettings, editorServers, cwd, undefined);
    // A model that cannot be used (its key is missing) is said now, not at the first prompt.
    settings.model();
    prepareWorkspace(workspace);
    const { id } = createConversation(workspace.conversationsDirectory, { title: null });
    const session = new Session({ id, cwd, context, workspace, editorServers, settings: sessionSettings });
    this.sessions.set(id, session);
    this.options.logger.info('acp: new session', {
      session: id,
      workspace: workspace.root,
      untrusted_keys: settings.trust.ignored.map((key) => key.key),
      editor_mcp_servers: settings.editorServers.names.map((name) => name.jp),
    });
    this.updateAfterResponse(id, [...this.notes(settings.trust, settings), this.commandsUpdate()]);
    return { sessionId: id, ...this.state(session, settings) };
  }

  /** session/load (`replay`: the history is sent as updates first) and session/resume. */
  private async openSession(
    sessionId: string,
    cwd: string,
    editorServers: McpServer[],
    replay: boolean,
  ): Promise<SessionState> {
    const context = this.contextFor(cwd);
    const workspace = context.workspace();
    const id = requireExisting(workspace, sessionId);
    const held = refusalIfHeld(userSubdirectory(workspace, 'locks'), id);
    if (held) throw held;
    if (this.sessions.get(id)?.prompting)
      throw new RequestError(errorCodes.invalidParams, `session ${id} has a prompt running`);
    const sessionSettings = new SessionSettings();
    const stored = readStoredSession(workspace, id);
    if (stored.mode) sessionSettings.mode = stored.mode;
    if (stored.model) sessionSettings.model = stored.model;
    const session = new Session({ id, cwd, context, workspace, editorServers, settings: sessionSettings });
    const settings = await session.runSettings();
    for (const update of this.notes(settings.trust, settings)) await this.update(id, update);
    if (replay) {
      const mapper = new UpdateMapper(workspace.toolRoot, settings.contextWindowTokens());
      for (const event of readEventLog(eventsFile(workspace.conversationsDirectory, id)).events)
        for (const update of mapper.event(event, true)) await this.update(id, update);
      for (const update of mapper.closeOpenCalls('the turn stopped before the call finished'))
        await this.update(id, update);
    }
    this.sessions.set(id, session);
    this.options.logger.info(replay ? 'acp: session loaded' : 'acp: session resumed', {
      session: id,
      workspace: workspace.root,
    });
    this.updateAfterResponse(id, [this.commandsUpdate()]);
    return this.state(session, settings);
  }

  /** Keeps the session's mode and model choice for its next connection (session-store.ts). */
  private remember(session: Session): void {
    storeSession(session.workspace, session.id, {
      mode: session.settings.mode,
      ...(session.settings.model !== undefined ? { model: session.settings.model } : {}),
    });
  }

  private closeSession(sessionId: string): Record<string, never> {
    const session = this.sessionOf(sessionId);
    if (session.prompting) this.cancel(sessionId);
    this.sessions.delete(sessionId);
    this.options.logger.info('acp: session closed', { session: sessionId });
    return {};
  }

  private cancel(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session?.prompting) return;
    if (session.running) session.running.cancel();
    else session.cancelRequested = true;
  }

  private async listSessions(cwd: string | undefined): Promise<{ sessions: SessionInfo[] }> {
    const context = cwd === undefined ? this.options.contextIn(this.options.launchDirectory) : this.contextFor(cwd);
    const workspace = context.workspace();
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

  private async setMode(sessionId: string, modeId: string): Promise<Record<string, never>> {
    const session = this.sessionOf(sessionId);
    if (!isModeId(modeId))
      throw new RequestError(errorCodes.invalidParams, `no session mode ${JSON.stringify(modeId)}`, {
        hint: `The modes are ${session.settings
          .modeState()
          .availableModes.map((mode) => mode.id)
          .join(', ')}.`,
      });
    session.settings.mode = modeId;
    this.remember(session);
    this.options.logger.info('acp: mode', { session: sessionId, mode: modeId });
    const settings = await session.runSettings();
    this.updateAfterResponse(sessionId, [
      { sessionUpdate: 'current_mode_update', currentModeId: modeId },
      { sessionUpdate: 'config_option_update', configOptions: this.state(session, settings).configOptions },
    ]);
    return {};
  }

  private async setConfigOption(
    sessionId: string,
    configId: string,
    value: string | boolean,
  ): Promise<{ configOptions: SessionConfigOption[] }> {
    const session = this.sessionOf(sessionId);
    if (typeof value !== 'string')
      throw new RequestError(errorCodes.invalidParams, `config option ${JSON.stringify(configId)} takes a value id`);
    if (configId === configOptionIds.mode) {
      await this.setMode(sessionId, value);
      return { configOptions: this.state(session, await session.runSettings()).configOptions };
    }
    if (configId !== configOptionIds.model)
      throw new RequestError(errorCodes.invalidParams, `no config option ${JSON.stringify(configId)}`, {
        hint: `The options are ${Object.values(configOptionIds).join(', ')}.`,
      });
    const before = await session.runSettings();
    const offered = new Set([before.modelId, ...session.context.offeredModels]);
    if (!offered.has(value))
      throw new RequestError(errorCodes.invalidParams, `model ${JSON.stringify(value)} is not offered`, {
        hint: `Offered: ${[...offered].join(', ')}. jp acp offers the models given with -m (one -m each).`,
      });
    const previous = session.settings.model;
    session.settings.model = value;
    try {
      // A model that cannot be used (its key is missing, its provider unknown) is refused now.
      (await session.runSettings()).model();
    } catch (error) {
      session.settings.model = previous;
      throw error;
    }
    this.remember(session);
    this.options.logger.info('acp: model', { session: sessionId, model: value });
    return { configOptions: this.state(session, await session.runSettings()).configOptions };
  }

  private async prompt(sessionId: string, blocks: ContentBlock[]): Promise<{ stopReason: StopReason }> {
    const session = this.sessionOf(sessionId);
    if (session.prompting)
      throw new RequestError(errorCodes.invalidParams, `session ${sessionId} has a prompt running; cancel it first`);
    const command = commandOf(blocks, sessionId);
    const message = messageOfPrompt(blocks);
    const images = imagesOfPrompt(blocks);
    if (!command && message.trim() === '' && images.length === 0)
      throw new RequestError(errorCodes.invalidParams, 'the prompt is empty: it has no text, no resource and no image');
    session.prompting = true;
    session.cancelRequested = false;
    try {
      if (command) return await this.runCommand(session, command);
      const peer = editorPeer({
        connection: this.connection!,
        capabilities: this.capabilities,
        sessionId,
        logger: this.options.logger,
        update: (update) => void this.update(sessionId, update),
      });
      return await runPrompt(session, message, images, { peer, logger: this.options.logger });
    } finally {
      session.prompting = false;
      session.running = undefined;
    }
  }

  /** A slash command: the jp command runs; what it says is the answer; a failure is the prompt's error. */
  private async runCommand(
    session: Session,
    command: { name: string; arguments: string[]; diff: boolean },
  ): Promise<{ stopReason: StopReason }> {
    this.options.logger.info('acp: command', { session: session.id, command: command.name });
    const outcome = await session.context.jpCommand(command.arguments);
    const output = visible(outcome.stdout.trimEnd());
    const status = visible(outcome.stderr.trim());
    if (outcome.code !== 0)
      throw new RequestError(
        errorCodes.internal,
        `/${command.name} failed: ${status || output || `exit code ${outcome.code}`}`,
        { exit_code: outcome.code },
      );
    const shown = [command.diff && output !== '' ? `\`\`\`diff\n${output}\n\`\`\`` : output, status]
      .filter((part) => part !== '')
      .join('\n\n');
    await this.update(session.id, {
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: shown === '' ? `/${command.name}: done.` : shown },
    });
    return { stopReason: 'end_turn' };
  }
}
