/**
 * The hooks of a run or a command, from its config (config.ts): undefined when none are
 * configured, so that a run without hooks does no hook work at all. Hooks get jp's environment
 * minus the provider key variables, as tools do (tools/environment.ts).
 */
import type { LoadedConfig } from '../config/load.ts';
import { eventsFile } from '../conversation/store.ts';
import { providerKeyVariables } from '../llm/resolve.ts';
import { sandboxSettingsOf } from '../sandbox/settings.ts';
import { toolEnvironment } from '../tools/environment.ts';
import type { ProcessTracker } from '../tools/tool.ts';
import { configuredHooks } from './config.ts';
import { RunHooks } from './run-hooks.ts';

export function hooksOf(
  config: LoadedConfig,
  facts: {
    conversationId: string;
    conversationsDirectory: string;
    /** Where the user ran jp. */
    cwd: string;
    workspaceRoot: string;
    toolRoot: string;
    environment: NodeJS.ProcessEnv;
    processes: ProcessTracker;
    notice(level: 'info' | 'warning', message: string): void;
    log(message: string, fields?: Record<string, unknown>): void;
  },
): RunHooks | undefined {
  const hooks = configuredHooks(config);
  if (hooks.length === 0) return undefined;
  return new RunHooks({
    hooks,
    conversationId: facts.conversationId,
    transcriptPath: eventsFile(facts.conversationsDirectory, facts.conversationId),
    cwd: facts.cwd,
    workspaceRoot: facts.workspaceRoot,
    toolRoot: facts.toolRoot,
    environment: toolEnvironment(facts.environment, { withheld: providerKeyVariables(config.value) }),
    sandboxMode: sandboxSettingsOf(config.value).mode,
    processes: facts.processes,
    notice: facts.notice,
    log: facts.log,
  });
}
