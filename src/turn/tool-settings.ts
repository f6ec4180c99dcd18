/**
 * A tool call's facts from the run's settings: its limits, from `conversation.tools` (how much of
 * its output reaches the model, `defaults.output_limit`, and how long it may run: its own
 * `timeout_secs`, the tool's, the defaults'), and whether it can run only outside the sandbox.
 */
import type { LoadedConfig } from '../config/load.ts';
import type { ToolConfig, ToolDefaultsConfig } from '../config/schema.ts';
import type { Tool } from '../tools/tool.ts';
import type { CommandSandbox } from '../sandbox/engine.ts';

function toolEntry(config: LoadedConfig, name: string): (ToolConfig & ToolDefaultsConfig) | undefined {
  return (
    config.value.conversation?.tools as Record<string, (ToolConfig & ToolDefaultsConfig) | undefined> | undefined
  )?.[name];
}

export function settings(config: LoadedConfig, tool: Tool): { outputLimit: number; timeoutMilliseconds: number } {
  const defaults = toolEntry(config, 'defaults');
  const own = toolEntry(config, tool.name);
  return {
    outputLimit: defaults?.output_limit ?? 30_000,
    timeoutMilliseconds: (own?.timeout_secs ?? tool.timeoutSeconds ?? defaults?.timeout_secs ?? 600) * 1000,
  };
}

/** Whether the call runs outside the sandbox if it runs at all: it asks to, or the sandbox cannot start. */
export async function leavesTheSandbox(
  context: { sandbox: CommandSandbox; toolRoot: string },
  tool: Tool,
  argumentsValue: unknown,
): Promise<boolean> {
  if (!tool.confined || context.sandbox.settings.mode === 'off') return false;
  if (tool.escalation?.(argumentsValue, context.toolRoot)) return true;
  return !(await context.sandbox.availability()).ok;
}
