/**
 * `jp config show [--effective <tool>]`: the merged configuration, one key per line with the
 * layer that set it; or, for one tool, the resolved policy of each inquiry kind and its origin.
 */
import { describeEffective, resolveDetachedPolicy, resolveResultMode, resolveRunMode } from '../../config/policy.ts';
import { UsageError } from '../../errors.ts';
import type { LoadedConfig } from '../../config/load.ts';
import type { CommandContext } from '../context.ts';
import { describeRule } from '../../approvals/rules.ts';
import { readApprovals } from '../../approvals/store.ts';
import type { Tool } from '../../tools/tool.ts';
import {
  builtinHiddenPaths,
  describeEffectiveSandbox,
  describeSandboxSettings,
  sandboxSettingsOf,
} from '../../sandbox/settings.ts';
import { userConfigFile } from '../../config/paths.ts';
import { loadInstructionFiles, type InstructionFiles } from '../../workspace/instructions.ts';
import path from 'node:path';

function flatten(value: unknown, prefix: string[], output: [string, unknown][]): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date)) {
    for (const [key, inner] of Object.entries(value)) flatten(inner, [...prefix, key], output);
    return;
  }
  output.push([prefix.join('.'), value]);
}

interface McpFacts {
  server: string;
  /** The tool's own `run` default (a read-only tool of a server whose annotations are trusted). */
  runDefault: Tool['defaultRunMode'];
  note: string;
}

interface McpAnswer {
  /** Facts of the tool when it is an MCP tool: offered by a server, or of a server that could not be asked. */
  facts: McpFacts | undefined;
  /** Every tool the configured servers offer, by jp name (mcp__<server>__<tool>). */
  tools: string[];
  /** Servers that offer no tools now, with why (failed to start, disabled). */
  unavailable: string[];
  /** The configured server the tool's name points at (mcp__<server>__...), if any. */
  server: string | undefined;
}

/**
 * Asks the configured MCP servers for their tools, as `jp mcp ls` does (they are started and ended
 * here); loaded only for a name that is not a builtin or local tool. A tool of a server that could
 * not be asked is taken as an MCP tool, with a note saying why nothing more is known of it.
 */
async function askMcpServers(context: CommandContext, loaded: LoadedConfig, tool: string): Promise<McpAnswer> {
  const { startConfiguredMcpServers } = await import('./mcp-ls.ts');
  const running = await startConfiguredMcpServers(context, loaded);
  try {
    const statuses = running.statuses();
    const unavailable = statuses
      .filter((status) => status.state !== 'ready')
      .map((status) => {
        const why =
          status.state === 'disabled'
            ? `disabled: mcp.servers.${status.name}.enabled = false`
            : (status.problem ?? status.state);
        return `${status.name} (${why})`;
      });
    // The longest server name that prefixes the tool's name: a server may be named like another's prefix.
    const server = statuses
      .filter((status) => tool.startsWith(`mcp__${status.name}__`))
      .sort((a, b) => b.name.length - a.name.length)[0];
    let facts: McpFacts | undefined;
    const offered = running.tools.get(tool);
    if (server && offered) {
      const trusted =
        running.connections.find((connection) => connection.spec.name === server.name)?.spec.trustAnnotations === true;
      const runDefault = offered.defaultRunMode;
      const note = trusted
        ? `MCP tool of the server ${server.name}, whose annotations are ` +
          `trusted: ${runDefault ? 'it is marked read-only' : 'it is not marked read-only'}`
        : `MCP tool of the server ${server.name}; its annotations relax nothing ` +
          `(mcp.servers.${server.name}.trust_annotations is not set)`;
      facts = { server: server.name, runDefault, note };
    } else if (server && server.state !== 'ready') {
      const why =
        server.state === 'disabled'
          ? `it is disabled (mcp.servers.${server.name}.enabled = false)`
          : `it ${server.state === 'stopped' ? 'stopped' : 'failed to start'}: ${server.problem ?? 'unknown reason'}`;
      facts = {
        server: server.name,
        runDefault: undefined,
        note: `MCP tool of the server ${server.name}, which could not be asked for its tools: ${why}`,
      };
    }
    return { facts, tools: [...running.tools.keys()], unavailable, server: server?.name };
  } finally {
    await running.close();
  }
}

