/**
 * `jp query [MESSAGE...]`: reads stdin, decides the workspace config's trust (asking at the
 * terminal when it may), resolves the conversation, then starts the run the one way every front
 * end does (launch/prepare-run.ts): in a query server (the default), detaching from it
 * (`--detach`), or in this process (`--no-server`). Either way this process is a client that
 * renders the run's events. The process that runs the turn loads and checks the configuration (from
 * this process's snapshot), the model and the tools; their errors come back before anything runs
 * (exit 2).
 */
import type { ConversationEvent } from '../../conversation/events.ts';
import { titleFrom } from '../../conversation/store.ts';
import { foreignSettingsWarning } from '../../conversation/config-delta.ts';
import { createRenderer } from '../../client/create-renderer.ts';
import { JsonRenderer } from '../../client/json-renderer.ts';
import type { Renderer } from '../../client/renderer.ts';
import { TerminalOutput } from '../../client/terminal-output.ts';
import { toJpError, UsageError } from '../../errors.ts';
import type { Secrets } from '../../redact.ts';
import type { LogSettings } from '../../output/logger.ts';
import { buildErrorResult, resultQuery, untrustedKeysWarning, type ResultWarning } from '../../report/result.ts';
import type { ConfigSnapshot } from '../../config/snapshot.ts';
import { untrustedWarning, type WorkspaceTrust } from '../../config/trust.ts';
import { prepareRun, type PreparedRun, type StartedRun, type TurnStart } from '../../launch/prepare-run.ts';
import type { EarlyServer } from '../../launch/spawn.ts';
import { startRun } from '../../launch/start-run.ts';
import { PROTOCOL_VERSION } from '../../protocol/messages.ts';
import { sandboxModes } from '../../sandbox/settings.ts';
import { activateConversation, sessionKey } from '../../workspace/session.ts';
import { dataHome, prepareWorkspace, userSubdirectory, type Workspace } from '../../workspace/workspace.ts';
import { createTerminalClient, finishOutcome, withClientSignals } from '../client-session.ts';
import { settleWorkspaceTrust } from '../workspace-trust.ts';
import type { CommandContext, FlagValue } from '../context.ts';
import { canPrompt, watchedLive } from '../facts.ts';
import { settleIncompleteTurn } from './incomplete-turn.ts';
import { combineInput, defaultStdinWaitMilliseconds, readStandardInput } from '../stdin.ts';
import { openConversation, queryConversation } from '../../conversation/targets.ts';

export interface QueryFlags {
  new?: boolean;
  id?: string;
  fork?: string | boolean;
  continue?: boolean;
  discardTurn?: boolean;
  detach?: boolean;
  nonInteractive?: boolean;
  model?: string;
  tool?: string[];
  tools?: boolean;
  maxTurns?: string;
  maxTokens?: string;
  server?: boolean;
  sandbox?: string;
  /** Relay the client protocol on stdin/stdout for a program (`jp web`) instead of drawing the run. */
  stdio?: boolean;
}

