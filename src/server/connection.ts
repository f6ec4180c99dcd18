/**
 * A client as the server sees it, over a Unix socket or in memory (the `--no-server` path). Sending
 * never blocks the run: a client whose unread backlog passes the cap is disconnected. Anything a
 * client sends that is malformed, unknown or oversized closes that connection only.
 */
import type { Socket } from 'node:net';
import { encodeLine, LineDecoder, MAX_LINE_BYTES } from '../protocol/framing.ts';
import type { ServerLink } from '../protocol/link.ts';
import { parseClientMessage } from '../protocol/client-messages.ts';
import { parseServerMessage, type ClientMessage, type Payloads, type ServerMessage } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';

export interface ClientConnection {
  readonly id: number;
  send(message: ServerMessage<Payloads>): void;
  /** Sends what is queued, then closes. */
  close(): void;
  onMessage(handler: (message: ClientMessage) => void): void;
  /** Called once, however the connection ends; `reason` is set when the server cut it. */
  onClose(handler: (reason: string | undefined) => void): void;
  readonly closed: boolean;
}

/**
 * Unread bytes a client may fall behind before it is cut off. Every message counts; the one
 * exception is the largest single message queued since the socket last drained, when it is bigger
 * than a line a client may send (an event holding a large piped input): one message the client
 * must read whole is not a sign of a slow client, but a second one queued behind it counts.
 */
export const maxBacklogBytes = 8 * 1024 * 1024;

let nextConnectionId = 1;

export class SocketConnection implements ClientConnection {
  readonly id = nextConnectionId++;
  private readonly socket: Socket;
  private readonly decoder = new LineDecoder();
  private messageHandler: (message: ClientMessage) => void = () => {};
  private firstMessageHandler: (() => void) | undefined;
  private closeHandlers: ((reason: string | undefined) => void)[] = [];
  private closeReason: string | undefined;
  private ended = false;
  /** Bytes of the largest large message queued since the socket last drained, left out of the backlog. */
  private largeQueuedBytes = 0;

  constructor(socket: Socket) {
    this.socket = socket;
    socket.on('drain', () => (this.largeQueuedBytes = 0));
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => this.finish(undefined));
    socket.on('close', () => this.finish(undefined));
  }

  get closed(): boolean {
    return this.ended;
  }

  private receive(chunk: Buffer): void {
    if (this.ended) return;
    const results = this.decoder.push(chunk);
    if (results === 'overflow') {
      this.reject('line_too_long', 'a message exceeded the 1 MiB line limit');
      return;
    }
    for (const result of results) {
      if (this.ended) return;
      if (result.kind === 'malformed') {
        this.reject('malformed_message', `malformed JSON: ${result.reason}`);
        return;
      }
      const parsed = parseClientMessage(result.value);
      if (!parsed.ok) {
        this.reject(parsed.code, parsed.message);
        return;
      }
      const first = this.firstMessageHandler;
      this.firstMessageHandler = undefined;
      first?.();
      this.messageHandler(parsed.message);
    }
  }

  /** Tells the client why, then drops it. */
  private reject(code: string, message: string): void {
    this.closeReason = `${code}: ${message}`;
    this.send({ type: 'error', code, message });
    this.socket.end();
    this.socket.destroySoon();
    this.finish(this.closeReason);
  }

  send(message: ServerMessage<Payloads>): void {
    if (this.ended && message.type !== 'error') return;
    if (this.socket.destroyed || !this.socket.writable) return;
    const backlog = this.socket.writableLength - this.largeQueuedBytes;
    if (backlog > maxBacklogBytes) {
      this.closeReason =
        `client too slow: ${backlog} bytes unread, over the ${maxBacklogBytes / 1024 / 1024} MiB ` +
        `backlog a client may fall behind`;
      this.socket.destroy();
      this.finish(this.closeReason);
      return;
    }
    // Messages of one event-loop turn (a burst of streamed deltas) leave in one write.
    if (!this.socket.writableCorked) {
      this.socket.cork();
      process.nextTick(() => this.socket.uncork());
    }
    const line = encodeLine(message);
    // A UTF-16 unit is at most 3 UTF-8 bytes: only a long string can be a large message.
    if (line.length > MAX_LINE_BYTES / 3) {
      const bytes = Buffer.byteLength(line);
      if (bytes > MAX_LINE_BYTES) this.largeQueuedBytes = Math.max(this.largeQueuedBytes, bytes);
    }
    this.socket.write(line);
  }

  close(): void {
    if (!this.socket.destroyed) this.socket.end();
    this.finish(undefined);
  }

  onMessage(handler: (message: ClientMessage) => void): void {
    this.messageHandler = handler;
  }

  /** Called once, before the first valid message is handled. */
  onFirstMessage(handler: () => void): void {
    this.firstMessageHandler = handler;
  }

  onClose(handler: (reason: string | undefined) => void): void {
    if (this.ended) handler(this.closeReason);
    else this.closeHandlers.push(handler);
  }

  private finish(reason: string | undefined): void {
    if (this.ended) return;
    this.ended = true;
    for (const handler of this.closeHandlers) handler(reason ?? this.closeReason);
    this.closeHandlers = [];
  }
}

