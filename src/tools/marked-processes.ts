/**
 * Finding the processes a tool started after they left its process group (`setsid`, a daemon's
 * double fork): every tool subprocess gets a marker in its environment, `JP_TOOL_PROCESS=<run>.<n>`,
 * which its descendants inherit wherever they go. On Linux, /proc/<pid>/environ of the user's own
 * processes shows it. What stays out of reach: a process that cleared or replaced its environment
 * (`env -i`), a process of another user, and every escaped process on systems without /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const markerVariable = 'JP_TOOL_PROCESS';

/**
 * Pids of this user's processes whose environment has JP_TOOL_PROCESS equal to `marker`, or starting with `marker` +
 * "." when `prefix`.
 */
export function markedProcesses(marker: string, options: { prefix?: boolean } = {}): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = Buffer.from(`\0${markerVariable}=${marker}${options.prefix ? '.' : '\0'}`);
  const found: number[] = [];
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environment: Buffer;
    try {
      environment = readFileSync(`/proc/${entry}/environ`);
    } catch {
      continue; // another user's process, or it ended while we looked
    }
    // A leading NUL lets the first variable match like the others.
    if (Buffer.concat([Buffer.from([0]), environment, Buffer.from([0])]).includes(needle)) found.push(pid);
  }
  return found;
}

/** SIGKILLs every process `markedProcesses` finds; returns how many it signalled. */
export function killMarkedProcesses(marker: string, options: { prefix?: boolean } = {}): number {
  let killed = 0;
  for (const pid of markedProcesses(marker, options)) {
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // gone already
    }
  }
  return killed;
}
