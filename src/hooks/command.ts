/**
 * Running one hook: `/bin/sh -c <command>` in the workspace root, outside the sandbox (it is the
 * user's program), the event as JSON on its stdin, in its own process group, killed at its timeout
 * or when what it was asked for is settled otherwise. Its output is read up to a bound. What it
 * said comes back as a HookRun: exit 0 (with its stdout's JSON object when it printed one), exit 2
 * (block, with its stderr), or a failure (another exit code, a signal, its timeout, no start,
 * invalid JSON), which decides nothing.
 */
import { runSubprocess } from '../tools/subprocess.ts';
import type { ProcessTracker } from '../tools/tool.ts';
import type { ConfiguredHook } from './config.ts';

/** Bytes of a hook's stdout and of its stderr that are read; the rest is drained and dropped. */
export const maxHookOutputBytes = 1024 * 1024;

export type HookRun =
  | { kind: 'ok'; hook: ConfiguredHook; json: Record<string, unknown> | undefined; stdout: string; stderr: string }
  | { kind: 'block'; hook: ConfiguredHook; stderr: string }
  | { kind: 'failed'; hook: ConfiguredHook; failure: string; stderr: string }
  /** Stopped because its answer was no longer wanted (a human answered first, the run stopped). */
  | { kind: 'cancelled'; hook: ConfiguredHook };

export interface HookProcessOptions {
  environment: NodeJS.ProcessEnv;
  cwd: string;
  processes: ProcessTracker;
  signal: AbortSignal;
}

export async function runHook(hook: ConfiguredHook, input: unknown, options: HookProcessOptions): Promise<HookRun> {
  const result = await runSubprocess({
    file: '/bin/sh',
    arguments: ['-c', hook.command],
    cwd: options.cwd,
    environment: options.environment,
    stdin: `${JSON.stringify(input)}\n`,
    signal: options.signal,
    timeoutMilliseconds: hook.timeoutMilliseconds,
    processes: options.processes,
    maxOutputBytes: maxHookOutputBytes,
  });
  const stderr = result.stderr.trim();
  if (result.aborted) return { kind: 'cancelled', hook };
  if (result.spawnError) return { kind: 'failed', hook, failure: `could not start: ${result.spawnError}`, stderr };
  if (result.timedOut)
    return { kind: 'failed', hook, failure: `timed out after ${hook.timeoutMilliseconds / 1000} s`, stderr };
  if (result.signal) return { kind: 'failed', hook, failure: `killed by ${result.signal}`, stderr };
  if (result.exitCode === 2) return { kind: 'block', hook, stderr };
  if (result.exitCode !== 0) return { kind: 'failed', hook, failure: `exit code ${result.exitCode}`, stderr };
  const stdout = result.stdout.trim();
  if (!stdout.startsWith('{')) return { kind: 'ok', hook, json: undefined, stdout, stderr };
  try {
    const parsed: unknown = JSON.parse(stdout);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      return { kind: 'ok', hook, json: parsed as Record<string, unknown>, stdout, stderr };
  } catch {
    // fall through: printed something that is not a JSON object
  }
  return { kind: 'failed', hook, failure: 'printed output that starts with "{" but is not a JSON object', stderr };
}
