/**
 * A Notification hook for `waiting_for_input`: the run deferred an inquiry and its process exits
 * right after, so the hook is started detached (in its own session, not waited for, outliving jp)
 * with the event as JSON on its stdin. Its output goes to the run log of a spawned server, nowhere
 * in-process.
 */
import { spawn } from 'node:child_process';

export function spawnWaitingNotification(
  command: string,
  input: unknown,
  options: { environment: NodeJS.ProcessEnv; cwd: string; output: 'inherit' | 'ignore' },
): void {
  const child = spawn('/bin/sh', ['-c', command], {
    detached: true,
    stdio: ['pipe', options.output, options.output],
    cwd: options.cwd,
    env: options.environment,
  });
  child.on('error', () => {
    // a hook that cannot start must not break the run; its failure is in the run log
  });
  child.stdin.on('error', () => {
    // the hook may exit without reading its input
  });
  child.stdin.end(`${JSON.stringify(input)}\n`);
  child.unref();
}
