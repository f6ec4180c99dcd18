/**
 * The clients of one run: each connection says hello first, proves it holds the run's capability,
 * and gets a role (the one prompting client, the owner that started the run, viewers, `jp
 * conversation kill`); what it may do follows from its role by the table of client-roles.ts
 * (DESIGN §8 "Capability", "Who owns a run"). The hub turns what clients say into the run's
 * intents (RunControl: stop, detached) and carries what the run sends and asks (RunClients); it
 * never calls into a turn.
 */
import { timingSafeEqual } from 'node:crypto';
import type { ClientHello, ClientMessage, ServerMessage } from '../protocol/messages.ts';
import { interruptActions, PROTOCOL_VERSION } from '../protocol/messages.ts';
import type { Inquiry, PromptAction } from '../inquiry/types.ts';
import type { Logger } from '../output/logger.ts';
import type { RunPayloads } from '../report/payloads.ts';
import type { ResultObject } from '../report/result.ts';
import type { RunClients, RunControl } from '../run/clients.ts';
import type { EditorFiles, EditorTerminal } from '../tools/tool.ts';
import { StopRequest, type ClientAnswer } from '../turn/host.ts';
import type { ClientConnection } from './connection.ts';
import { EditorTerminals } from './editor-terminals.ts';
import { admit, may, prompts, type ClientAction, type ClientRole } from './client-roles.ts';

export interface ClientHubOptions {
  conversationId: string;
  /** Started with --detach: no client owns the run. */
  detached: boolean;
  /** Label of this build, reported in version mismatch errors. */
  version: string;
  logger: Logger;
  /** The run's capability (registry.ts): a hello without it is refused (client-roles.ts). */
  capability: string;
}

interface PendingAsk {
  connection: ClientConnection;
  resolve(answer: ClientAnswer): void;
}

interface PendingFileRequest {
  connection: ClientConnection;
  settle(response: { content?: string | undefined; error?: string | undefined }): void;
}

/** How long a new connection may take to say hello. */
const helloTimeoutMilliseconds = 10_000;

export class ClientHub implements RunClients {
  private readonly options: ClientHubOptions;
  private control!: RunControl;
  /** Every greeted connection and its role (client-roles.ts). */
  private readonly clients = new Map<ClientConnection, ClientRole>();
  private promptingClient: ClientConnection | undefined;
  /** The foreground client that started the run, until it detaches. */
  private ownerClient: ClientConnection | undefined;
  private ownerClaimed = false;
  private readonly pendingAsks = new Map<string, PendingAsk>();
  /** What the prompting client's editor offers for files (ClientHello.editor_files). */
  private readonly editorFilesOf = new WeakMap<ClientConnection, { read: boolean; write: boolean }>();
  private readonly pendingFileRequests = new Map<string, PendingFileRequest>();
  /** Prompting clients whose editor runs commands in its terminals (ClientHello.editor_terminal). */
  private readonly editorTerminalClients = new WeakSet<ClientConnection>();
  private readonly terminals = new EditorTerminals();
  /** The name each client gave in its hello (ClientHello.client). */
  private readonly clientNames = new WeakMap<ClientConnection, string>();
  private fileRequestSequence = 0;
  private firstClientArrived!: () => void;
  private readonly firstClientPromise: Promise<void>;
  private readonly tracing: boolean;

  constructor(options: ClientHubOptions) {
    this.options = options;
    this.tracing = options.logger.enabled('trace');
    this.firstClientPromise = new Promise((resolve) => (this.firstClientArrived = resolve));
  }

  /** The run whose intents the clients express; set once, before the first connection is accepted. */
  serve(control: RunControl): void {
    this.control = control;
  }

  firstClient(): Promise<void> {
    return this.firstClientPromise;
  }

