/**
 * `jp conversation attach [<cid>] [--tail=N] [--read-only]`: connects a terminal to a running
 * query server: history from disk, the server's buffer, then live events; inquiries come to this
 * terminal while it is the prompting client. Exits with the run's exit code when the run ends
 * while attached, 0 when detached with Ctrl+Z.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { readEventLog } from '../../conversation/reader.ts';
import { eventsFile } from '../../conversation/store.ts';
import { conversationStatus, formatStatus } from '../../conversation/turn-state.ts';
import { createRenderer } from '../../client/create-renderer.ts';
import { connectToServer } from '../../client/socket-link.ts';
import type { HistoryMode } from '../../client/terminal-client.ts';
import { RunError, UsageError } from '../../errors.ts';
import { capabilityFile, liveEntry, readCapability, type RegistryEntry } from '../../server/registry.ts';
import { isSameProcessAlive } from '../../workspace/process-identity.ts';
import type { Workspace } from '../../workspace/workspace.ts';
import { userSubdirectory } from '../../workspace/workspace.ts';
import type { CommandContext } from '../context.ts';
import { targetConversation } from '../../conversation/targets.ts';
import { createTerminalClient, finishOutcome, withClientSignals } from '../client-session.ts';
import { watchedLive } from '../facts.ts';

/**
 * The run's capability, read from jp's private state (DESIGN §8): what lets this client in. A run
 * that has none there (it ended meanwhile, or its file was removed) is said to be unreachable.
 */
export function requireCapability(workspace: Workspace, conversationId: string): string {
  const processes = userSubdirectory(workspace, 'processes');
  const capability = readCapability(processes, conversationId);
  if (capability !== undefined) return capability;
  requireRunning(workspace, conversationId);
  throw new RunError(
    'capability_missing',
    `cannot attach to ${conversationId}: its capability file ${capabilityFile(processes, conversationId)} is missing ` +
      `or damaged`,
    {
      hint:
        `The run goes on; stop it with \`jp conversation kill ${conversationId}\` and resume it ` +
        `with \`jp query --continue --id=${conversationId}\`.`,
    },
  );
}

/** The live server of a conversation, or an error that says what to do instead. */
export function requireRunning(workspace: Workspace, conversationId: string): RegistryEntry & { socket_path: string } {
  const entry = liveEntry(userSubdirectory(workspace, 'processes'), conversationId);
  if (entry?.socket_path) return entry as RegistryEntry & { socket_path: string };
  if (entry) {
    throw new RunError(
      'not_attachable',
      `${conversationId} runs in-process in pid ${entry.pid} (--no-server) and has no socket to attach to`,
    );
  }
  const status = conversationStatus(readEventLog(eventsFile(workspace.conversationsDirectory, conversationId)).events);
  if (status.kind === 'idle') {
    throw new RunError(
      'not_running',
      `no running process for ${conversationId}, and its last turn is complete (idle)`,
      {
        hint:
          `Show it with \`jp conversation print ${conversationId}\`, or continue it ` +
          `with \`jp query --id=${conversationId} "..."\`.`,
      },
    );
  }
  throw new RunError(
    'not_running',
    `no running process for ${conversationId}; it has an incomplete turn: ${formatStatus(status)}`,
    {
      hint: `Resume it with: jp query --continue --id=${conversationId}`,
    },
  );
}

function parseTail(value: string | undefined): HistoryMode {
  if (value === undefined) return 'current-turn';
  if (!/^\d+$/.test(value))
    throw new UsageError('flag_invalid', `--tail ${JSON.stringify(value)} is not a non-negative integer`);
  return { tail: Number(value) };
}

export async function conversationAttachCommand(
  context: CommandContext,
  id: string | undefined,
  options: { tail?: string; readOnly?: boolean },
): Promise<number> {
  const workspace = context.workspace();
  const history = parseTail(options.tail);
  const conversationId = targetConversation(workspace, context.facts.environment, id);
  const entry = requireRunning(workspace, conversationId);
  const capability = requireCapability(workspace, conversationId);
  const readOnly = options.readOnly ?? false;
  const renderer = await createRenderer({
    format: context.format,
    stdout: context.stdout,
    stderr: context.stderr,
    environment: context.facts.environment,
    conversationId,
    quiet: context.globals.quiet,
    interactive: watchedLive(context.facts),
    interruptHint: readOnly ? 'Ctrl+C to leave' : 'Ctrl+C to interrupt',
    configuredTheme: () => context.configuredTheme(),
    mayQueryTerminal: watchedLive(context.facts),
  });
  let link: Awaited<ReturnType<typeof connectToServer>>;
  try {
    link = await connectToServer(entry.socket_path);
  } catch (error) {
    // The server ended as we connected: say what is true now.
    requireRunning(workspace, conversationId);
    throw error;
  }
  const client = createTerminalClient(context, {
    link,
    renderer,
    conversationId,
    readOnly,
    owner: false,
    capability,
    history,
  });
  const outcome = await withClientSignals(context, client, true, () => client.run());
  // A server that ends as this attach connects closes without a word: say what is true now. A dying
  // process closes its socket before the kernel shows it dead, so give its end up to a second to show.
  if (outcome.kind === 'lost' && outcome.serverPid === undefined) {
    for (let waited = 0; waited < 1000 && isSameProcessAlive(entry.pid, entry.start_time); waited += 20)
      await sleep(20);
    requireRunning(workspace, conversationId);
  }
  return finishOutcome(renderer, outcome, conversationId, {
    text: '',
    model: null,
    startedAt: Date.now(),
    secrets: context.secrets,
  });
}
