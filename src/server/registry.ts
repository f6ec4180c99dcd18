/**
 * The process registry (DESIGN §8): `processes/<cid>.json` for every running query server, written
 * by the server after its socket listens and removed when it exits, and beside it the run's
 * capability (`processes/<cid>.capability`, 0600): the secret a client shows in its hello to be let
 * in (client-roles.ts). Only a process that can read jp's private state can read it: the client
 * that starts the run gets it on the server's readiness pipe; `attach`, `wait` and `kill` (and any
 * later client of the protocol started by the user, such as a browser or SSH bridge) read this file. Liveness is pid
 * plus start time; an entry whose process is gone is stale and is cleaned up on sight, with its socket and any tool
 * process groups it recorded that still run.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { killMarkedProcesses } from '../tools/marked-processes.ts';
import { readRegularFile, writeFileAtomic } from '../workspace/files.ts';
import { isSameProcessAlive, processStartTime } from '../workspace/process-identity.ts';

export interface ToolProcessGroup {
  pgid: number;
  start_time: string;
  /** The JP_TOOL_PROCESS value of the group's processes, which escaped ones keep too. */
  marker?: string;
}

export interface RegistryEntry {
  conversation_id: string;
  pid: number;
  start_time: string;
  /** null for an in-process (`--no-server`) run, which has no socket. */
  socket_path: string | null;
  started_at: string;
  version: string;
  protocol_version: number;
  detached: boolean;
  /** Per-run log with the server's stdout and stderr. */
  log_file: string | null;
  tool_process_groups: ToolProcessGroup[];
  /**
   * The run's own process group when it leads one (a spawned server: its pid), else null. The run's
   * MCP servers are in it; `kill --force` signals the whole group, so they die with the run.
   */
  process_group?: number | null;
  /** Set once the run started a tool subprocess: the prefix of every JP_TOOL_PROCESS value it gave out. */
  tool_marker?: string;
}

export function entryFile(processesDirectory: string, conversationId: string): string {
  return path.join(processesDirectory, `${conversationId}.json`);
}

export function capabilityFile(processesDirectory: string, conversationId: string): string {
  return path.join(processesDirectory, `${conversationId}.capability`);
}

/** A new run capability: 32 random bytes, base64url. */
export function newCapability(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Writes the run's capability, 0600, never through a symlink; one left by a dead run of the same
 * conversation is replaced (the caller holds the conversation's lock). Not synced: it means nothing
 * once the run is gone.
 */
export function writeCapability(processesDirectory: string, conversationId: string, capability: string): void {
  const file = capabilityFile(processesDirectory, conversationId);
  removeQuietly(file);
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, `${capability}\n`);
  } finally {
    closeSync(fd);
  }
}

/** The capability of a running conversation, or undefined when its file is missing or not one. */
export function readCapability(processesDirectory: string, conversationId: string): string | undefined {
  try {
    const text = readRegularFile(capabilityFile(processesDirectory, conversationId), 1024)?.toString('utf8').trim();
    return text && /^[A-Za-z0-9_-]{16,256}$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

export function writeEntry(processesDirectory: string, entry: RegistryEntry): void {
  writeFileAtomic(entryFile(processesDirectory, entry.conversation_id), JSON.stringify(entry, null, 2) + '\n');
}

/** Removes the entry and its socket, but only if the entry is ours (same pid and start time). */
export function removeOwnEntry(processesDirectory: string, entry: RegistryEntry): void {
  const current = readEntry(processesDirectory, entry.conversation_id);
  if (current && (current.pid !== entry.pid || current.start_time !== entry.start_time)) return;
  removeQuietly(entryFile(processesDirectory, entry.conversation_id));
  removeQuietly(capabilityFile(processesDirectory, entry.conversation_id));
  if (entry.socket_path) removeQuietly(entry.socket_path);
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

export function readEntry(processesDirectory: string, conversationId: string): RegistryEntry | undefined {
  try {
    const entry = JSON.parse(
      readRegularFile(entryFile(processesDirectory, conversationId))?.toString('utf8') ?? '',
    ) as RegistryEntry;
    if (typeof entry.pid === 'number' && typeof entry.start_time === 'string') return entry;
  } catch {
    // missing or damaged: not running as far as the registry knows
  }
  return undefined;
}

export function isEntryAlive(entry: RegistryEntry): boolean {
  return isSameProcessAlive(entry.pid, entry.start_time);
}

/**
 * Kills what the tools of a run left running: their process groups (each checked by its leader's
 * start time), and every process still carrying one of the run's markers, which finds those that
 * left their group (see marked-processes.ts for what stays out of reach).
 */
export function killToolProcesses(entry: RegistryEntry): void {
  for (const group of entry.tool_process_groups ?? []) {
    if (processStartTime(group.pgid) !== group.start_time) continue;
    try {
      process.kill(-group.pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (typeof entry.tool_marker === 'string' && entry.tool_marker !== '')
    killMarkedProcesses(entry.tool_marker, { prefix: true });
}

/** Removes a stale entry (its process is gone): the JSON file, the socket, orphaned tool groups. */
export function cleanStaleEntry(processesDirectory: string, entry: RegistryEntry): void {
  killToolProcesses(entry);
  removeQuietly(entryFile(processesDirectory, entry.conversation_id));
  removeQuietly(capabilityFile(processesDirectory, entry.conversation_id));
  if (entry.socket_path) removeQuietly(entry.socket_path);
}

/** The live entry of a conversation; a stale one is cleaned up and reported as absent. */
export function liveEntry(processesDirectory: string, conversationId: string): RegistryEntry | undefined {
  const entry = readEntry(processesDirectory, conversationId);
  if (!entry) return undefined;
  if (isEntryAlive(entry)) return entry;
  cleanStaleEntry(processesDirectory, entry);
  return undefined;
}

/** Every live entry, by conversation id; stale ones are cleaned up on the way. */
export function liveEntries(processesDirectory: string): Map<string, RegistryEntry> {
  const live = new Map<string, RegistryEntry>();
  let names: string[];
  try {
    names = readdirSync(processesDirectory);
  } catch {
    return live;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const conversationId = name.slice(0, -'.json'.length);
    const entry = liveEntry(processesDirectory, conversationId);
    if (entry) live.set(conversationId, entry);
  }
  return live;
}

/** A per-run log is kept this long after its run (it says why a run ended badly); empty ones go at once. */
export const runLogRetentionMilliseconds = 7 * 24 * 60 * 60 * 1000;

/**
 * Removes the per-run logs (`<cid>.log`) whose run is over and that say nothing, are older than
 * the retention, or belong to a conversation that no longer exists. A log whose conversation is
 * locked is left alone: its run may be starting.
 */
export function sweepRunLogs(
  processesDirectory: string,
  conversation: { isLocked(id: string): boolean; exists(id: string): boolean },
  now = Date.now(),
): void {
  let names: string[];
  try {
    names = readdirSync(processesDirectory);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.log')) continue;
    const conversationId = name.slice(0, -'.log'.length);
    if (conversation.isLocked(conversationId)) continue;
    const file = path.join(processesDirectory, name);
    try {
      const stat = statSync(file);
      if (stat.size === 0 || now - stat.mtimeMs > runLogRetentionMilliseconds || !conversation.exists(conversationId))
        unlinkSync(file);
    } catch {
      // removed meanwhile
    }
  }
}