  /** A new connection: it must say hello first; the server answers with its own hello. */
  accept(connection: ClientConnection): void {
    const timer = setTimeout(() => connection.close(), helloTimeoutMilliseconds);
    let greeted = false;
    connection.onClose((reason) => {
      clearTimeout(timer);
      if (reason) this.options.logger.warn('client dropped', { connection: connection.id, reason });
      this.detachClient(connection);
    });
    connection.onMessage((message) => {
      if (!greeted) {
        clearTimeout(timer);
        if (message.type !== 'hello') {
          connection.send({ type: 'error', code: 'expected_hello', message: 'the first message must be hello' });
          connection.close();
          return;
        }
        greeted = true;
        this.greet(connection, message);
        return;
      }
      this.options.logger.trace('received', { connection: connection.id, type: message.type });
      this.handle(connection, message);
    });
  }

  private greet(connection: ClientConnection, hello: ClientHello): void {
    if (hello.version !== PROTOCOL_VERSION) {
      connection.send({
        type: 'error',
        code: 'version_mismatch',
        message:
          `protocol version mismatch: the client speaks version ${hello.version}, ` +
          `this server (jp ${this.options.version}, pid ${process.pid}) speaks version ${PROTOCOL_VERSION}; ` +
          'use the same jp version for both',
      });
      connection.close();
      return;
    }
    if (this.control.finished) {
      connection.send({ type: 'error', code: 'run_finished', message: 'the run has just finished' });
      connection.close();
      return;
    }
    const admission = admit(hello, {
      holdsCapability: sameCapability(hello.capability, this.options.capability),
      promptingTaken: this.promptingClient !== undefined && !this.promptingClient.closed,
      ownerOpen: !this.options.detached && !this.ownerClaimed,
    });
    if (!admission.admitted) {
      this.options.logger.info('refused a client', { connection: connection.id, code: admission.code });
      connection.send({ type: 'error', code: admission.code, message: this.refusal(admission.code) });
      connection.close();
      return;
    }
    const role = admission.role;
    this.clients.set(connection, role);
    if (prompts(role)) this.promptingClient = connection;
    if (prompts(role) && hello.editor_files) this.editorFilesOf.set(connection, hello.editor_files);
    if (prompts(role) && hello.editor_terminal) this.editorTerminalClients.add(connection);
    if (hello.client !== undefined) this.clientNames.set(connection, hello.client);
    if (role === 'owner' || role === 'owner-prompting') {
      this.ownerClaimed = true;
      this.ownerClient = connection;
    }
    connection.send({
      type: 'hello',
      version: PROTOCOL_VERSION,
      conversation_id: this.options.conversationId,
      pid: process.pid,
      ...this.control.hello(),
      prompting: prompts(role),
    });
    this.options.logger.debug('client attached', { connection: connection.id, role });
    // Viewers (attach --read-only, wait) and kill do not count: the run waits for the client that started it.
    if (may(role, 'hold-run')) this.firstClientArrived();
  }

  private refusal(code: 'capability_required' | 'prompting_client_attached'): string {
    return code === 'capability_required'
      ? `refused: this connection did not prove it may use ${this.options.conversationId} ` +
          '(its hello has no valid capability); ' +
          `connect with \`jp conversation attach ${this.options.conversationId}\`, ` +
          "which reads it from jp's private state"
      : `another client is already attached to ${this.options.conversationId} ` +
          'and answers its prompts; attach with --read-only to watch';
  }

  /** Whether the connection's role allows `action`; a refusal is logged, never acted on. */
  private allows(connection: ClientConnection, action: ClientAction, what: string): boolean {
    const role = this.clients.get(connection);
    if (role !== undefined && may(role, action)) return true;
    this.options.logger.info(`ignored ${what} from a client whose role does not allow it`, {
      connection: connection.id,
      role: role ?? 'none',
    });
    return false;
  }

