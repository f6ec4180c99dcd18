/**
 * `jp web --stdio`: this machine's runs served to a `jp web` elsewhere, over stdin and stdout (an
 * SSH session it started: nothing listens on the network). It speaks source-protocol.ts; what it
 * is sent is checked as untrusted input, and a client message for a run is checked as a server
 * checks a client's (one hello per connection is jp's own, never the peer's).
 */
import { parseClientMessage } from '../protocol/client-messages.ts';
import { encodeLine, LineDecoder, MAX_LINE_BYTES } from '../protocol/framing.ts';
import type { LocalSource } from './local-source.ts';
import { parseSourceRequest, sourceProtocolVersion, type SourceReply } from './source-protocol.ts';
import type { ViewHandle } from './types.ts';

export function serveSourceOverStdio(
  source: LocalSource,
  input: NodeJS.ReadableStream,
  write: (text: string) => void,
): Promise<void> {
  const send = (reply: SourceReply | { type: 'hello'; protocol: string; version: number }): void =>
    write(encodeLine(reply));
  const views = new Map<string, ViewHandle>();
  let unwatch: (() => void) | undefined;
  const decoder = new LineDecoder(MAX_LINE_BYTES);
  send({ type: 'hello', protocol: 'jp-web-source', version: sourceProtocolVersion });
  return new Promise((resolve) => {
    const finish = (): void => {
      unwatch?.();
      for (const view of views.values()) view.close();
      views.clear();
      source.close();
      resolve();
    };
    input.on('data', (chunk: Buffer) => {
      const results = decoder.push(chunk);
      if (results === 'overflow') {
        finish();
        return;
      }
      for (const result of results) {
        if (result.kind !== 'message') continue;
        const request = parseSourceRequest(result.value);
        if (!request) continue;
        switch (request.op) {
          case 'watch':
            unwatch ??= source.watch(
              (runs) => send({ type: 'list', runs }),
              () => {},
            );
            break;
          case 'open': {
            if (views.has(request.view)) break;
            const { view, op: _op, ...open } = request;
            views.set(
              view,
              source.open(open, (message) => {
                send({ type: 'view', view, message });
                if (message.type === 'closed') views.delete(view);
              }),
            );
            break;
          }
          case 'send': {
            const parsed = parseClientMessage(request.message);
            if (parsed.ok && parsed.message.type !== 'hello') views.get(request.view)?.send(parsed.message);
            break;
          }
          case 'close':
            views.get(request.view)?.close();
            views.delete(request.view);
            break;
          case 'continue':
          case 'kill':
          case 'diff': {
            const id = request.id;
            const reference = { workspace: request.workspace, conversation: request.conversation };
            const done =
              request.op === 'continue'
                ? source.continueRun({ ...request, ...reference })
                : request.op === 'kill'
                  ? source.kill(reference)
                  : source
                      .diff(reference, typeof request.turn === 'number' ? request.turn : undefined)
                      .then(({ ok, text }) => ({ ok, message: text }));
            void done
              .catch((error: unknown) => ({ ok: false, message: (error as Error).message }))
              .then(({ ok, message }) => send({ type: 'reply', id, ok, message }));
            break;
          }
        }
      }
    });
    input.on('end', finish);
    input.on('error', finish);
  });
}
