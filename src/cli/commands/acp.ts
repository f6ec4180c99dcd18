/**
 * `jp acp`: speak the Agent Client Protocol on stdin/stdout, for editors (DESIGN §14). stdout
 * carries only JSON-RPC messages; everything else goes to the log. The SDK is loaded only here.
 */
import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import type { AcpSessionContext } from '../../acp/agent.ts';
import type { Logger } from '../../output/logger.ts';
import { CommandContext, type FlagValue } from '../context.ts';
import { decideWorkspaceTrust } from '../workspace-trust.ts';

export async function acpCommand(context: CommandContext, options: { model: string[] }): Promise<number> {
  // The editor owns jp acp's lifetime: Ctrl+C at the terminal the editor runs in reaches jp acp's
  // process group too, but the editor cancels a turn with session/cancel, and jp acp ends when
  // the editor closes its stdin.
  let logger: Logger | undefined;
  const ignoreInterrupt = (): void =>
    logger?.info('acp: ignored SIGINT (the editor cancels a turn with session/cancel)');
  process.on('SIGINT', ignoreInterrupt);
  try {
    return await serveEditor(context, options, (started) => (logger = started));
  } finally {
    process.off('SIGINT', ignoreInterrupt);
  }
}

async function serveEditor(
  context: CommandContext,
  options: { model: string[] },
  loggerStarted: (logger: Logger) => void,
): Promise<number> {
  const [{ ndJsonStream }, { AcpAgent }, { limitLines, maxAcpMessageBytes, oversizedReply }] = await Promise.all([
    import('@agentclientprotocol/sdk'),
    import('../../acp/agent.ts'),
    import('../../acp/line-limit.ts'),
  ]);
  const logger = await context.logger();
  loggerStarted(logger);
  // An oversized line is answered here and dropped; the SDK sees only lines it accepts (line-limit.ts).
  const input = limitLines(process.stdin, maxAcpMessageBytes, (id, bytes) => {
    logger.warn('acp: refused an oversized message', { id, bytes, max_bytes: maxAcpMessageBytes });
    process.stdout.write(oversizedReply(id, bytes, maxAcpMessageBytes));
  });
  const stream = ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, input, {
    maxMessageBytes: maxAcpMessageBytes,
  });
  logger.info('acp: serving on stdio', { cwd: context.facts.cwd });
  // The first -m is the model of every prompt; every -m is offered in the editor's model menu.
  const [model] = options.model;
  const flags: FlagValue[] =
    model !== undefined ? [{ label: '--model', path: ['assistant', 'model'], value: model }] : [];
  const contextIn = (cwd: string): AcpSessionContext =>
    sessionContext(
      new CommandContext(
        {
          ...context.facts,
          cwd,
          nonInteractive: true,
          nonInteractiveReason: 'jp acp',
          stdinIsTerminal: false,
          stdoutIsTerminal: false,
        },
        context.globals,
        context.secrets,
      ),
      flags,
      options.model,
    );
  await new AcpAgent({ launchDirectory: context.facts.cwd, contextIn, logger, stream }).serve();
  logger.info('acp: the editor closed the connection');
  return 0;
}

/** A command context as an editor's session sees it: `jp acp`'s flags (`-m`) on every prompt, trust never asked. */
function sessionContext(context: CommandContext, flags: FlagValue[], offeredModels: string[]): AcpSessionContext {
  return {
    workspace: () => context.workspace(),
    config: async (extra, conversation) => {
      await context.registerSecrets();
      return context.config([...flags, ...extra], conversation);
    },
    trust: () => decideWorkspaceTrust(context, { ask: false }),
    requestConfig: (trust, extra) => {
      const inputs = context.configInputs();
      return {
        user_file: inputs.userFile,
        workspace_file: inputs.workspaceFile,
        cfg_arguments: context.globals.cfg,
        trusted_workspace_sha256: trust.trustedSha256,
        workspace_trust_state: trust.state,
        flags: [...flags, ...extra],
      };
    },
    logSettings: () => context.logSettings(),
    offeredModels,
    jpCommand: (commandArguments) => runJp(context, commandArguments),
    programFile: context.facts.programFile,
    environment: context.facts.environment,
  };
}

/** `jp <arguments>` as a child, in the context's directory, with jp acp's global options; never at a terminal. */
function runJp(
  context: CommandContext,
  commandArguments: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const globals = context.globals;
  const globalArguments = [
    ...globals.cfg.flatMap((setting) => ['--cfg', setting]),
    ...(globals.logFile !== undefined ? ['--log-file', context.logSettings().file] : []),
    ...Array.from({ length: globals.verbosity }, () => '-v'),
  ];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [context.facts.programFile, ...commandArguments, ...globalArguments],
      {
        cwd: context.facts.cwd,
        env: { ...context.facts.environment, JP_NON_INTERACTIVE: '1' },
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