  private detachClient(connection: ClientConnection): void {
    if (!this.clients.delete(connection)) return;
    this.options.logger.debug('client detached', { connection: connection.id });
    if (this.ownerClient === connection) {
      // The owner went away without detaching (killed, its pipeline died): the run stops, saved and
      // resumable, before its open inquiry could fall back to a policy and start anything.
      this.ownerClient = undefined;
      if (!this.control.finished) {
        this.options.logger.info('the client that owns the run went away without detaching; stopping');
        this.control.stop(new StopRequest('shutdown'));
      }
    }
    if (this.promptingClient === connection) this.promptingClient = undefined;
    for (const [id, ask] of this.pendingAsks) {
      if (ask.connection !== connection) continue;
      this.pendingAsks.delete(id);
      ask.resolve({ answered: false });
    }
    for (const [id, request] of this.pendingFileRequests) {
      if (request.connection !== connection) continue;
      this.pendingFileRequests.delete(id);
      request.settle({ error: 'the editor went away before it answered' });
    }
    this.terminals.gone(connection);
  }

  private handle(connection: ClientConnection, message: ClientMessage): void {
    switch (message.type) {
      case 'hello':
        connection.send({ type: 'error', code: 'unexpected_hello', message: 'hello was already received' });
        connection.close();
        return;
      case 'inquiry_response': {
        const ask = this.pendingAsks.get(message.id);
        if (!ask || ask.connection !== connection || !this.allows(connection, 'answer', 'an answer')) return;
        this.pendingAsks.delete(message.id);
        ask.resolve({ answered: true, answer: message.answer, client: this.clientNames.get(connection) });
        return;
      }
      case 'file_response': {
        const request = this.pendingFileRequests.get(message.id);
        if (!request || request.connection !== connection || !this.allows(connection, 'answer', 'a file response'))
          return;
        this.pendingFileRequests.delete(message.id);
        request.settle(message);
        return;
      }
      case 'terminal_response':
        if (this.allows(connection, 'answer', 'a terminal response')) this.terminals.respond(connection, message);
        return;
      case 'inquiry_declined': {
        const ask = this.pendingAsks.get(message.id);
        if (!ask || ask.connection !== connection || !this.allows(connection, 'answer', 'a declined inquiry')) return;
        this.pendingAsks.delete(message.id);
        ask.resolve({ answered: false, declined: true, ...(message.reason ? { reason: message.reason } : {}) });
        return;
      }
      case 'signal': {
        const role = this.clients.get(connection);
        if (role !== undefined && may(role, 'interrupt-menu'))
          connection.send({ type: 'interrupt_menu', options: [...interruptActions] });
        else if (this.allows(connection, 'interrupt-stop', 'an interrupt'))
          this.control.stop(new StopRequest('SIGINT'));
        return;
      }
      case 'interrupt_action':
        if (!this.allows(connection, 'steer', 'an interrupt action')) return;
        this.interruptAction(connection, message.action, message.reply);
        return;
      case 'disconnect':
        if ((message.detach || connection === this.ownerClient) && this.allows(connection, 'detach-run', 'a detach'))
          this.control.detached();
        if (connection === this.ownerClient) this.ownerClient = undefined;
        this.detachClient(connection);
        connection.close();
        return;
      case 'shutdown':
        // DESIGN §8: only the owner, the prompting client or `jp conversation kill` stops the run,
        // whatever the reason given; a viewer never does.
        if (!this.allows(connection, 'stop', 'a shutdown')) return;
        this.control.stop(
          new StopRequest(
            message.reason === 'interrupt' ? 'SIGINT' : message.reason === 'terminate' ? 'SIGTERM' : 'shutdown',
          ),
        );
        return;
    }
  }

  private interruptAction(
    connection: ClientConnection,
    action: (typeof interruptActions)[number],
    reply: string | undefined,
  ): void {
    switch (action) {
      case 'stop':
        this.control.stop(new StopRequest('SIGINT'));
        return;
      case 'abort':
        this.control.stop(new StopRequest('SIGINT', { discard: true }));
        return;
      case 'continue':
        return;
      case 'reply':
        this.control.stop(new StopRequest('SIGINT', { reply: reply ?? '' }));
        return;
      case 'detach':
        this.control.detached();
        if (connection === this.ownerClient) this.ownerClient = undefined;
        this.detachClient(connection);
        connection.close();
        return;
    }
  }