function validateFlags(flags: QueryFlags): void {
  const targets = [flags.new && '--new', flags.id !== undefined && '--id', flags.fork !== undefined && '--fork'].filter(
    Boolean,
  );
  if (targets.length > 1)
    throw new UsageError('flags_conflict', `${targets.join(' and ')} cannot be used together`, {
      hint: 'Pick one way to choose the conversation.',
    });
  if (flags.continue && flags.discardTurn)
    throw new UsageError('flags_conflict', '--continue and --discard-turn cannot be used together');
  if (flags.continue && (flags.new || flags.fork !== undefined)) {
    throw new UsageError(
      'flags_conflict',
      '--continue resumes an existing conversation; it cannot be used with --new or --fork',
    );
  }
  if (flags.stdio && (flags.detach || flags.server === false))
    throw new UsageError(
      'flags_conflict',
      '--stdio speaks to a query server; it cannot be used with --detach or --no-server',
    );
  if (flags.detach && flags.server === false)
    throw new UsageError('flags_conflict', '--detach needs a query server; it cannot be used with --no-server');
  if (flags.maxTurns !== undefined && !/^[1-9]\d*$/.test(flags.maxTurns)) {
    throw new UsageError('flag_invalid', `--max-turns ${JSON.stringify(flags.maxTurns)} is not a positive integer`);
  }
  if (flags.sandbox !== undefined && !(sandboxModes as readonly string[]).includes(flags.sandbox)) {
    throw new UsageError('flag_invalid', `--sandbox ${JSON.stringify(flags.sandbox)} is not a sandbox mode`, {
      hint: `Use one of ${sandboxModes.join(', ')}.`,
    });
  }
  if (flags.maxTokens !== undefined && !/^[1-9]\d*$/.test(flags.maxTokens)) {
    throw new UsageError('flag_invalid', `--max-tokens ${JSON.stringify(flags.maxTokens)} is not a positive integer`, {
      hint: 'Give the token budget of the turn (input + output), e.g. --max-tokens 200000.',
    });
  }
}

function configFlags(flags: QueryFlags): FlagValue[] {
  const values: FlagValue[] = [];
  if (flags.model !== undefined) values.push({ label: '--model', path: ['assistant', 'model'], value: flags.model });
  if (flags.maxTurns !== undefined)
    values.push({ label: '--max-turns', path: ['assistant', 'max_turns'], value: Number(flags.maxTurns) });
  if (flags.sandbox !== undefined) values.push({ label: '--sandbox', path: ['sandbox', 'mode'], value: flags.sandbox });
  if (flags.maxTokens !== undefined)
    values.push({ label: '--max-tokens', path: ['assistant', 'budget', 'tokens'], value: Number(flags.maxTokens) });
  return values;
}

export async function queryCommand(
  context: CommandContext,
  messageParts: string[],
  flags: QueryFlags,
  early?: EarlyServer,
): Promise<number> {
  const startedAt = Date.now();
  let conversationId: string | null = null;
  let warnings: ResultWarning[] = [];
  const messageArgument = messageParts.length > 0 ? messageParts.join(' ') : undefined;
  try {
    validateFlags(flags);
    const prepared = await prepare(context, flags, messageArgument, startedAt, {
      conversation: (id) => (conversationId = id),
      trust: (trust) => {
        if (trust.file && trust.ignored.length > 0)
          warnings = [
            untrustedKeysWarning(
              trust.file,
              trust.ignored.map((key) => key.key),
            ),
          ];
      },
    });
    return await execute(context, prepared, flags, early);
  } catch (error) {
    const jpError = toJpError(error);
    const result = buildErrorResult({
      conversationId,
      query: messageArgument ?? '',
      error: jpError,
      model: null,
      startedAt,
      warnings,
      secrets: context.secrets,
    });
    if (context.format === 'json') {
      const renderer = new JsonRenderer(
        new TerminalOutput({ stdout: context.stdout, stderr: context.stderr, statusLine: false, color: false }),
        conversationId,
      );
      renderer.finish(result);
      await renderer.flush();
    } else {
      context.reportError(jpError, conversationId);
    }
    return result.exit_code;
  } finally {
    await early?.discard();
  }
}

/** What the run goes by from this process's context (setupOf): resolved once, then handed down. */
interface RunSetup {
  workspace: Workspace;
  snapshot: ConfigSnapshot;
  trust: WorkspaceTrust;
  log: LogSettings;
}

/**
 * What the run goes by, resolved once from the context before anything of the run is made: the
 * workspace, this process's secrets registered, the config snapshot, the workspace config's trust
 * settled (asked at the terminal when `mayAsk`; the keys left out for want of it are warned about)
 * and the log settings. What starts the run (launch/) gets these, and calls back for none of them.
 */
