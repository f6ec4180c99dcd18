/**
 * Process identity: a pid alone is no proof of life, pids are reused. A process is identified by
 * its pid plus its start time (and, on Linux, the boot it started in); a zombie counts as dead.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

let bootId: string | undefined;

function currentBootId(): string {
  if (bootId === undefined) {
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      bootId = '';
    }
  }
  return bootId;
}

interface ProcStat {
  state: string;
  processGroup: number;
  sessionId: number;
  ttyNumber: number;
  /** The foreground process group of the process's controlling terminal (-1: none). */
  terminalProcessGroup: number;
  startTicks: string;
}

/** Fields of /proc/<pid>/stat; undefined when the process does not exist or this is not Linux. */
export function readProcStat(pid: number | 'self'): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may itself contain spaces or parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return {
    state: fields[0]!,
    processGroup: Number(fields[2]),
    sessionId: Number(fields[3]),
    ttyNumber: Number(fields[4]),
    terminalProcessGroup: Number(fields[5]),
    startTicks: fields[19]!,
  };
}

const hasProc = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();

/** An opaque string that changes when the pid is reused; undefined when the process is gone. */
export function processStartTime(pid: number): string | undefined {
  if (hasProc) {
    const stat = readProcStat(pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') return undefined;
    return `${currentBootId()}:${stat.startTicks}`;
  }
  try {
    // Loaded only here, where there is no /proc: node:child_process costs every command ~5 ms to load.
    const { execFileSync } = createRequire(process.execPath)(
      'node:child_process',
    ) as typeof import('node:child_process');
    const started = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return started === '' ? undefined : started;
  } catch {
    return undefined;
  }
}

/**
 * Whether this process is in the foreground of its controlling terminal, or has none. A background
 * job of an interactive shell (`jp query ... &`) is not: the terminal stops it (SIGTTOU, SIGTTIN) if
 * it changes terminal modes or reads from it.
 */
export function inTerminalForeground(): boolean {
  if (hasProc) {
    const stat = readProcStat('self');
    return !stat || stat.terminalProcessGroup <= 0 || stat.terminalProcessGroup === stat.processGroup;
  }
  try {
    const { execFileSync } = createRequire(process.execPath)(
      'node:child_process',
    ) as typeof import('node:child_process');
    const [group, foreground] = execFileSync('ps', ['-o', 'pgid=,tpgid=', '-p', String(process.pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .trim()
      .split(/\s+/)
      .map(Number);
    return !(foreground! > 0) || foreground === group;
  } catch {
    return true;
  }
}

/** True when `pid` is alive and is the same process that had `startTime`. */
export function isSameProcessAlive(pid: number, startTime: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const current = processStartTime(pid);
  return current !== undefined && current === startTime;
}

let ownStartTime: string | undefined;

export function ownProcessStartTime(): string {
  ownStartTime ??= processStartTime(process.pid) ?? `pid-${process.pid}-${Date.now()}`;
  return ownStartTime;
}

/** Whether a process with this pid exists (one of another user counts). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
