/**
 * `jp conversation kill [<cid>] [--force]` (default: the active conversation). Graceful: a `shutdown` message; the
 * server persists, ends the turn as interrupted (resumable), kills its tool process groups and exits. `--force`:
 * SIGKILL to the registered pid (to its whole process group when it leads one: its MCP servers are
 * in it) after checking its start time, then to the tool process groups it recorded and to the
 * processes that left those groups but still carry the run's marker (killToolProcesses), and the
 * stale entry, socket and lock are cleaned up. The turn stays resumable.
 * A conversation that is not running is already stopped: exit 0 (a stale entry is cleaned up
 * silently).
 */
import { connectToServer } from '../../client/socket-link.ts';
import { RunError } from '../../errors.ts';
import { PROTOCOL_VERSION } from '../../protocol/messages.ts';
import { cleanStaleEntry, isEntryAlive, liveEntry, readCapability, readEntry } from '../../server/registry.ts';
import { removeDeadLock, runningByLock, type LockOwner } from '../../workspace/lock.ts';
import { isSameProcessAlive } from '../../workspace/process-identity.ts';
import { userSubdirectory } from '../../workspace/workspace.ts';
import type { CommandContext } from '../context.ts';
import { targetConversation } from '../../conversation/targets.ts';

const gracefulWaitMilliseconds = 10_000;

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

async function waitForExit(pid: number, startTime: string, milliseconds: number): Promise<boolean> {
  const deadline = Date.now() + milliseconds;
  while (Date.now() < deadline) {
    if (!isSameProcessAlive(pid, startTime)) return true;
    await sleep(25);
  }
  return !isSameProcessAlive(pid, startTime);
}

export async function conversationKillCommand(
  context: CommandContext,
  id: string | undefined,
  options: { force?: boolean },
): Promise<number> {
  const workspace = context.workspace();
  const conversationId = targetConversation(workspace, context.facts.environment, id);
  const processes = userSubdirectory(workspace, 'processes');
  const recorded = readEntry(processes, conversationId);
  const entry = liveEntry(processes, conversationId);
  if (!entry) {
    const holder = runningByLock(userSubdirectory(workspace, 'locks'), conversationId);
    if (holder) return killByLock(context, conversationId, holder, options.force === true);
    // Stopping what is not running is done already: a stale entry (its process died) was just
    // cleaned up, silently (RFD 024); with no entry at all, one line says so.
    removeDeadLock(userSubdirectory(workspace, 'locks'), conversationId);
    if (!recorded) context.status(`${conversationId} is not running; nothing to stop.`);
    return 0;
  }
  if (options.force) {
    // The server first: killed tools first, it could still record their end and go on with the turn.
    if (isEntryAlive(entry)) {
      try {
        // A server that leads its process group takes the group with it (its MCP servers are in it).
        if (entry.process_group === entry.pid) process.kill(-entry.pid, 'SIGKILL');
        else process.kill(entry.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await waitForExit(entry.pid, entry.start_time, 2000);
    // Its tools (killToolProcesses), and its entry, socket and lock.
    cleanStaleEntry(processes, entry);
    removeDeadLock(userSubdirectory(workspace, 'locks'), conversationId);
    context.status(
      `Killed pid ${entry.pid} (${conversationId}). The turn is saved; resume it ` +
        `with \`jp query --continue --id=${conversationId}\`.`,
    );
    return 0;
  }
  // Through the socket when the run's capability can be read (DESIGN §8); else SIGTERM, which
  // stops it the same way (persisted, resumable).
  const capability = readCapability(processes, conversationId);
  if (!entry.socket_path || capability === undefined) {
    process.kill(entry.pid, 'SIGTERM');
  } else {
    const link = await connectToServer(entry.socket_path);
    link.send({ type: 'hello', version: PROTOCOL_VERSION, capability, can_prompt: false, kill: true });
    link.send({ type: 'shutdown', reason: 'user' });
  }
  if (!(await waitForExit(entry.pid, entry.start_time, gracefulWaitMilliseconds))) {
    throw new RunError(
      'kill_timeout',
      `pid ${entry.pid} (${conversationId}) did not stop within ${gracefulWaitMilliseconds / 1000} s`,
      {
        hint: `Force it: jp conversation kill --force ${conversationId}`,
      },
    );
  }
  context.status(
    `Stopped ${conversationId} (pid ${entry.pid}). The turn is saved; resume it ` +
      `with \`jp query --continue --id=${conversationId}\`.`,
  );
  return 0;
}

/**
 * A run whose registry entry is gone (its processes directory was removed) but whose lock shows it
 * alive: with no socket to reach it, SIGTERM stops it gracefully (persisted, resumable), and
 * --force SIGKILLs it (a query server with its process group, which it leads).
 */
async function killByLock(
  context: CommandContext,
  conversationId: string,
  holder: LockOwner,
  force: boolean,
): Promise<number> {
  try {
    if (force) process.kill(holder.role === 'server' ? -holder.pid : holder.pid, 'SIGKILL');
    else process.kill(holder.pid, 'SIGTERM');
  } catch {
    // gone already
  }
  if (!(await waitForExit(holder.pid, holder.start_time, force ? 2000 : gracefulWaitMilliseconds))) {
    throw new RunError(
      'kill_timeout',
      `pid ${holder.pid} (${conversationId}) did not stop within ${gracefulWaitMilliseconds / 1000} s`,
      {
        hint: `Force it: jp conversation kill --force ${conversationId}`,
      },
    );
  }
  if (force) removeDeadLock(userSubdirectory(context.workspace(), 'locks'), conversationId);
  context.status(
    `${force ? 'Killed' : 'Stopped'} ${conversationId} (pid ${holder.pid}, found by its lock: its registry entry was ` +
      `missing). The turn is saved; resume it with \`jp query --continue --id=${conversationId}\`.`,
  );
  return 0;
}
