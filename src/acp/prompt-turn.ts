/**
 * One prompt of a session as one run of its conversation, started the one way every front end
 * starts one (launch/: the lock, the log read under it, the run request with the session's settings
 * as flags, a query server) and spoken to as `jp query` speaks to it (DESIGN §8): the editor's run
 * client, the stop reason.
 */
import type { StopReason } from '@agentclientprotocol/sdk';
import type { ImageAttachment } from '../conversation/events.ts';
import { findIncompleteTurn } from '../conversation/turn-state.ts';
import { JpError } from '../errors.ts';
import { prepareRun } from '../launch/prepare-run.ts';
import { startRun } from '../launch/start-run.ts';
import type { Logger } from '../output/logger.ts';
import { resultQuery } from '../report/result.ts';
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
  const prepared = await prepareRun({
    workspace,
    conversation: { id: sessionId, created: false },
    configuration: await context.runConfiguration(trust, flags),
    cwd: session.cwd,
    detached: false,
    tools: { noTools: false, enabled: [] },
    lock: { waitSeconds: 0, role: 'client' },
    log: context.logSettings(),
    query: resultQuery(message),
    startedAt: Date.now(),
    // A prompt after a stopped turn (a cancel, a crash) is the user's reply to it, as Ctrl+C → reply.
    turn: (events) => ({
      ...(findIncompleteTurn(events) ? { message: null, reply: message, resume: true } : { message, resume: false }),
      discard_turn: false,
      ...(images.length > 0 ? { images } : {}),
    }),
  });
  logger.info('acp: prompt', { session: sessionId, resume: prepared.request.resume, mode: session.settings.mode });
  const started = await startRun(prepared, {
    where: 'server',
    entry: context.programFile,
    environment: context.environment,
    shareStderr: prepared.request.log.file === '-' && prepared.request.log.verbosity > 0,
  });
  const client = new AcpRunClient({
    link: await started.connect(),
    peer: options.peer,
    mapper: new UpdateMapper(workspace.toolRoot, contextWindowTokens()),
    logger,
    conversationId: sessionId,
    capability: started.capability,
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
