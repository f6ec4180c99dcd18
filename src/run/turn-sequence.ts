/**
 * The turns of one run, in order: an incomplete turn discarded when asked, the command line's
 * settings recorded (sealed) when they changed, the interrupted turn resumed, the new message sent,
 * and each reply the user gives by interrupting runs as the same turn going on. Ends with the
 * run's result.
 */
import os from 'node:os';
import path from 'node:path';
import { checkpointSettings, RunCheckpoints } from '../checkpoint/recorder.ts';
import type { ConversationEvent, EventOf, TurnTools } from '../conversation/events.ts';
import { now } from '../conversation/events.ts';
import {
  changesDelta,
  connectionSettingsWarning,
  explainRecordedKeys,
  foreignSettingsWarning,
  recordableSettings,
  recordedSettings,
  withoutConnectionKeys,
} from '../conversation/config-delta.ts';
import { closingEvents, findIncompleteTurn } from '../conversation/turn-state.ts';
import { configuredTools, describeTools, sameTools } from '../conversation/turn-tools.ts';
import { commandLineOverrides } from '../config/load.ts';
import type { BuiltinDetachedDefault } from '../config/policy.ts';
import { RunError } from '../errors.ts';
import type { RunHooks } from '../hooks/run-hooks.ts';
import { contextWindow } from '../llm/context-window.ts';
import { costOf, preparePrices } from '../llm/prices.ts';
import { providerKeyVariables } from '../llm/resolve.ts';
import type { ChatModel } from '../llm/types.ts';
import { buildTurnResult, type ResultObject, type ResultWarning } from '../report/result.ts';
import type { runSandboxes } from '../sandbox/engine.ts';
import { describeSandboxForModel } from '../sandbox/settings.ts';
import { toolEnvironment } from '../tools/environment.ts';
import { isToolIncluded } from '../tools/registry.ts';
import type { Tool } from '../tools/tool.ts';
import { TurnRun, type SystemPromptRecord, type TurnOutcome } from '../turn/engine.ts';
import { builtinSystemPrompt, composeSystemPrompt } from '../turn/system-prompt.ts';
import { addApproval, readApprovals } from '../approvals/store.ts';
import { loadInstructionFiles } from '../workspace/instructions.ts';
import type { LiveLog } from './live-log.ts';
import type { RunRequest } from '../protocol/run-request.ts';
import type { RunSetup } from './setup.ts';

export interface TurnSequence {
  request: RunRequest;
  setup: RunSetup;
  live: LiveLog;
  /** Awaited once the log is brought up to date (discard, settings), as the tools are. */
  model: Promise<ChatModel>;
  tools(): Promise<Map<string, Tool>>;
  sandbox(): ReturnType<typeof runSandboxes>;
  builtinDetached(): BuiltinDetachedDefault;
  /** The user's hooks: SessionStart and UserPromptSubmit run here, the others in the turn. */
  hooks: RunHooks | undefined;
  /** The signal the current turn stops on; `renewStop` gives a fresh one after a reply. */
  stopSignal(): AbortSignal;
  renewStop(): void;
  warnings(): ResultWarning[];
}

