/**
 * One prompt of a session as one run of its conversation, started and spoken to exactly as
 * `jp query` does (a query server, through the protocol of DESIGN §8): the lock, the run request
 * with the session's settings as flags, the server, the editor's run client, the stop reason.
 */
import path from 'node:path';
import type { StopReason } from '@agentclientprotocol/sdk';
import { connectToServer } from '../client/socket-link.ts';
import { readEventLog } from '../conversation/reader.ts';
import { eventsFile } from '../conversation/store.ts';
import { findIncompleteTurn } from '../conversation/turn-state.ts';
import type { ImageAttachment } from '../conversation/events.ts';
import { JpError } from '../errors.ts';
import type { Logger } from '../output/logger.ts';
import type { RunRequest } from '../protocol/run-request.ts';
import { resultQuery } from '../report/result.ts';
import { spawnServer } from '../server/spawn.ts';
import { acquireLock } from '../workspace/lock.ts';
import { userSubdirectory } from '../workspace/workspace.ts';
import type { EditorPeer } from './editor-peer.ts';
import { AcpRunClient } from './run-client.ts';
import type { Session } from './session.ts';
import { stopReasonOf, UpdateMapper } from './updates.ts';

export async function runPrompt(
  session: Session,
  message: string,
  images: ImageAttachment[],
  options: { peer: EditorPeer; logger: Logger },
): Promise<{ stopReason: StopReason }> {
  const sessionId = session.id;
  const { context, workspace } = session;
  const { logger } = options;
  const { trust, flags, contextWindowTokens } = await session.runSettings();
  if (session.cancelRequested) return { stopReason: 'cancelled' };
  const lock = acquireLock(userSubdirectory(workspace, 'locks'), sessionId, { waitSeconds: 0, role: 'client' });
  let request: RunRequest;
  try {
    const incomplete = findIncompleteTurn(readEventLog(eventsFile(workspace.conversationsDirectory, sessionId)).events);
    request = {
      conversation_id: sessionId,
      workspace: { root: workspace.root, is_default: workspace.isDefault, tool_root: workspace.toolRoot },
      cwd: session.cwd,
      // A prompt after a stopped turn (a cancel, a crash) is the user's reply to it, as Ctrl+C → reply.
      message: incomplete ? null : message,
      ...(incomplete ? { reply: message } : {}),
      ...(images.length > 0 ? { images } : {}),
      resume: incomplete !== undefined,
      discard_turn: false,
      detached: false,
      config: context.requestConfig(trust, flags),
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
  logger.info('acp: prompt', { session: sessionId, resume: request.resume, mode: session.settings.mode });
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
    peer: options.peer,
    mapper: new UpdateMapper(workspace.toolRoot, contextWindowTokens()),
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
