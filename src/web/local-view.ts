/**
 * A view of one conversation of this machine, as `attach` sees it (DESIGN §8): history from disk up
 * to the server's event count, the server's buffer of streamed text, then live messages; nothing
 * twice, nothing missed. A conversation with no run is its log, and the inquiries a deferred run
 * waits on. A prompting view that finds another client prompting watches instead, and says so.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { readEventLog } from '../conversation/reader.ts';
import { eventsFile } from '../conversation/store.ts';
import { findIncompleteTurn } from '../conversation/turn-state.ts';
import { connectToServer } from '../client/socket-link.ts';
import type { ServerLink } from '../protocol/link.ts';
import { PROTOCOL_VERSION, type ClientMessage } from '../protocol/messages.ts';
import type { RunPayloads } from '../report/payloads.ts';
import { liveEntry, readCapability } from '../server/registry.ts';
import { userSubdirectory, type Workspace } from '../workspace/workspace.ts';
import { historyBatch, type OpenRequest, type PendingInquiry, type ViewHandle, type ViewMessage } from './types.ts';

/** Sends the events of seq `from` up to `to` (excluded) in batches. */
function sendHistory(
  events: readonly ConversationEvent[],
  from: number,
  to: number,
  sink: (message: ViewMessage) => void,
): void {
  for (let start = from; start < to; start += historyBatch)
    sink({ type: 'events', from: start, events: events.slice(start, Math.min(to, start + historyBatch)) });
}

/** The inquiries the conversation's incomplete turn waits on, from its log. */
export function pendingInquiries(events: readonly ConversationEvent[]): PendingInquiry[] {
  return (findIncompleteTurn(events)?.pendingInquiries ?? []).map((event) => ({
    id: event.id,
    tool_call_id: event.tool_call_id,
    inquiry: event.inquiry,
  }));
}

export function openLocalView(
  workspace: Workspace,
  request: OpenRequest,
  sink: (message: ViewMessage) => void,
): ViewHandle {
  let link: ServerLink<RunPayloads> | undefined;
  let closed = false;
  const finish = (message: Extract<ViewMessage, { type: 'closed' }>): void => {
    if (closed) return;
    closed = true;
    sink(message);
  };
  const file = eventsFile(workspace.conversationsDirectory, request.conversation);
  const fromDisk = (): void => {
    const { events } = readEventLog(file);
    sink({
      type: 'opened',
      conversation_id: request.conversation,
      running: false,
      prompting: false,
      event_count: events.length,
    });
    sendHistory(events, request.from, events.length, sink);
    const pending = pendingInquiries(events);
    if (pending.length > 0) sink({ type: 'pending', inquiries: pending });
    finish({ type: 'closed', reason: 'not running' });
  };
  const attach = async (prompt: boolean): Promise<void> => {
    const processes = userSubdirectory(workspace, 'processes');
    const entry = liveEntry(processes, request.conversation);
    // The run's capability, from jp's private state, as `attach` reads it (DESIGN §8).
    const capability = readCapability(processes, request.conversation);
    if (!entry?.socket_path || capability === undefined) return fromDisk();
    try {
      link = await connectToServer(entry.socket_path);
    } catch {
      return fromDisk();
    }
    if (closed) return link.close();
    const current = link;
    let greeted = false;
    current.onMessage((message) => {
      if (closed) return;
      switch (message.type) {
        case 'hello': {
          greeted = true;
          sink({
            type: 'opened',
            conversation_id: request.conversation,
            running: true,
            prompting: message.prompting,
            event_count: message.event_count,
          });
          const { events } = readEventLog(file);
          sendHistory(events, request.from, Math.min(message.event_count, events.length), sink);
          if (message.partial.reasoning) sink({ type: 'delta', kind: 'reasoning', text: message.partial.reasoning });
          if (message.partial.message) sink({ type: 'delta', kind: 'message', text: message.partial.message });
          return;
        }
        case 'event':
          if (message.seq >= request.from) sink({ type: 'event', seq: message.seq, event: message.event });
          return;
        case 'delta':
          if (typeof message.event.message === 'string')
            sink({ type: 'delta', kind: 'message', text: message.event.message });
          else if (typeof message.event.reasoning === 'string')
            sink({ type: 'delta', kind: 'reasoning', text: message.event.reasoning });
          return;
        case 'inquiry':
          sink({ type: 'inquiry', id: message.id, inquiry: message.inquiry, if_detached: message.if_detached });
          return;
        case 'inquiry_resolved':
        case 'interrupt_menu':
        case 'notice':
        case 'turn_complete':
          sink(message);
          return;
        case 'error':
          if (!greeted && message.code === 'prompting_client_attached' && prompt) {
            // Another client answers this run's prompts: watch instead.
            current.onClose(() => void attach(false));
            return;
          }
          if (!greeted && message.code === 'run_finished') {
            current.onClose(() => fromDisk());
            return;
          }
          finish({ type: 'closed', reason: 'refused', error: { code: message.code, message: message.message } });
          return;
        case 'file_request':
        case 'process_exiting':
          return;
      }
    });
    current.onClose(() => {
      if (current === link && greeted) finish({ type: 'closed', reason: 'the run ended' });
    });
    current.send({
      type: 'hello',
      version: PROTOCOL_VERSION,
      capability,
      can_prompt: prompt,
      read_only: !prompt,
      client: request.client,
    });
  };
  void attach(request.prompt).catch((error: unknown) =>
    finish({ type: 'closed', reason: 'failed', error: { code: 'view_failed', message: (error as Error).message } }),
  );
  return {
    send(message: ClientMessage) {
      if (!closed) link?.send(message);
    },
    close() {
      if (closed) return;
      closed = true;
      // An attached client goes away without deciding anything for the run.
      link?.send({ type: 'disconnect' });
      link?.close();
    },
  };
}
