/**
 * The tools offered to the model in a run: the builtins plus local command tools from config,
 * minus disabled ones (`enable = false`, `--no-tools`).
 */
import type { Config, ToolConfig } from '../config/schema.ts';
import { UsageError } from '../errors.ts';
import { askUserTool } from './ask-user.ts';
import { createFileTool, listFilesTool, modifyFileTool, readFileTool } from './file-tools.ts';
import { createLocalTool } from './local-tool.ts';
import { runCommandTool } from './run-command.ts';
import type { Tool } from './tool.ts';

export const builtinTools: readonly Tool[] = [readFileTool, listFilesTool, createFileTool, modifyFileTool, runCommandTool, askUserTool];

export interface ToolSelection {
  /** `--no-tools`: offer none. */
  noTools: boolean;
  /** `--tool <name>`: enable these even when config disables them. */
  enabled: string[];
}

export function buildToolRegistry(config: Config, selection: ToolSelection): Map<string, Tool> {
  const registry = new Map<string, Tool>();
  if (selection.noTools) return registry;
  const configured = (config.conversation?.tools ?? {}) as Record<string, ToolConfig | undefined>;
  for (const tool of builtinTools) {
    if (configured[tool.name]?.enable === false && !selection.enabled.includes(tool.name)) continue;
    registry.set(tool.name, tool);
  }
  for (const [name, entry] of Object.entries(configured)) {
    if (name === 'defaults' || !entry || registry.has(name)) continue;
    const isLocal = entry.source === 'local' || entry.command !== undefined;
    if (!isLocal) continue;
    if (!entry.command) {
      throw new UsageError('tool_command_missing', `conversation.tools.${name} is a local tool but has no command`, {
        hint: `Add command = "<shell command>" under [conversation.tools.${name}].`,
      });
    }
    if (entry.enable === false && !selection.enabled.includes(name)) continue;
    registry.set(name, createLocalTool(name, entry));
  }
  for (const name of selection.enabled) {
    if (!registry.has(name)) {
      throw new UsageError('tool_unknown', `--tool ${name}: no such tool`, {
        hint: `Available: ${[...registry.keys()].join(', ') || '(none)'}`,
      });
    }
  }
  return registry;
}