/**
 * Who may connect to a query server. A connection that has not sent a message yet is pending: it
 * must say hello within `pendingMilliseconds`, and when `maxPending` are waiting, a new connection
 * pushes out the oldest (a real client says hello at once; idle or hostile connections can never
 * lock one out). Beyond `maxClients` connections that did speak, a new one is refused with an
 * `error` message that says so. Every close tells the client why.
 */
export class ConnectionGate {
  private readonly pending = new Set<ClientConnection>();
  private readonly speaking = new Set<ClientConnection>();
  private readonly limits: { maxPending: number; maxClients: number; pendingMilliseconds: number };

  constructor(limits: { maxPending: number; maxClients: number; pendingMilliseconds: number }) {
    this.limits = limits;
  }

  /** Takes a new connection in (true), or refuses it with a message and closes it (false). */
  admit(connection: ClientConnection & { onFirstMessage(handler: () => void): void }): boolean {
    if (this.speaking.size >= this.limits.maxClients) {
      connection.send({
        type: 'error',
        code: 'too_many_clients',
        message:
          `refused: this query server already has ${this.speaking.size} clients connected; try again once one ` +
          `has left`,
      });
      connection.close();
      return false;
    }
    if (this.pending.size >= this.limits.maxPending) {
      const oldest = this.pending.values().next().value;
      if (oldest)
        this.drop(oldest, 'connection_idle', 'closed: this connection sent nothing while others waited to connect');
    }
    this.pending.add(connection);
    const timer = setTimeout(
      () =>
        this.drop(
          connection,
          'hello_timeout',
          `closed: no hello within ${this.limits.pendingMilliseconds / 1000} s of connecting`,
        ),
      this.limits.pendingMilliseconds,
    );
    connection.onFirstMessage(() => {
      clearTimeout(timer);
      if (!this.pending.delete(connection)) return;
      this.speaking.add(connection);
    });
    connection.onClose(() => {
      clearTimeout(timer);
      this.pending.delete(connection);
      this.speaking.delete(connection);
    });
    return true;
  }

  private drop(connection: ClientConnection, code: string, message: string): void {
    this.pending.delete(connection);
    connection.send({ type: 'error', code, message });
    connection.close();
  }
}

/**
 * An in-memory link for the in-process path. Messages cross it as JSON text, asynchronously and in
 * order, exactly as they would cross a socket.
 */
export function createInMemoryPair(): { server: ClientConnection; client: ServerLink<RunPayloads> } {
  let toClient: (message: ServerMessage<RunPayloads>) => void = () => {};
  let toServer: (message: ClientMessage) => void = () => {};
  const clientCloseHandlers: (() => void)[] = [];
  const serverCloseHandlers: ((reason: string | undefined) => void)[] = [];
  let ended = false;
  const queue: (() => void)[] = [];
  let scheduled = false;
  const deliver = (task: () => void): void => {
    queue.push(task);
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      for (const next of queue.splice(0)) next();
    });
  };
  const end = (): void => {
    if (ended) return;
    ended = true;
    deliver(() => {
      for (const handler of serverCloseHandlers) handler(undefined);
      for (const handler of clientCloseHandlers) handler();
    });
  };
  const server: ClientConnection = {
    id: nextConnectionId++,
    get closed() {
      return ended;
    },
    send(message) {
      if (ended) return;
      const text = JSON.stringify(message);
      deliver(() => {
        const received = parseServerMessage<RunPayloads>(JSON.parse(text));
        if (received) toClient(received);
      });
    },
    close: end,
    onMessage(handler) {
      toServer = handler;
    },
    onClose(handler) {
      serverCloseHandlers.push(handler);
    },
  };
  const client: ServerLink<RunPayloads> = {
    send(message) {
      if (ended) return;
      const text = JSON.stringify(message);
      deliver(() => {
        const parsed = parseClientMessage(JSON.parse(text));
        if (parsed.ok) toServer(parsed.message);
      });
    },
    onMessage(handler) {
      toClient = handler;
    },
    onClose(handler) {
      clientCloseHandlers.push(handler);
    },
    close: end,
  };
  return { server, client };
}
