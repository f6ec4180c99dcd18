import type { ClientMessage, ServerMessage } from './messages.ts';

/** The client's end of a link to a query server, over a socket or in memory. */
export interface ServerLink {
  send(message: ClientMessage): void;
  onMessage(handler: (message: ServerMessage) => void): void;
  /** Called once when the link ends, whichever side ended it. */
  onClose(handler: () => void): void;
  close(): void;
}
