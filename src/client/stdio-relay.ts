/**
 * A client of a query server for another program: it relays the protocol (DESIGN §8) between the
 * server and a pair of byte streams (jp's stdin and stdout), one NDJSON message per line. The
 * program speaks first, a hello as any client's; the relay sends it on with what only jp knows or
 * decides (the version, the run's capability, the ownership of a run it started); the program
 * never learns the capability. What the program sends is checked as a
 * server checks a client's messages (one hello, the line cap); what the server sends is passed on
 * whole. `jp query --stdio` is this client (`jp web` continues a deferred run through it).
 *
 * When the program's stream ends without a `disconnect`, the relay closes the connection as a
 * client that went away: for the owner of a run that stops the run (saved, resumable).
 */
import { parseClientMessage } from '../protocol/client-messages.ts';
import { encodeLine, LineDecoder, MAX_LINE_BYTES } from '../protocol/framing.ts';
import type { ServerLink } from '../protocol/link.ts';
import type { ClientHello } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';

export interface RelayStreams {
  input: NodeJS.ReadableStream;
  write(text: string): void;
}

/** How the relayed connection ended: the run's exit code when it finished, 0 detached, 1 lost. */
export function relayOverStreams(
  link: ServerLink<RunPayloads>,
  completeHello: (hello: ClientHello) => ClientHello,
  streams: RelayStreams,
): Promise<number> {
  return new Promise((resolve) => {
    let exitCode = 1;
    let detached = false;
    let greeted = false;
    const decoder = new LineDecoder(MAX_LINE_BYTES);
    const onData = (chunk: Buffer | string): void => {
      const results = decoder.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (results === 'overflow') {
        link.close();
        return;
      }
      for (const result of results) {
        if (result.kind !== 'message') continue;
        const parsed = parseClientMessage(result.value);
        if (!parsed.ok) continue;
        if (parsed.message.type === 'hello') {
          if (!greeted) link.send(completeHello(parsed.message));
          greeted = true;
          continue;
        }
        if (!greeted) continue;
        if (parsed.message.type === 'disconnect') detached = true;
        link.send(parsed.message);
      }
    };
    const onEnd = (): void => link.close();
    link.onMessage((message) => {
      if (message.type === 'turn_complete') {
        exitCode = message.result.exit_code;
      }
      streams.write(encodeLine(message));
    });
    link.onClose(() => {
      streams.input.off('data', onData);
      streams.input.off('end', onEnd);
      resolve(detached && exitCode === 1 ? 0 : exitCode);
    });
    streams.input.on('data', onData);
    streams.input.on('end', onEnd);
  });
}
