/**
 * Builtin `run_command {command, cwd?, escalate?, justification?}`: runs a shell command inside the
 * workspace, in the run's sandbox (DESIGN §10), in its own process group, killed with the run or on
 * timeout. `escalate: true` asks to run it outside the sandbox, with a `justification` for the human
 * who decides (an `escalate` inquiry). A sandboxed command that failed because of the sandbox gets
 * a note saying so and how to ask.
 */
import * as z from 'zod/mini';
import { escalationOffer, sandboxDenial } from '../sandbox/explain.ts';
import type { CommandLine } from '../sandbox/engine.ts';
import { runConfined } from './confined.ts';
import { runInEditorTerminal } from './editor-command.ts';
import { markerVariable } from './marked-processes.ts';
import { PathOutsideRootError, resolveInsideRoot } from './paths.ts';
import { defineTool, type EditorTerminal, type Tool, type ToolContext } from './tool.ts';

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
            'Ask to run the command outside the sandbox (a human decides); only when it failed in the sandbox ' +
              'for lack of write access or network',
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
    'Run a shell command (sh -c) in the workspace and return its output, then its exit code on a line of its own. ' +
    'It runs in a sandbox (see the tool header of each call); ' +
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
    const environment = { ...context.environment, JP_CONVERSATION_ID: context.conversationId };
    const line = { file: '/bin/sh', arguments: ['-c', command], cwd: directory };
    const result = context.editorTerminal
      ? await inTheEditor(context, context.editorTerminal, line, environment)
      : await here(context, line, environment);
    if ('spawnError' in result) return { kind: 'error', message: `could not start the command: ${result.spawnError}` };
    const { output } = result;
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

interface CommandOutcome {
  /** stdout, then stderr under `[stderr]`; or, in the editor's terminal, both as it showed them. */
  output: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
}

/** The command here, in its own process group, in the call's sandbox. */
async function here(
  context: ToolContext,
  line: CommandLine,
  environment: NodeJS.ProcessEnv,
): Promise<CommandOutcome | { spawnError: string }> {
  const result = await runConfined(context, line, {
    environment,
    ...(context.output ? { onOutput: context.output } : {}),
  });
  if (result.spawnError) return { spawnError: result.spawnError };
  return {
    output: [result.stdout, result.stderr ? `[stderr]\n${result.stderr}` : ''].filter(Boolean).join('\n'),
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    aborted: result.aborted,
  };
}

/** The same command line, sandbox and environment, in a terminal of the user's editor (editor-command.ts). */
async function inTheEditor(
  context: ToolContext,
  terminal: EditorTerminal,
  line: CommandLine,
  environment: NodeJS.ProcessEnv,
): Promise<CommandOutcome | { spawnError: string }> {
  const prepared = context.sandbox.prepare(line);
  try {
    const result = await runInEditorTerminal(
      terminal,
      prepared,
      // The marker lets `jp conversation kill --force` find it, as it finds the commands it starts.
      { ...environment, ...prepared.environment, [markerVariable]: context.processes.nextMarker() },
      {
        signal: context.signal,
        timeoutMilliseconds: context.timeoutMilliseconds,
        // Bytes the editor keeps (its tail); jp cuts what reaches the model in one place (truncate.ts).
        outputByteLimit: Math.max(64 * 1024, context.outputLimit * 4),
      },
    );
    return {
      output: result.truncated ? `[the editor kept the end of the output]\n${result.output}` : result.output,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      aborted: result.aborted,
    };
  } catch (error) {
    return { spawnError: `the editor's terminal: ${(error as Error).message}` };
  } finally {
    prepared.cleanup();
  }
}
