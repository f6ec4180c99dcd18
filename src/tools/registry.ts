/**
 * The tools offered to the model in a run: the builtins plus local command tools from config,
 * minus disabled ones (`enable = false`, `--no-tools`). MCP tools join them when their servers
 * have started (tools/mcp/).
 */
import type { Config, ToolConfig } from '../config/schema.ts';
import { UsageError } from '../errors.ts';
import { askUserTool } from './ask-user.ts';
import type { FileToolScope } from './file-tool-common.ts';
import { createFileTools } from './file-tools.ts';
import { createLocalTool } from './local-tool.ts';
import { runCommandTool } from './run-command.ts';
import { createSearchTool } from './search.ts';
import type { Tool } from './tool.ts';

/** The builtin tools; file tools stay out of `scope`'s protected directories. */
export function builtinTools(scope: FileToolScope): Tool[] {
  const [read, list, ...writes] = createFileTools(scope);
  return [read!, list!, createSearchTool(scope), ...writes, runCommandTool, askUserTool];
}

export interface ToolSelection {
  /** `--no-tools`: offer none. */
  noTools: boolean;
  /** `--tool <name>`: enable these even when config disables them. */
  enabled: string[];
}

export function isMcpToolName(name: string): boolean {
  return name.startsWith('mcp__');
}

/** Whether a tool is offered: not disabled in config (`enable = false`), or named by `--tool`. */
export function isToolIncluded(config: Config, selection: ToolSelection, name: string): boolean {
  const configured = (config.conversation?.tools ?? {}) as Record<string, ToolConfig | undefined>;
  return !selection.noTools && (configured[name]?.enable !== false || selection.enabled.includes(name));
}

/** Every tool the configuration defines, enabled or not: the builtins, then local command tools. */
function definedTools(config: Config, scope: FileToolScope): { tool: Tool; enabled: boolean }[] {
  const configured = (config.conversation?.tools ?? {}) as Record<string, ToolConfig | undefined>;
  const defined = builtinTools(scope).map((tool) => ({ tool, enabled: configured[tool.name]?.enable !== false }));
  for (const [name, entry] of Object.entries(configured)) {
    if (name === 'defaults' || !entry || defined.some(({ tool }) => tool.name === name)) continue;
    const isLocal = entry.source === 'local' || entry.command !== undefined;
    if (!isLocal) continue;
    if (!entry.command) {
      throw new UsageError('tool_command_missing', `conversation.tools.${name} is a local tool but has no command`, {
        hint: `Add command = "<shell command>" under [conversation.tools.${name}].`,
      });
    }
    defined.push({ tool: createLocalTool(name, entry), enabled: entry.enable !== false });
  }
  return defined;
}

/** The names of every tool the configuration defines, enabled or not (`config show --effective`). */
export function knownToolNames(config: Config): string[] {
  return definedTools(config, { protectedDirectories: [] }).map(({ tool }) => tool.name);
}

export function buildToolRegistry(config: Config, selection: ToolSelection, scope: FileToolScope): Map<string, Tool> {
  const registry = new Map<string, Tool>();
  if (selection.noTools) return registry;
  for (const { tool, enabled } of definedTools(config, scope)) {
    if (enabled || selection.enabled.includes(tool.name)) registry.set(tool.name, tool);
  }
  for (const name of selection.enabled) {
    // MCP tools are known once their servers have started (run/mcp.ts checks them then).
    if (!registry.has(name) && !isMcpToolName(name)) {
      throw new UsageError('tool_unknown', `--tool ${name}: no such tool`, {
        hint: `Available: ${[...registry.keys()].join(', ') || '(none)'}`,
      });
    }
  }
  return registry;
}
