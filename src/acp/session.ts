/**
 * One ACP session: a conversation of the workspace of its `cwd`, the editor's settings for it
 * (mode, model, MCP servers), and the prompt it is running. Its configuration is read anew for each
 * run, with the session's settings as flags above jp acp's own.
 */
import type { McpServer } from '@agentclientprotocol/sdk';
import type { LoadedConfig } from '../config/load.ts';
import type { WorkspaceTrust } from '../config/trust.ts';
import { recordedSettings } from '../conversation/config-delta.ts';
import { readEventLog } from '../conversation/reader.ts';
import { LogSeal } from '../conversation/seal.ts';
import { eventsFile } from '../conversation/store.ts';
import { contextWindow } from '../llm/context-window.ts';
import { resolveModelSpec, type ModelSpec } from '../llm/resolve.ts';
import type { LogSettings } from '../output/logger.ts';
import type { RunRequest } from '../protocol/run-request.ts';
import { dataHome, type Workspace } from '../workspace/workspace.ts';
import { editorServerFlags, type EditorServers } from './mcp-servers.ts';
import type { AcpRunClient } from './run-client.ts';
import { type Flag, SessionSettings } from './session-settings.ts';

/**
 * What a session needs of the front end that started `jp acp` (the composition root builds it):
 * `jp acp`'s own settings in the session's working directory, never prompting at a terminal.
 */
export interface AcpSessionContext {
  workspace(): Workspace;
  /**
   * Loads the configuration with jp acp's own flags, then `flags` (the session's), over the
   * conversation's recorded settings: a broken one is this request's error, with its file, line
   * and key.
   */
  config(
    flags: Flag[],
    conversation: { id: string; delta: Record<string, unknown> } | undefined,
  ): Promise<LoadedConfig>;
  /** Decides trust as a headless run does: never asked (after config()). */
  trust(): Promise<WorkspaceTrust>;
  /** The configuration part of a run request, with the trust decided and the session's flags. */
  requestConfig(trust: WorkspaceTrust, flags: Flag[]): RunRequest['config'];
  logSettings(): LogSettings;
  /** The models jp acp offers besides the one in use (its `-m` values). */
  readonly offeredModels: readonly string[];
  /** Runs `jp <arguments>` in the session's directory with jp acp's global options (a slash command). */
  jpCommand(commandArguments: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** The jp entry point a query server is spawned from. */
  readonly programFile: string;
  readonly environment: NodeJS.ProcessEnv;
}

/** What the session's next run goes by, read now. */
export interface RunSettings {
  config: LoadedConfig;
  trust: WorkspaceTrust;
  flags: Flag[];
  /** `assistant.model` as configured for the run. */
  modelId: string;
  /** The model resolved, its key checked: throws (`api_key_missing`, `provider_unknown`...) when it cannot be used. */
  model(): ModelSpec;
  /** The model's context window, when jp knows it. */
  contextWindowTokens(): number | undefined;
  editorServers: EditorServers;
}

export class Session {
  readonly id: string;
  readonly cwd: string;
  readonly context: AcpSessionContext;
  readonly workspace: Workspace;
  readonly settings: SessionSettings;
  /** The MCP servers the editor passed with session/new or session/load. */
  editorServers: readonly McpServer[];
  /** Set from the moment a prompt is accepted until its response. */
  prompting = false;
  running: AcpRunClient | undefined;
  /** session/cancel arrived while the prompt's run was starting: it is cancelled once it can be. */
  cancelRequested = false;

  constructor(options: {
    id: string;
    cwd: string;
    context: AcpSessionContext;
    workspace: Workspace;
    editorServers: readonly McpServer[];
    settings?: SessionSettings;
  }) {
    this.settings = options.settings ?? new SessionSettings();
    this.id = options.id;
    this.cwd = options.cwd;
    this.context = options.context;
    this.workspace = options.workspace;
    this.editorServers = options.editorServers;
  }

  /** The settings this user's jp recorded in the conversation (the model of an earlier `-m`...). */
  private recorded(): { id: string; delta: Record<string, unknown> } {
    const events = readEventLog(eventsFile(this.workspace.conversationsDirectory, this.id)).events;
    const seal = LogSeal.forUser(dataHome(this.context.environment)).at({
      conversationId: this.id,
      workspaceId: this.workspace.id,
    });
    return { id: this.id, delta: recordedSettings(events, seal).delta };
  }

  runSettings(): Promise<RunSettings> {
    return readRunSettings(this.context, this.settings, this.editorServers, this.cwd, this.recorded());
  }
}

/**
 * What a session's next run goes by: the configuration with the session's flags (its mode and
 * model, the editor's MCP servers) over `conversation`'s recorded settings (none yet: a new one).
 */
export async function readRunSettings(
  context: AcpSessionContext,
  settings: SessionSettings,
  servers: readonly McpServer[],
  cwd: string,
  conversation: { id: string; delta: Record<string, unknown> } | undefined,
): Promise<RunSettings> {
  const own = settings.flags();
  const first = await context.config(own, conversation);
  const editorServers = editorServerFlags(servers, Object.keys(first.value.mcp?.servers ?? {}));
  const flags = [...own, ...editorServers.flags];
  const config = editorServers.flags.length > 0 ? await context.config(flags, conversation) : first;
  const trust = await context.trust();
  const model = (): ModelSpec => resolveModelSpec(config.value, context.environment, cwd);
  return {
    config,
    trust,
    flags,
    modelId: config.value.assistant?.model ?? '',
    model,
    contextWindowTokens: () => {
      try {
        return contextWindow(model(), config.value)?.tokens;
      } catch {
        return undefined;
      }
    },
    editorServers,
  };
}
