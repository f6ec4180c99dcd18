/**
 * `jp conversation wait [<cid>]` (default: the active conversation): blocks until the conversation's run stops, then
 * exits with that run's exit code (0, 3, 4, ...), so scripts can `cid=$(jp query --detach ...); jp conversation wait
 * "$cid"`.
 * It watches as a read-only client; if the server is already gone, the code is derived from the log.
 */
import { readEventLog } from '../../conversation/reader.ts';
import { eventsFile } from '../../conversation/store.ts';
import { connectToServer } from '../../client/socket-link.ts';
import { PROTOCOL_VERSION } from '../../protocol/messages.ts';
import { isEntryAlive, liveEntry, readCapability } from '../../server/registry.ts';
import { exitCodeFromLog, type ResultObject } from '../../report/result.ts';
import { userSubdirectory } from '../../workspace/workspace.ts';
import type { CommandContext } from '../context.ts';
import { targetConversation } from '../../conversation/targets.ts';

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/** Resolves with the run's result, or undefined when the connection ends without one. */
async function watch(socketPath: string, capability: string): Promise<ResultObject | undefined> {
  let link: Awaited<ReturnType<typeof connectToServer>>;
  try {
    link = await connectToServer(socketPath);
  } catch {
    return undefined;
  }
  return new Promise((resolve) => {
    link.onMessage((message) => {
      if (message.type === 'turn_complete') resolve(message.result);
    });
    link.onClose(() => resolve(undefined));
    link.send({ type: 'hello', version: PROTOCOL_VERSION, capability, can_prompt: false, read_only: true });
  });
}

export async function conversationWaitCommand(context: CommandContext, id: string | undefined): Promise<number> {
  const workspace = context.workspace();
  const conversationId = targetConversation(workspace, context.facts.environment, id);
  const processes = userSubdirectory(workspace, 'processes');
  const entry = liveEntry(processes, conversationId);
  if (entry) {
    // Without its capability (the file went with the run), the process is watched instead.
    const capability = readCapability(processes, conversationId);
    const result = entry.socket_path && capability ? await watch(entry.socket_path, capability) : undefined;
    if (result) return report(context, conversationId, result.exit_code, result.status);
    while (isEntryAlive(entry)) await sleep(50);
  }
  const derived = exitCodeFromLog(readEventLog(eventsFile(workspace.conversationsDirectory, conversationId)).events);
  return report(context, conversationId, derived.exitCode, derived.description);
}

function report(context: CommandContext, conversationId: string, exitCode: number, description: string): number {
  if (context.format === 'json')
    context.jsonLine(context.stdout, 'wait_result', { exit_code: exitCode, status: description }, conversationId);
  else context.status(`${conversationId}: ${description} (exit ${exitCode})`);
  return exitCode;
}