  broadcast(message: ServerMessage<RunPayloads>): void {
    // Checked first: this runs for every streamed piece, and a disabled level should cost nothing.
    if (this.clients.size > 0 && this.tracing)
      this.options.logger.trace('sent', { type: message.type, clients: this.clients.size });
    for (const [client, role] of this.clients) if (may(role, 'watch')) client.send(message);
  }

  hasPromptingClient(): boolean {
    return this.promptingClient !== undefined && !this.promptingClient.closed;
  }

  askClient(id: string, inquiry: Inquiry, signal: AbortSignal, ifDetached?: PromptAction): Promise<ClientAnswer> {
    const connection = this.promptingClient;
    if (!connection || connection.closed) return Promise.resolve({ answered: false });
    return new Promise((resolve) => {
      const onAbort = (): void => {
        this.pendingAsks.delete(id);
        resolve({ answered: false });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.pendingAsks.set(id, {
        connection,
        resolve: (answer) => {
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
      connection.send({ type: 'inquiry', id, inquiry, ...(ifDetached ? { if_detached: ifDetached } : {}) });
    });
  }

  /** A terminal of the prompting client's editor for the call `toolCallId`, when it offers them. */
  editorTerminal(toolCallId: string): EditorTerminal | undefined {
    const connection = this.promptingClient;
    if (!connection || connection.closed || !this.editorTerminalClients.has(connection)) return undefined;
    return this.terminals.terminalFor(connection, toolCallId);
  }

  /** Reads and writes through the prompting client's editor, as far as it offers them. */
  editorFiles(): EditorFiles | undefined {
    const connection = this.promptingClient;
    const offered = connection && !connection.closed ? this.editorFilesOf.get(connection) : undefined;
    if (!connection || !offered || (!offered.read && !offered.write)) return undefined;
    const ask = (
      operation: 'read' | 'write',
      file: string,
      content?: string,
    ): Promise<{ content?: string | undefined; error?: string | undefined }> => {
      if (connection.closed) return Promise.resolve({ error: 'the editor went away' });
      const id = `file-${++this.fileRequestSequence}`;
      return new Promise((settle) => {
        this.pendingFileRequests.set(id, { connection, settle });
        connection.send({
          type: 'file_request',
          id,
          operation,
          path: file,
          ...(content !== undefined ? { content } : {}),
        });
      });
    };
    return {
      ...(offered.read
        ? {
            read: async (file: string) => {
              const response = await ask('read', file);
              if (response.error !== undefined) throw new Error(`the editor could not read it: ${response.error}`);
              return response.content;
            },
          }
        : {}),
      ...(offered.write
        ? {
            write: async (file: string, content: string) => {
              const response = await ask('write', file, content);
              if (response.error !== undefined) throw new Error(`the editor did not write it: ${response.error}`);
            },
          }
        : {}),
    };
  }

  /**
   * Tells every client how the run ended, then ends the connections. The owner calls this only
   * after it has released the conversation: a script that runs its next query the moment this one
   * returns must not find the lock still held.
   */
  closeAll(reason: string, result?: ResultObject): void {
    if (result) this.broadcast({ type: 'turn_complete', result });
    this.broadcast({ type: 'process_exiting', reason });
    for (const client of [...this.clients.keys()]) client.close();
  }
}

/** Whether `given` is the run's capability; compared in constant time. */
function sameCapability(given: string | undefined, capability: string): boolean {
  if (typeof given !== 'string') return false;
  const left = Buffer.from(given);
  const right = Buffer.from(capability);
  return left.length === right.length && timingSafeEqual(left, right);
}