async function setupOf(context: CommandContext, mayAsk: boolean): Promise<RunSetup> {
  const workspace = context.workspace();
  await context.registerSecrets();
  const snapshot = await context.configSnapshot();
  const trust = await settleWorkspaceTrust(workspace, snapshot, { mayAsk, environment: context.facts.environment });
  const untrusted = untrustedWarning(trust);
  if (untrusted) context.warn(untrusted);
  return { workspace, snapshot, trust, log: context.logSettings() };
}

async function prepare(
  context: CommandContext,
  flags: QueryFlags,
  messageArgument: string | undefined,
  startedAt: number,
  on: { conversation(id: string): void; trust(trust: WorkspaceTrust): void },
): Promise<PreparedRun> {
  const { facts } = context;
  const waitSetting = facts.environment.JP_STDIN_WAIT_MS;
  // With --stdio, stdin carries the protocol, never the message.
  const stdin = flags.stdio
    ? undefined
    : await readStandardInput({
        hasMessage: messageArgument !== undefined,
        stdinIsTerminal: facts.stdinIsTerminal,
        waitMilliseconds: waitSetting && /^\d+$/.test(waitSetting) ? Number(waitSetting) : defaultStdinWaitMilliseconds,
      });
  const message = combineInput(messageArgument, stdin);
  if (!flags.continue && (message === undefined || message.trim() === '')) {
    throw new UsageError('message_missing', 'no message: give one as arguments, or pipe it on stdin', {
      hint: 'e.g. jp query "explain this error", or: cat notes.md | jp query; to resume a turn, use --continue.',
    });
  }

  // Trust first: a run with settings that need it asks at the terminal before anything is created.
  const setup = await setupOf(context, canPrompt(facts));
  on.trust(setup.trust);
  // Redacted: the secrets are registered now.
  const title = titleOf(messageArgument, message, context.secrets);
  const workspace = setup.workspace;
  prepareWorkspace(workspace);
  const session = sessionKey(facts.environment);
  // Which conversation: an existing one, a fork of one, or a new one (made once all checks pass).
  const chosen = queryConversation(workspace, session, flags);
  const conversation = openConversation(workspace, chosen, {
    title,
    dataHome: dataHome(facts.environment),
  });
  if (chosen.kind === 'fork' && conversation.foreignSettings.length > 0)
    context.warn(foreignSettingsWarning(chosen.source, conversation.foreignSettings));
  on.conversation(conversation.id);

  // The configuration, the model and the tools are loaded and checked by the process that runs the
  // turn (a usage error comes back as exit 2 before anything runs); this keeps the client light.
  const waitSeconds = Number(facts.environment.JP_LOCK_WAIT ?? '0');
  return prepareRun({
    workspace,
    conversation: { id: conversation.id, created: conversation.created },
    configuration: {
      snapshot: setup.snapshot,
      trust: setup.trust,
      cfgArguments: context.globals.cfg,
      flags: configFlags(flags),
    },
    cwd: facts.cwd,
    detached: flags.detach ?? false,
    tools: { noTools: flags.tools === false, enabled: flags.tool ?? [] },
    lock: {
      waitSeconds: Number.isFinite(waitSeconds) ? waitSeconds : 0,
      role: flags.server === false ? 'in-process' : 'client',
    },
    log: setup.log,
    query: resultQuery(message ?? ''),
    startedAt,
    turn: (events) =>
      turnOf(context, conversation.id, events, {
        message: message && message.trim() !== '' ? message : null,
        messageArgument,
        flags,
      }),
    activate: () => activateConversation(userSubdirectory(workspace, 'sessions'), session, conversation.id),
  });
}

/** What the turn does with an incomplete one (resume, drop or close it: incomplete-turn.ts) before the message. */
async function turnOf(
  context: CommandContext,
  conversationId: string,
  events: readonly ConversationEvent[],
  given: { message: string | null; messageArgument: string | undefined; flags: QueryFlags },
): Promise<TurnStart> {
  const { flags } = given;
  const { resume, discard, close } = await settleIncompleteTurn(context, conversationId, events, {
    continue: flags.continue ?? false,
    discardTurn: flags.discardTurn ?? false,
    target: flags.id !== undefined ? ` --id=${conversationId}` : '',
    message: given.messageArgument,
  });
  return { message: given.message, resume, discard_turn: discard, ...(close ? { close_turn: true } : {}) };
}

