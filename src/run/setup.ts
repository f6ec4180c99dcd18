/**
 * What a run is made of, loaded once by the process that runs it (a spawned server or `--no-server`)
 * from the request and its environment: the workspace (refused if another user could write it), the
 * conversation's lock and its log (opened and parsed once, torn tail repaired), the settings recorded
 * in that log, the configuration (from the client's snapshot of the config files: this process
 * reads none; validated once), the model, the tools and the MCP servers.
 * The run's secrets are added to the process's (secretVariables) before anything of the run is made.
 */
import path from 'node:path';
import { explainRecordedKeys, recordedKeys, recordedSettings, type RecordedKey } from '../conversation/config-delta.ts';
import type { ConversationEvent, TurnTools } from '../conversation/events.ts';
import { resumedTurnTools, unionOfTools, type ResumedTurnTools } from '../conversation/turn-tools.ts';
import { ConversationLog } from '../conversation/log.ts';
import { LogSeal, type PlacedSeal } from '../conversation/seal.ts';
import { eventsFile } from '../conversation/store.ts';
import { loadConfig, type LoadedConfig } from '../config/load.ts';
import { jpDirectories } from '../config/paths.ts';
import { safeDirectories } from '../config/safe-directories.ts';
import { ConfigSnapshot } from '../config/snapshot.ts';
import { JpError, UsageError } from '../errors.ts';
import { resolveModel, secretVariables, type ModelSpec } from '../llm/resolve.ts';
import type { Secrets } from '../redact.ts';
import { configuredMcpServers, registerMcpEnvironmentSecrets, type ConfiguredServer } from '../tools/mcp/config.ts';
import { buildToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/tool.ts';
import type { ConversationLock } from '../workspace/lock.ts';
import { acceptOwnership, assertWorkspaceOwnership, workspaceOwnershipProblems } from '../workspace/ownership.ts';
import { dataHome, describeWorkspace, type Workspace } from '../workspace/workspace.ts';
import type { RunRequest } from '../protocol/run-request.ts';

export interface RunSetup {
  /** The environment jp runs in; tools get it without the provider keys (see tools/environment.ts). */
  environment: NodeJS.ProcessEnv;
  /** The process's secrets, the run's registered: every text the run makes is redacted by them. */
  secrets: Secrets;
  workspace: Workspace;
  /** The conversation's lock, held by this process from here to the run's end. */
  lock: ConversationLock;
  /** The conversation's log, the run's only writer of it. */
  log: ConversationLog;
  /** Its events, parsed once when it was opened; the run appends to this same array. */
  events: ConversationEvent[];
  /** What opening the log repaired: damaged lines skipped, a torn last line saved aside. */
  logRepair: { skipped: number; tornTailSavedTo: string | undefined };
  config: LoadedConfig;
  model: ModelSpec;
  tools: Map<string, Tool>;
  /** Started when the run starts; none with --no-tools. */
  mcpServers: ConfiguredServer[];
  /** This user's seal of the events that carry settings or consent (conversation/seal.ts). */
  seal: PlacedSeal;
  /** Keys of config_delta events in the log this user's jp did not record: ignored. */
  foreignSettings: string[];
  /**
   * The tools of each turn this run may run: the request's for a new message, the ones the resumed
   * turn was started with (conversation/turn-tools.ts). `tools` and the MCP servers cover both.
   */
  turnTools: { request: TurnTools; resumed: ResumedTurnTools; either: TurnTools };
  /** Connection keys an older jp recorded in the log: ignored (conversation/config-delta.ts). */
  connectionSettings: string[];
  /** The recorded settings in force in this run (none overridden by its command line), for errors that name one. */
  recorded: RecordedKey[];
}

/**
 * Loads the run: the workspace, then the lock (`takeLock`: taken over from the client, or the one
 * this process holds), then the log, then everything the log and the request decide. When any of it
 * fails the log is closed and the lock released before the error is thrown.
 */
export function setUpRun(
  request: RunRequest,
  environment: NodeJS.ProcessEnv,
  secrets: Secrets,
  takeLock: (workspace: Workspace) => ConversationLock,
): RunSetup {
  const workspace = describeWorkspace(
    request.workspace.root,
    request.workspace.is_default,
    request.workspace.tool_root,
    environment,
  );
  const snapshot = ConfigSnapshot.fromWire(request.config.files);
  // The client refused a workspace another user could write; so does the process that acts.
  acceptOwnership(safeDirectories(snapshot.user));
  if (!workspace.isDefault) assertWorkspaceOwnership(workspace.root, workspaceOwnershipProblems(workspace.root));
  const lock = takeLock(workspace);
  let log: ConversationLog | undefined;
  let recorded: RecordedKey[] = [];
  let config: LoadedConfig | undefined;
  try {
    const opened = ConversationLog.open(eventsFile(workspace.conversationsDirectory, request.conversation_id));
    log = opened.log;
    // Settings recorded by earlier queries on this conversation (config_delta events this user's jp sealed).
    const seal = LogSeal.forUser(dataHome(environment)).at({
      conversationId: request.conversation_id,
      workspaceId: workspace.id,
    });
    const { delta, foreignKeys, connectionKeys } = recordedSettings(opened.events, seal);
    recorded = recordedKeys(opened.events, seal);
    config = loadConfig({
      snapshot,
      environment,
      conversation: { id: request.conversation_id, delta },
      cfgArguments: request.config.cfg_arguments,
      trustedWorkspaceSha256: request.config.trusted_workspace_sha256,
      flags: request.config.flags,
    });
    secrets.add(environment, secretVariables(config.value));
    refusePlantedDestination(config, request.config.workspace_trust_state);
    const model = resolveModel(config, environment, request.cwd);
    // File tools never reach jp's own rules and state: the user's config directory and every directory of jp's.
    const protectedDirectories = [path.dirname(snapshot.user.path), ...jpDirectories(environment)];
    const resumed: ResumedTurnTools =
      request.resume && !request.discard_turn
        ? resumedTurnTools(opened.events, seal)
        : { tools: undefined, foreign: false };
    const either = unionOfTools(request.tools, resumed.tools);
    const tools = buildToolRegistry(
      config.value,
      { noTools: either.no_tools, enabled: either.enabled },
      { protectedDirectories },
    );
    const mcpServers = either.no_tools ? [] : configuredMcpServers(config, environment, request.workspace.tool_root);
    registerMcpEnvironmentSecrets(secrets, mcpServers, secretVariables(config.value));
    return {
      environment,
      secrets,
      workspace,
      lock,
      log,
      events: opened.events,
      logRepair: { skipped: opened.skipped, tornTailSavedTo: opened.tornTailSavedTo },
      config,
      model,
      tools,
      mcpServers,
      seal,
      foreignSettings: foreignKeys,
      turnTools: { request: request.tools, resumed, either },
      connectionSettings: connectionKeys,
      recorded: recordedInForce(recorded, config),
    };
  } catch (error) {
    try {
      log?.close();
    } finally {
      lock.release();
    }
    // An error that names a setting the conversation recorded says so, and how to change it.
    if (!JpError.isInstance(error)) throw error;
    const inForce = config
      ? recordedInForce(recorded, config)
      : error.message.includes(`conversation ${request.conversation_id}`)
        ? recorded
        : [];
    throw explainRecordedKeys(error, request.conversation_id, inForce);
  }
}

/** The recorded settings the run uses: those its command line did not override. */
function recordedInForce(recorded: RecordedKey[], config: LoadedConfig): RecordedKey[] {
  return recorded.filter((entry) => config.sources.get(entry.key)?.kind === 'conversation');
}

/**
 * Stops the run before anything is sent when a workspace key that decides where this run's requests
 * (and their key) go was left out as untrusted, and nothing of the user's own sets it: the request
 * would otherwise go to the provider's default host with the user's key, which the config did not
 * mean either. Not when the user decided the config is not trusted (`jp trust --revoke`, or no at
 * the prompt): then the defaults are what they chose.
 */
function refusePlantedDestination(config: LoadedConfig, trustState: string): void {
  if (trustState === 'not trusted' || !config.workspace) return;
  const provider = (config.value.assistant?.model ?? '').split('/')[0] ?? '';
  const ownLayers = new Set(['user', 'env', 'cfg', 'flag']);
  const setByUser = (key: string): boolean =>
    [...config.sources].some(
      ([source, layer]) => (source === key || source.startsWith(key + '.')) && ownLayers.has(layer.kind),
    );
  const deciding = config.ignored.filter((key) => {
    const [section, name, field] = key.path;
    if (section !== 'providers') return false;
    if (name === 'openai-compatible') return field === undefined || field === provider;
    return name === provider && (field === undefined || field === 'base_url' || field === 'api_key_env');
  });
  const unset = deciding.filter(
    (key) => !setByUser(key.key) && !(key.path[1] === 'openai-compatible' && key.path[2] === undefined),
  );
  const compatible = deciding.filter(
    (key) =>
      key.path[1] === 'openai-compatible' &&
      key.path[2] === undefined &&
      !setByUser(`providers.openai-compatible.${provider}`),
  );
  const refused = [...unset, ...compatible];
  if (refused.length === 0) return;
  const names = refused.map((key) => `${key.key} (${key.where})`).join(', ');
  throw new UsageError(
    'untrusted_destination',
    `nothing was sent: ${names} decide${refused.length === 1 ? 's' : ''} where this run's requests and API key go, ` +
      `and the workspace config is not trusted (${trustState}), ` +
      `so ${refused.length === 1 ? 'it is' : 'they are'} ignored`,
    {
      hint: [
        `Without ${refused.length === 1 ? 'it' : 'them'}, your request and key ` +
          "would go to the provider's default host, which the config did not mean.",
        `Review ${config.workspace.file}, then \`jp trust\` to use it; ` +
          `or set the key yourself (your user config, or --cfg ${refused[0]!.key}=...);`,
        'or `jp trust --revoke` to run without its settings that need trust (the provider defaults then apply).',
      ].join('\n'),
    },
  );
}

/** Gives back what a setup holds when its run is never made: the log closed, the lock released. */
export function abandonSetup(setup: RunSetup): void {
  try {
    setup.log.close();
  } finally {
    setup.lock.release();
  }
}