/** The sandbox of a tool that starts commands, each value with its key and layer. */
function sandboxFacts(loaded: LoadedConfig): Record<string, unknown> {
  const settings = sandboxSettingsOf(loaded.value);
  const source = (key: string): string => loaded.sources.get(key)?.label ?? 'built-in default';
  return {
    description: describeSandboxSettings(settings),
    mode: { value: settings.mode, layer: source('sandbox.mode') },
    network: { value: settings.network, layer: source('sandbox.network') },
    writable_roots: { value: settings.writableRoots, layer: source('sandbox.writable_roots') },
    hide_home: { value: settings.hideHome, layer: source('sandbox.hide_home') },
    readable_roots: { value: settings.readableRoots, layer: source('sandbox.readable_roots') },
    hidden_paths: {
      value: settings.hiddenPaths,
      builtin: builtinHiddenPaths.map((relative) => `~/${relative}`),
      layer: source('sandbox.hidden_paths'),
    },
  };
}

export async function configShowCommand(
  context: CommandContext,
  options: { effective?: string; id?: string },
): Promise<number> {
  // With --id, the conversation's recorded settings are a layer, as in a query on it, and listed.
  const recorded = options.id === undefined ? undefined : await conversationSettings(context, options.id);
  const loaded = await context.config(
    [],
    recorded ? { id: recorded.settings.conversationId, delta: recorded.settings.delta } : undefined,
  );
  const recordedLines = recorded ? recorded.lines(loaded) : [];
  const recordedJson = recorded ? { conversation: recorded.json(loaded) } : {};
  if (options.effective !== undefined) {
    const tool = options.effective;
    const { isMcpToolName, knownToolNames } = await import('../../tools/registry.ts');
    const known = knownToolNames(loaded.value);
    let mcp: McpFacts | undefined;
    if (!known.includes(tool)) {
      const answer = await askMcpServers(context, loaded, tool);
      mcp = answer.facts;
      if (!mcp) {
        const untrusted = loaded.ignored.find((key) => key.key === `conversation.tools.${tool}`);
        if (untrusted) {
          throw new UsageError(
            'tool_untrusted',
            `--effective ${JSON.stringify(tool)}: the tool is defined in ${untrusted.where}, which is not trusted`,
            {
              hint: 'Review the workspace config, then `jp trust` to use it (`jp trust --show` lists what it enables).',
            },
          );
        }
        const why = answer.server
          ? `the MCP server ${answer.server} offers no tool of that name`
          : isMcpToolName(tool)
            ? 'no MCP server of that name is configured'
            : 'no such tool';
        const unavailable =
          answer.unavailable.length > 0
            ? `\nNot listed, the tools of the MCP servers that offer none now: ${answer.unavailable.join('; ')}.`
            : '';
        throw new UsageError('tool_unknown', `--effective ${JSON.stringify(tool)}: ${why}`, {
          hint:
            `Known tools: ${[...known, ...answer.tools].join(', ')}.${unavailable}\nA local command tool is ` +
            `defined with command = "..." under [conversation.tools.<name>]; an MCP tool is named ` +
            `mcp__<server>__<tool>, for a server under [mcp.servers.<server>] (\`jp mcp ls\` lists them).`,
        });
      }
    }
    const runDefault = mcp?.runDefault;
    const sandboxed = tool === 'run_command' || loaded.value.conversation?.tools?.[tool]?.command !== undefined;
    // Settings for this tool that an untrusted workspace config would make: shown, marked as ignored.
    const ignored = loaded.ignored.filter(
      (key) =>
        ['defaults', tool].includes(key.path[2] ?? '') && key.path[0] === 'conversation' && key.path[1] === 'tools',
    );
    // The user's lasting approvals of this tool in this workspace (user-local state, `jp approvals`).
    const approvals = readApprovals(context.workspace()).filter((approval) => approval.rule.tool === tool);
    if (context.format === 'json') {
      const kinds = Object.fromEntries(
        (['run', 'deliver', 'tool', 'escalate'] as const).map((kind) => {
          const foreground = resolveDetachedPolicy(loaded, tool, kind, 'deny');
          const detached = resolveDetachedPolicy(loaded, tool, kind, 'defer');
          return [
            kind,
            { policy: foreground.value, key: foreground.key, layer: foreground.layer, with_detach: detached.value },
          ];
        }),
      );
      const run = resolveRunMode(loaded, tool, runDefault);
      const result = resolveResultMode(loaded, tool);
      context.jsonLine(context.stdout, 'effective_config', {
        tool,
        ...recordedJson,
        ...(mcp ? { mcp: { server: mcp.server, note: mcp.note } } : {}),
        run: { value: run.value, key: run.key, layer: run.layer },
        result: { value: result.value, key: result.key, layer: result.layer },
        detached: kinds,
        ...(sandboxed ? { sandbox: sandboxFacts(loaded) } : {}),
        approvals: approvals.map((approval) => ({ rule: approval.rule, approved_at: approval.approved_at })),
        ...(ignored.length > 0
          ? {
              ignored: ignored.map((key) => ({
                key: key.key,
                value: key.value,
                source: key.where,
                reason: key.reason,
              })),
            }
          : {}),
      });
      return 0;
    }
    const lines = describeEffective(loaded, tool, 'deny', runDefault);
    if (mcp) lines.splice(1, 0, `  (${mcp.note})`);
    if (sandboxed) lines.push(...describeEffectiveSandbox(loaded));
    const differs = (['run', 'deliver', 'tool', 'escalate'] as const).some(
      (kind) => resolveDetachedPolicy(loaded, tool, kind, 'deny').key === 'built-in',
    );
    if (differs)
      lines.push('  (where the built-in default applies, a run started with --detach uses "defer" instead of "deny")');
    for (const key of ignored)
      lines.push(
        `  IGNORED until \`jp trust\`: ${key.key} = ${JSON.stringify(key.value)} (${key.where}; ${key.reason})`,
      );
    lines.push(...recordedLines);
    for (const approval of approvals)
      lines.push(`  approved by you, always in this workspace: ${describeRule(approval.rule)} (\`jp approvals\`)`);
    context.stdout.write(lines.join('\n') + '\n');
    return 0;
  }
  const entries: [string, unknown][] = [];
  flatten(loaded.value, [], entries);
  const instructions = instructionFilesHere(context, loaded);
  if (context.format === 'json') {
    const keys = Object.fromEntries(
      entries.map(([key, value]) => [key, { value, source: loaded.sources.get(key)?.label ?? 'built-in default' }]),
    );
    const ignored = Object.fromEntries(
      loaded.ignored.map((key) => [key.key, { value: key.value, source: key.where, reason: key.reason }]),
    );
    const files = instructions.files.map((file) => ({
      path: file.shown,
      file: file.file,
      bytes: file.bytes,
      included: file.included,
    }));
    context.jsonLine(context.stdout, 'config', {
      ...recordedJson,
      keys,
      ...(loaded.ignored.length > 0 ? { ignored } : {}),
      instruction_files: files,
      ...(instructions.warnings.length > 0 ? { instruction_warnings: instructions.warnings } : {}),
    });
    return 0;
  }
  // Keys of an untrusted workspace config are shown too, marked: they are what `jp trust` would add.
  const ignored: [string, unknown, string][] = [];
  for (const key of loaded.ignored) {
    const leaves: [string, unknown][] = [];
    flatten(key.value, key.path, leaves);
    for (const [leaf, value] of leaves)
      ignored.push([leaf, value, `IGNORED until \`jp trust\` (${key.reason}): ${key.where}`]);
  }
  const rows: [string, unknown, string][] = [
    ...entries.map(([key, value]): [string, unknown, string] => [
      key,
      value,
      loaded.sources.get(key)?.label ?? 'built-in default',
    ]),
    ...ignored,
  ];
  const width = Math.max(...rows.map(([key, value]) => `${key} = ${JSON.stringify(value)}`.length));
  const lines = rows.map(([key, value, source]) => `${`${key} = ${JSON.stringify(value)}`.padEnd(width)}  # ${source}`);
  if (instructions.files.length === 0)
    lines.push(
      '# instruction files: none (jp reads AGENTS.md from the workspace root down to here, and from your jp config ' +
        'directory)',
    );
  else {
    lines.push('# instruction files (read in this order; nearer ones take precedence):');
    for (const file of instructions.files)
      lines.push(
        `#   ${file.shown} (${file.bytes} bytes${file.included < file.bytes ? `, cut to ${file.included}` : ''})`,
      );
  }
  for (const warning of instructions.warnings) lines.push(`#   warning: ${warning}`);
  lines.push(...recordedLines);
  context.stdout.write(lines.join('\n') + '\n');
  return 0;
}

/** The instruction files a query started here would include (DESIGN §9). */
function instructionFilesHere(context: CommandContext, loaded: LoadedConfig): InstructionFiles {
  const workspace = context.workspace();
  return loadInstructionFiles({
    workspaceRoot: workspace.toolRoot,
    workingDirectory: context.facts.cwd,
    userDirectory: path.dirname(userConfigFile(context.facts.environment)),
    extraNames: loaded.value.assistant?.instruction_files ?? [],
  });
}

/** The conversation's recorded settings (config-recorded.ts, loaded only for --id). */
async function conversationSettings(context: CommandContext, id: string) {
  const shown = await import('./config-recorded.ts');
  const settings = shown.readConversationSettings(context, id);
  return {
    settings,
    lines: (loaded: LoadedConfig) => shown.conversationSettingsLines(settings, loaded),
    json: (loaded: LoadedConfig) => shown.conversationSettingsJson(settings, loaded),
  };
}
