/**
 * The client's end of a Unix socket to a query server.
 */
import net from 'node:net';
import { JpError, RunError } from '../errors.ts';
import { encodeLine, LineDecoder, SERVER_LINE_BYTES } from '../protocol/framing.ts';
import type { ServerLink } from '../protocol/link.ts';
import { parseServerMessage, type ClientMessage, type ServerMessage } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';

export function connectToServer(socketPath: string, timeoutMilliseconds = 5000): Promise<ServerLink<RunPayloads>> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new RunError('server_unreachable', `the query server socket ${socketPath} did not accept a connection in time`),
      );
    }, timeoutMilliseconds);
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        JpError.isInstance(error)
          ? error
          : new RunError(
              'server_unreachable',
              `cannot connect to the query server at ${socketPath}: ${error.code ?? error.message}`,
              { cause: error },
            ),
      );
    });
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socketLink(socket));
    });
  });
}

function socketLink(socket: net.Socket): ServerLink<RunPayloads> {
  const decoder = new LineDecoder(SERVER_LINE_BYTES);
  let messageHandler: (message: ServerMessage<RunPayloads>) => void = () => {};
  const closeHandlers: (() => void)[] = [];
  let closed = false;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    for (const handler of closeHandlers) handler();
  };
  socket.on('data', (chunk: Buffer) => {
    const results = decoder.push(chunk);
    if (results === 'overflow') {
      socket.destroy();
      return;
    }
    for (const result of results) {
      if (result.kind !== 'message') continue;
      const message = parseServerMessage<RunPayloads>(result.value);
      if (message) messageHandler(message);
    }
  });
  socket.on('error', () => finish());
  socket.on('close', () => finish());
  return {
    send(message: ClientMessage) {
      if (!closed && socket.writable) socket.write(encodeLine(message));
    },
    onMessage(handler) {
      messageHandler = handler;
    },
    onClose(handler) {
      if (closed) handler();
      else closeHandlers.push(handler);
    },
    close() {
      socket.end();
    },
  };
}