async function execute(
  context: CommandContext,
  prepared: PreparedRun,
  flags: QueryFlags,
  early: EarlyServer | undefined,
): Promise<number> {
  const { conversationId } = prepared;
  const renderer = await createRenderer({
    format: context.format,
    stdout: context.stdout,
    stderr: context.stderr,
    environment: context.facts.environment,
    conversationId,
    quiet: context.globals.quiet,
    interactive: !flags.detach && watchedLive(context.facts),
    thinking: true,
    configuredTheme: () => context.configuredTheme(),
    mayQueryTerminal: !flags.detach && watchedLive(context.facts),
  });
  try {
    return await executeWith(context, prepared, flags, early, renderer);
  } catch (error) {
    // The status line ("thinking") is cleared before the error is printed.
    renderer.output.setStatus(undefined);
    throw error;
  }
}

async function executeWith(
  context: CommandContext,
  prepared: PreparedRun,
  flags: QueryFlags,
  early: EarlyServer | undefined,
  renderer: Renderer,
): Promise<number> {
  const { conversationId, request } = prepared;
  const logger = await context.logger();
  let started: StartedRun;
  if (flags.server === false) {
    started = await startRun(prepared, {
      where: 'this process',
      environment: context.facts.environment,
      secrets: context.secrets,
      logger,
    });
  } else {
    logger.info('starting a query server', { conversation_id: conversationId, detach: flags.detach ?? false });
    started = await startRun(prepared, {
      where: 'server',
      entry: context.facts.programFile,
      environment: context.facts.environment,
      shareStderr: request.log.file === '-' && request.log.verbosity > 0 && !flags.detach,
      ...(early ? { early } : {}),
    });
    logger.debug('query server ready', { pid: started.pid });
  }

  if (flags.detach) {
    if (renderer instanceof JsonRenderer) renderer.detached(conversationId, started.pid);
    else {
      context.stdout.write(`${conversationId}\n`);
      renderer.status(
        `Detached: ${conversationId} (pid ${started.pid}). Watch it with \`jp conversation attach ${conversationId}\`.`,
      );
    }
    await renderer.flush();
    return 0;
  }
  const link = await started.connect();
  if (flags.stdio) {
    const { relayOverStreams } = await import('../../client/stdio-relay.ts');
    return relayOverStreams(
      link,
      (hello) => ({
        ...hello,
        version: PROTOCOL_VERSION,
        capability: started.capability,
        owner: true,
        kill: false,
      }),
      {
        input: process.stdin,
        write: (text) => context.stdout.write(text),
      },
    );
  }
  const client = createTerminalClient(context, {
    link,
    renderer,
    conversationId,
    readOnly: false,
    owner: true,
    capability: started.capability,
    history: request.resume ? { resume: prepared.events } : 'none',
  });
  const outcome = await withClientSignals(context, client, started.detachable, async () => {
    const clientOutcome = client.run();
    await started.ended();
    return clientOutcome;
  });
  return finishOutcome(renderer, outcome, conversationId, {
    text: request.query,
    model: started.model,
    startedAt: request.started_at,
    secrets: context.secrets,
  });
}

/**
 * A new conversation's title: the message given as arguments when there is one (with piped input,
 * `cat error.log | jp query "explain this"`, the title is "explain this", not the log's first line),
 * else the piped message.
 */
function titleOf(messageArgument: string | undefined, message: string | undefined, secrets: Secrets): string | null {
  const source = messageArgument?.trim() ? messageArgument : message;
  return source?.trim() ? titleFrom(secrets.redact(source)) : null;
}