export async function runTurnSequence(sequence: TurnSequence): Promise<ResultObject> {
  const { request, setup, live } = sequence;
  const { config, events, seal } = setup;
  // Loaded while the model answers, not after: the result (and a cancelled turn's answer) waits less.
  preparePrices(setup.model.id);
  if (setup.model.provider === 'test')
    live.notice('info', `test provider: replaying ${setup.model.testScript}; no model is called`);
  if (request.discard_turn && findIncompleteTurn(events)) {
    live.append({ type: 'turn_end', timestamp: now(), status: 'discarded' });
    events.push({ type: 'turn_end', timestamp: now(), status: 'discarded' });
    live.sync();
  }
  const unfinished = request.close_turn ? findIncompleteTurn(events) : undefined;
  if (unfinished) {
    for (const event of closingEvents(unfinished)) {
      live.append(event);
      events.push(event);
    }
    live.sync();
  }
  // What the command line set, but never where and how to reach a provider (config-delta.ts), and
  // never what holds a secret: that configures this query only.
  const { delta: overrides, withheld: secretSettings } = recordableSettings(
    withoutConnectionKeys(commandLineOverrides(config)).kept,
    setup.secrets,
  );
  if (secretSettings.length > 0)
    live.notice(
      'info',
      `not recorded in conversation ${request.conversation_id}, as they hold secrets: ${secretSettings.join(', ')}; ` +
        'give them again with --cfg to the queries that need them',
    );
  if (setup.foreignSettings.length > 0)
    live.notice('warning', foreignSettingsWarning(request.conversation_id, setup.foreignSettings));
  if (setup.connectionSettings.length > 0)
    live.notice('warning', connectionSettingsWarning(request.conversation_id, setup.connectionSettings));
  if (changesDelta(recordedSettings(events, seal).delta, overrides)) {
    const recorded: EventOf<'config_delta'> = {
      type: 'config_delta',
      timestamp: now(),
      delta: overrides,
      ...(request.query ? { query: setup.secrets.redact(request.query) } : {}),
    };
    const event = seal.seal(recorded, events);
    live.append(event);
    events.push(event);
  }
  const model = await sequence.model;
  const withheld = providerKeyVariables(config.value);
  const toolConfigs = (config.value.conversation?.tools ?? {}) as Record<string, { env_vars?: string[] } | undefined>;
  const environmentOfTool = (tool: string): NodeJS.ProcessEnv =>
    toolEnvironment(setup.environment, { withheld, passThrough: toolConfigs[tool]?.env_vars ?? [] });
  const allTools = await sequence.tools();
  const { turnTools } = setup;
  // A resumed turn keeps the tools it was started with; a new message gets the command line's.
  const resumedTools = turnTools.resumed.tools ?? turnTools.request;
  if (request.resume) sayResumedTools(live, turnTools);
  const toolsOf = (chosen: TurnTools): Map<string, Tool> =>
    new Map(
      [...allTools].filter(([name]) =>
        isToolIncluded(config.value, { noTools: chosen.no_tools, enabled: chosen.enabled }, name),
      ),
    );
  const contextWindowOfModel = contextWindow(setup.model, config.value);
  const hooks = sequence.hooks;
  const sessionContext = await hooks?.sessionStart(
    events.some((event) => event.type === 'turn_start') ? 'resume' : 'startup',
    setup.model.id,
    sequence.stopSignal(),
  );
  const systemPrompt = runSystemPrompt(sequence, toolsOf(turnTools.request), sessionContext);
  const assistant = config.value.assistant;
  const checkpoints = runCheckpoints(sequence);
  /** UserPromptSubmit: a blocked prompt is never sent; what the hooks add goes with it to the model. */
  const submitted = async (prompt: string): Promise<{ blocked: string } | { context: string | undefined }> => {
    const decided = await hooks?.promptSubmitted(prompt, sequence.stopSignal());
    if (!decided) return { context: undefined };
    if (decided.blocked)
      return { blocked: `the hook \`${decided.blocked.hook}\` blocked the prompt: ${decided.blocked.text}` };
    return { context: decided.context };
  };
  let messageContext: string | undefined;
  if (request.message !== null || request.reply !== undefined) {
    const decided = await submitted(request.message ?? request.reply ?? '');
    if ('blocked' in decided)
      throw new RunError('prompt_blocked', decided.blocked, {
        hint: 'Nothing was sent. Change the prompt, or the UserPromptSubmit hook in your configuration.',
      });
    messageContext = decided.context;
  }
  // The request's images go with its message, or with its reply; never twice.
  let images = request.images;
  const takeImages = (): NonNullable<typeof images> | undefined => {
    const taken = images;
    images = undefined;
    return taken;
  };
  const turn = (
    chosen: TurnTools,
    resume: boolean,
    message: string | undefined,
    reply?: string,
    context = messageContext,
    attached = message !== undefined || reply !== undefined ? takeImages() : undefined,
  ): Promise<TurnOutcome> =>
    new TurnRun({
      host: live,
      approvals: {
        rules: () => readApprovals(setup.workspace).map((approval) => approval.rule),
        add: (rule) => addApproval(setup.workspace, rule),
      },
      events,
      conversationId: request.conversation_id,
      model,
      tools: toolsOf(chosen),
      turnTools: turnTools.request,
      config,
      seal,
      builtinDetached: sequence.builtinDetached,
      toolRoot: request.workspace.tool_root,
      toolEnvironment: environmentOfTool,
      sandbox: sequence.sandbox(),
      maxTurns: assistant?.max_turns ?? 25,
      ...(assistant?.budget?.tokens !== undefined ? { maxTokens: assistant.budget.tokens } : {}),
      ...(contextWindowOfModel ? { contextWindow: contextWindowOfModel } : {}),
      ...(assistant?.compaction?.threshold !== undefined
        ? { compactionThreshold: assistant.compaction.threshold }
        : {}),
      systemPrompt,
      ...(checkpoints ? { checkpoints } : {}),
      signal: sequence.stopSignal(),
      message,
      resume,
      ...(reply !== undefined ? { reply } : {}),
      ...(context !== undefined ? { context } : {}),
      ...(attached !== undefined ? { images: attached } : {}),
      ...(assistant?.max_output_tokens !== undefined ? { maxOutputTokens: assistant.max_output_tokens } : {}),
    }).run();
  /** Runs a turn, and keeps it going each time the user interrupts it to reply. */
  const turnWithReplies = async (
    resume: boolean,
    message: string | undefined,
    reply?: string,
  ): Promise<TurnOutcome> => {
    // A reply goes on with the turn it interrupted, and so with its tools.
    const chosen = resume ? resumedTools : turnTools.request;
    let outcome = await turn(chosen, resume, message, reply);
    while (outcome.status === 'interrupted' && outcome.stop?.reply !== undefined) {
      sequence.renewStop();
      const decided = await submitted(outcome.stop.reply);
      if ('blocked' in decided) {
        live.notice('warning', `your reply was not sent: ${decided.blocked}`);
        return outcome;
      }
      outcome = await turn(chosen, true, undefined, outcome.stop.reply, decided.context);
    }
    return outcome;
  };

  let outcome: TurnOutcome;
  let query = request.query;
  if (request.resume) {
    outcome = await turnWithReplies(true, undefined, request.reply);
    if (outcome.status === 'completed' && request.message !== null) {
      outcome = await turnWithReplies(false, request.message);
    } else if (request.message !== null && outcome.status !== 'completed') {
      live.notice(
        'warning',
        'your new message was not sent: the resumed turn did not complete; send it again once it has',
      );
      query = '';
    }
  } else {
    outcome = await turnWithReplies(false, request.message ?? '');
  }
  // An error that names a setting the conversation recorded says so, and how to change it.
  if (outcome.error)
    outcome = { ...outcome, error: explainRecordedKeys(outcome.error, request.conversation_id, setup.recorded) };
  const costUsd = await costOf(
    events
      .slice(Math.max(0, outcome.turnStart))
      .flatMap((event) => (event.type === 'usage' ? [{ model: event.model, usage: event.usage }] : [])),
  );
  return buildTurnResult({
    conversationId: request.conversation_id,
    query: query || lastRequestContent(events),
    outcome,
    events,
    model: setup.model.id,
    startedAt: request.started_at,
    warnings: sequence.warnings(),
    secrets: setup.secrets,
    ...(costUsd !== undefined ? { costUsd } : {}),
  });
}

