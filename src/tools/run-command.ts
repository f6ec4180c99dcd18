/**
 * Builtin `run_command {command, cwd?, escalate?, justification?}`: runs a shell command inside the
 * workspace, in the run's sandbox (DESIGN §10), in its own process group, killed with the run or on
 * timeout. `escalate: true` asks to run it outside the sandbox, with a `justification` for the human
 * who decides (an `escalate` inquiry). A sandboxed command that failed because of the sandbox gets
 * a note saying so and how to ask.
 */
import * as z from 'zod/mini';
import { escalationOffer, sandboxDenial } from '../sandbox/explain.ts';
import { runConfined } from './confined.ts';
import { PathOutsideRootError, resolveInsideRoot } from './paths.ts';
import { defineTool, type Tool } from './tool.ts';

const schema = z
  .strictObject({
    command: z.string().check(z.minLength(1), z.describe('The shell command line')),
    cwd: z.optional(
      z.string().check(z.describe('Working directory relative to the workspace root; default: the root')),
    ),
    escalate: z.optional(
      z
        .boolean()
        .check(
          z.describe(
            'Ask to run the command outside the sandbox (a human decides); only when it failed in the sandbox for lack of write access or network',
          ),
        ),
    ),
    justification: z.optional(
      z
        .string()
        .check(
          z.minLength(1),
          z.describe('With escalate: why the command must run outside the sandbox, for the human who decides'),
        ),
    ),
  })
  .check(
    z.refine((value) => value.escalate !== true || value.justification !== undefined, {
      message: 'escalate: true needs a justification',
      path: ['justification'],
    }),
  );

export const runCommandTool: Tool = defineTool({
  name: 'run_command',
  description:
    'Run a shell command (sh -c) in the workspace and return its output, then its exit code on a line of its own. It runs in a sandbox (see the tool header of each call); ' +
    'set escalate: true with a justification to ask a human to run it outside.',
  schema,
  sideEffects: true,
  confined: true,
  escalation: (value) =>
    value.escalate === true ? { needs: 'unconfined', justification: value.justification ?? '' } : undefined,
  async execute({ command, cwd }, context) {
    let directory: string;
    try {
      directory = resolveInsideRoot(context.toolRoot, cwd ?? '.');
    } catch (error) {
      if (error instanceof PathOutsideRootError) return { kind: 'error', message: error.message };
      throw error;
    }
    const result = await runConfined(
      context,
      { file: '/bin/sh', arguments: ['-c', command], cwd: directory },
      {
        environment: { ...context.environment, JP_CONVERSATION_ID: context.conversationId },
        ...(context.output ? { onOutput: context.output } : {}),
      },
    );
    if (result.spawnError) return { kind: 'error', message: `could not start the command: ${result.spawnError}` };
    const output = [result.stdout, result.stderr ? `[stderr]\n${result.stderr}` : ''].filter(Boolean).join('\n');
    if (result.timedOut) {
      return {
        kind: 'error',
        message: `timed out after ${Math.round(context.timeoutMilliseconds / 1000)} s and was killed\n${output}`,
      };
    }
    if (result.aborted) return { kind: 'error', message: `stopped: the run was interrupted\n${output}` };
    // The status is the last line, on a line of its own: it survives a cut (the tail is kept).
    const status = result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`;
    const content = output === '' ? status : `${output}${output.endsWith('\n') ? '' : '\n'}${status}`;
    if (result.exitCode === 0) return { kind: 'success', content };
    const denied =
      context.sandbox.settings.mode === 'off' ? undefined : sandboxDenial(output, context.sandbox.settings.network);
    return {
      kind: 'error',
      message: denied ? `${content}\n\n${escalationOffer(denied, context.sandbox.description)}` : content,
    };
  },
});
