/**
 * `jp config show [--effective <tool>]`: the merged configuration, one key per line with the
 * layer that set it; or, for one tool, the resolved policy of each inquiry kind and its origin.
 */
import { describeEffective, resolveDetachedPolicy, resolveResultMode, resolveRunMode } from '../../config/policy.ts';
import { UsageError } from '../../errors.ts';
import type { LoadedConfig } from '../../config/load.ts';
import type { CommandContext } from '../context.ts';
import { jpVersion } from '../version.ts';

function flatten(value: unknown, prefix: string[], output: [string, unknown][]): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)) {
    for (const [key, inner] of Object.entries(value)) flatten(inner, [...prefix, key], output);
    return;
  }
  output.push([prefix.join('.'), value]);
}

/** What an MCP tool's server says about its policy (see mcpToolPolicyFacts); loaded only for mcp__ names. */
async function mcpFacts(context: CommandContext, loaded: LoadedConfig, tool: string) {
  const { configuredMcpServers, mcpToolPolicyFacts } = await import('../../tools/mcp/servers.ts');
  const servers = configuredMcpServers(loaded, context.facts.environment, context.workspace().toolRoot);
  return mcpToolPolicyFacts(servers, tool, { environment: context.facts.environment, clientVersion: jpVersion });
}

export async function configShowCommand(context: CommandContext, options: { effective?: string }): Promise<number> {
  const loaded = await context.config();
  if (options.effective !== undefined) {
    const tool = options.effective;
    const { isMcpToolName, knownToolNames } = await import('../../tools/registry.ts');
    const known = knownToolNames(loaded.value);
    let mcp: Awaited<ReturnType<typeof mcpFacts>>;
    if (isMcpToolName(tool)) {
      mcp = await mcpFacts(context, loaded, tool);
      if (!mcp) {
        throw new UsageError('tool_unknown', `--effective ${JSON.stringify(tool)}: no MCP server of that name is configured`, {
          hint: 'An MCP tool is named mcp__<server>__<tool>, for a server under [mcp.servers.<server>]; `jp mcp ls` lists them.',
        });
      }
    } else if (!known.includes(tool)) {
      throw new UsageError('tool_unknown', `--effective ${JSON.stringify(tool)}: no such tool`, {
        hint: `Known tools: ${known.join(', ')}.\nA local command tool is defined with command = "..." under [conversation.tools.<name>]; an MCP tool is named mcp__<server>__<tool>.`,
      });
    }
    const runDefault = mcp?.runDefault;
    if (context.format === 'json') {
      const kinds = Object.fromEntries(
        (['run', 'deliver', 'tool'] as const).map((kind) => {
          const foreground = resolveDetachedPolicy(loaded, tool, kind, 'deny');
          const detached = resolveDetachedPolicy(loaded, tool, kind, 'defer');
          return [kind, { policy: foreground.value, key: foreground.key, layer: foreground.layer, with_detach: detached.value }];
        }),
      );
      const run = resolveRunMode(loaded, tool, runDefault);
      const result = resolveResultMode(loaded, tool);
      context.jsonLine(context.stdout, 'effective_config', {
        tool,
        ...(mcp ? { mcp: { server: mcp.server, note: mcp.note } } : {}),
        run: { value: run.value, key: run.key, layer: run.layer },
        result: { value: result.value, key: result.key, layer: result.layer },
        detached: kinds,
      });
      return 0;
    }
    const lines = describeEffective(loaded, tool, 'deny', runDefault);
    if (mcp) lines.splice(1, 0, `  (${mcp.note})`);
    const differs = (['run', 'deliver', 'tool'] as const).some((kind) => resolveDetachedPolicy(loaded, tool, kind, 'deny').key === 'built-in');
    if (differs) lines.push('  (where the built-in default applies, a run started with --detach uses "defer" instead of "deny")');
    context.stdout.write(lines.join('\n') + '\n');
    return 0;
  }
  const entries: [string, unknown][] = [];
  flatten(loaded.value, [], entries);
  if (context.format === 'json') {
    const keys = Object.fromEntries(entries.map(([key, value]) => [key, { value, source: loaded.sources.get(key)?.label ?? 'built-in default' }]));
    context.jsonLine(context.stdout, 'config', { keys });
    return 0;
  }
  const width = Math.max(...entries.map(([key, value]) => `${key} = ${JSON.stringify(value)}`.length));
  const lines = entries.map(([key, value]) => {
    const text = `${key} = ${JSON.stringify(value)}`;
    return `${text.padEnd(width)}  # ${loaded.sources.get(key)?.label ?? 'built-in default'}`;
  });
  context.stdout.write(lines.join('\n') + '\n');
  return 0;
}
