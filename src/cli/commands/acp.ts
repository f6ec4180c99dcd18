/**
 * `jp acp`: speak the Agent Client Protocol on stdin/stdout, for editors (DESIGN §14). stdout
 * carries only JSON-RPC messages; everything else goes to the log. The SDK is loaded only here.
 */
import { Writable } from 'node:stream';
import type { AcpSessionContext } from '../../acp/agent.ts';
import { CommandContext, type FlagValue } from '../context.ts';
import { decideWorkspaceTrust } from '../workspace-trust.ts';

export async function acpCommand(context: CommandContext, options: { model?: string }): Promise<number> {
  const [{ ndJsonStream }, { AcpAgent }, { limitLines, maxAcpMessageBytes, oversizedReply }] = await Promise.all([
    import('@agentclientprotocol/sdk'),
    import('../../acp/agent.ts'),
    import('../../acp/line-limit.ts'),
  ]);
  const logger = await context.logger();
  // An oversized line is answered here and dropped; the SDK sees only lines it accepts (line-limit.ts).
  const input = limitLines(process.stdin, maxAcpMessageBytes, (id, bytes) => {
    logger.warn('acp: refused an oversized message', { id, bytes, max_bytes: maxAcpMessageBytes });
    process.stdout.write(oversizedReply(id, bytes, maxAcpMessageBytes));
  });
  const stream = ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, input, {
    maxMessageBytes: maxAcpMessageBytes,
  });
  logger.info('acp: serving on stdio', { cwd: context.facts.cwd });
  const flags: FlagValue[] =
    options.model !== undefined ? [{ label: '--model', path: ['assistant', 'model'], value: options.model }] : [];
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
    );
  await new AcpAgent({ context: sessionContext(context, flags), contextIn, logger, stream }).serve();
  logger.info('acp: the editor closed the connection');
  return 0;
}

/** A command context as an editor's session sees it: `jp acp`'s flags (`-m`) on every prompt, trust never asked. */
function sessionContext(context: CommandContext, flags: FlagValue[]): AcpSessionContext {
  return {
    workspace: () => context.workspace(),
    trust: async () => {
      await context.registerSecrets();
      await context.config(flags);
      return decideWorkspaceTrust(context, { ask: false });
    },
    requestConfig: (trust) => {
      const inputs = context.configInputs();
      return {
        user_file: inputs.userFile,
        workspace_file: inputs.workspaceFile,
        cfg_arguments: context.globals.cfg,
        trusted_workspace_sha256: trust.trustedSha256,
        workspace_trust_state: trust.state,
        flags,
      };
    },
    logSettings: () => context.logSettings(),
    programFile: context.facts.programFile,
    environment: context.facts.environment,
  };
}
