/**
 * Builtin `run_command {command, cwd?}`: runs a shell command inside the workspace, in its own
 * process group, killed with the run or on timeout.
 */
import * as z from 'zod/mini';
import { PathOutsideRootError, resolveInsideRoot } from './paths.ts';
import { runSubprocess } from './subprocess.ts';
import { defineTool, type Tool } from './tool.ts';

export const runCommandTool: Tool = defineTool({
  name: 'run_command',
  description: 'Run a shell command (sh -c) in the workspace and return its exit code and output.',
  schema: z.strictObject({
    command: z.string().check(z.minLength(1), z.describe('The shell command line')),
    cwd: z.optional(z.string().check(z.describe('Working directory relative to the workspace root; default: the root'))),
  }),
  sideEffects: true,
  async execute({ command, cwd }, context) {
    let directory: string;
    try {
      directory = resolveInsideRoot(context.toolRoot, cwd ?? '.');
    } catch (error) {
      if (error instanceof PathOutsideRootError) return { kind: 'error', message: error.message };
      throw error;
    }
    const result = await runSubprocess({
      file: '/bin/sh',
      arguments: ['-c', command],
      cwd: directory,
      environment: { ...context.environment, JP_CONVERSATION_ID: context.conversationId },
      signal: context.signal,
      timeoutMilliseconds: context.timeoutMilliseconds,
      processes: context.processes,
    });
    if (result.spawnError) return { kind: 'error', message: `could not start the command: ${result.spawnError}` };
    const output = [result.stdout, result.stderr ? `[stderr]\n${result.stderr}` : ''].filter(Boolean).join('\n');
    if (result.timedOut) {
      return { kind: 'error', message: `timed out after ${Math.round(context.timeoutMilliseconds / 1000)} s and was killed\n${output}` };
    }
    if (result.aborted) return { kind: 'error', message: `stopped: the run was interrupted\n${output}` };
    const status = result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`;
    const content = `${status}\n${output}`.trimEnd();
    return result.exitCode === 0 ? { kind: 'success', content } : { kind: 'error', message: content };
  },
});
