/**
 * `conversation.hooks.on_waiting`: a command run when a run with no human defers an inquiry, so
 * users can wire a desktop notification or a chat message. It runs detached (it outlives the
 * server, which exits right after) with the conversation id and the tool in its environment.
 */
import { spawn } from 'node:child_process';
import type { PendingInquiry } from '../turn/summary.ts';

export function runWaitingHook(
  command: string,
  options: {
    environment: NodeJS.ProcessEnv;
    conversationId: string;
    pending: PendingInquiry | null;
    workspaceRoot: string;
    output: 'inherit' | 'ignore';
  },
): void {
  const child = spawn('/bin/sh', ['-c', command], {
    detached: true,
    stdio: ['ignore', options.output, options.output],
    cwd: options.workspaceRoot,
    env: {
      ...options.environment,
      JP_CONVERSATION_ID: options.conversationId,
      JP_TOOL_NAME: options.pending?.tool ?? '',
      JP_INQUIRY_KIND: options.pending?.kind ?? '',
      JP_INQUIRY_ID: options.pending?.id ?? '',
      JP_WORKSPACE_ROOT: options.workspaceRoot,
      JP_RESUME_COMMAND: `jp query --continue --id=${options.conversationId}`,
    },
  });
  child.on('error', () => {
    // a hook that cannot start must not break the run; its failure is in the run log
  });
  child.unref();
}