/**
 * The run's checkpoints of the tool root (DESIGN §10), with the settings of `[checkpoints]`; none
 * when they are off.
 */
function runCheckpoints(sequence: TurnSequence): RunCheckpoints | undefined {
  const { request, setup, live } = sequence;
  const settings = checkpointSettings(setup.config.value);
  if (!settings.enabled) return undefined;
  return new RunCheckpoints({
    userDirectory: setup.workspace.userDirectory,
    root: request.workspace.tool_root,
    environment: setup.environment,
    conversationId: request.conversation_id,
    settings,
    warn: (message) => live.notice('warning', message),
  });
}

/**
 * What a resume says about its tools: the turn keeps the ones it was started with, and a different
 * choice on this command line applies only to its new message; a record of them this user's jp did
 * not seal is ignored.
 */
function sayResumedTools(live: LiveLog, turnTools: RunSetup['turnTools']): void {
  const { request, resumed } = turnTools;
  if (resumed.foreign)
    live.notice(
      'warning',
      'the tools recorded for the interrupted turn were not recorded by your jp: ignored; ' +
        "it resumes with this command line's",
    );
  if (!resumed.tools || sameTools(resumed.tools, request)) return;
  const passed = !sameTools(request, configuredTools);
  live.notice(
    passed ? 'warning' : 'info',
    'the resumed turn keeps the tools it was started with: ' +
      `${describeTools(resumed.tools)}${passed ? `; ${describeTools(request)} applies only to a new message` : ''}`,
  );
}

/**
 * The system message of this run (DESIGN §9): the built-in prompt (or assistant.system_prompt),
 * assistant.instructions, then the instruction files; what was cut or skipped is a warning.
 */
function runSystemPrompt(
  sequence: TurnSequence,
  tools: Map<string, Tool>,
  sessionContext: string | undefined,
): SystemPromptRecord {
  const { request, setup, live } = sequence;
  const { config, events, model } = setup;
  const assistant = config.value.assistant;
  const base =
    assistant?.system_prompt ??
    builtinSystemPrompt({
      workspaceRoot: request.workspace.tool_root,
      workingDirectory: request.cwd,
      operatingSystem: `${os.type()} ${os.release()} (${os.arch()})`,
      // The conversation's date: its first event's, so that no request of it ever differs.
      date: (events[0]?.timestamp ?? now()).slice(0, 10),
      model: model.id,
      // By name, as the engine offers them: the same bytes whatever order MCP servers started in.
      tools: [...tools.values()]
        .map((tool) => ({ name: tool.name, description: tool.description }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      humanAvailable: live.hasPromptingClient(),
      sandbox: describeSandboxForModel(config.value),
    });
  const instructions = loadInstructionFiles({
    workspaceRoot: request.workspace.tool_root,
    workingDirectory: request.cwd,
    userDirectory: path.dirname(request.config.files.user.path),
    extraNames: assistant?.instruction_files ?? [],
  });
  for (const warning of instructions.warnings) live.notice('warning', warning);
  return {
    text: composeSystemPrompt(
      base,
      [assistant?.instructions, sessionContext && `Context from the user's SessionStart hooks:\n\n${sessionContext}`]
        .filter((part) => part !== undefined && part !== '')
        .join('\n\n') || undefined,
      instructions.files.map((file) => ({ path: file.shown, text: file.text })),
    ),
    files: instructions.files.map((file) => ({ path: file.shown, bytes: file.bytes, included: file.included })),
  };
}

function lastRequestContent(events: readonly ConversationEvent[]): string {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.type === 'chat_request') return event.content;
  }
  return '';
}
