/**
 * `jp query [MESSAGE...]`: resolves the conversation, takes its lock and reads stdin, then runs the
 * turn in a query server (the default), detaches from it
 * (`--detach`), or runs it in this process (`--no-server`). Either way this process is a client that
 * renders the server's events. The process that runs the turn loads and checks the configuration,
 * the model and the tools; their errors come back before anything runs (exit 2).
 */
import type { Prepared } from './prepared-query.ts';
import path from 'node:path';
import { readEventLog } from '../../conversation/reader.ts';
import {
  conversationExists,
  createConversation,
  eventsFile,
  removeConversation,
  titleFrom,
} from '../../conversation/store.ts';
import { forkConversation } from '../../conversation/fork.ts';
import { foreignSettingsWarning } from '../../conversation/config-delta.ts';
import { LogSeal } from '../../conversation/seal.ts';
import { createRenderer } from '../../client/create-renderer.ts';
import { JsonRenderer } from '../../client/json-renderer.ts';
import type { Renderer } from '../../client/renderer.ts';
import { connectToServer } from '../../client/socket-link.ts';
import { TerminalOutput } from '../../client/terminal-output.ts';
import { toJpError, UsageError } from '../../errors.ts';
import type { Secrets } from '../../redact.ts';
import { buildErrorResult, resultQuery, untrustedKeysWarning, type ResultWarning } from '../../report/result.ts';
import { decideWorkspaceTrust } from '../workspace-trust.ts';
import { untrustedWarning, type WorkspaceTrust } from '../../config/trust.ts';
import type { RunRequest } from '../../protocol/run-request.ts';
import { PROTOCOL_VERSION } from '../../protocol/messages.ts';
import { sandboxModes } from '../../sandbox/settings.ts';
import { spawnServer, type EarlyServer } from '../../server/spawn.ts';
import { acquireLock } from '../../workspace/lock.ts';
import { activateConversation, activeConversation, sessionKey } from '../../workspace/session.ts';
import { dataHome, prepareWorkspace, userSubdirectory } from '../../workspace/workspace.ts';
import { createTerminalClient, finishOutcome, withClientSignals } from '../client-session.ts';
import type { CommandContext, FlagValue } from '../context.ts';
import { watchedLive } from '../facts.ts';
import { settleIncompleteTurn } from './incomplete-turn.ts';
import { combineInput, defaultStdinWaitMilliseconds, readStandardInput } from '../stdin.ts';
import { noActiveConversation, noSessionMessage, requireExisting } from '../../conversation/targets.ts';

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

async function prepare(
  context: CommandContext,
  flags: QueryFlags,
  messageArgument: string | undefined,
  startedAt: number,
  on: { conversation(id: string): void; trust(trust: WorkspaceTrust): void },
): Promise<Prepared> {
  const { facts } = context;
  const workspace = context.workspace();
  await context.registerSecrets();

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
  const trust = await decideWorkspaceTrust(context, { ask: true });
  on.trust(trust);
  const untrusted = untrustedWarning(trust);
  if (untrusted) context.warn(untrusted);

  prepareWorkspace(workspace);
  const sessions = userSubdirectory(workspace, 'sessions');
  const session = sessionKey(facts.environment);
  // Which conversation: an existing one, a fork of one, or a new one (created once all checks pass).
  let existing: string | undefined;
  let forkSource: string | undefined;
  if (flags.id !== undefined) existing = requireExisting(workspace, flags.id);
  else if (flags.fork !== undefined) {
    // A bare --fork arrives as '' (see program.ts): the active conversation.
    const named = typeof flags.fork === 'string' && flags.fork !== '' ? flags.fork : undefined;
    if (named === undefined && !session) throw noActiveConversation(noSessionMessage('--fork names no conversation'));
    forkSource = named !== undefined ? requireExisting(workspace, named) : activeConversation(sessions, session);
    if (!forkSource || !conversationExists(workspace.conversationsDirectory, forkSource)) {
      throw new UsageError('no_active_conversation', '--fork needs a conversation: this session has no active one', {
        hint: 'Give one: --fork=<cid>.',
      });
    }
  } else if (!flags.new) {
    // With no session (no terminal, no JP_SESSION) nothing is active: a new conversation, unless --continue.
    if (!session && flags.continue) throw noActiveConversation(noSessionMessage('--continue names no conversation'));
    const active = activeConversation(sessions, session);
    if (active && conversationExists(workspace.conversationsDirectory, active)) existing = active;
    else if (flags.continue) {
      throw new UsageError(
        'no_active_conversation',
        '--continue needs a conversation: this session has no active one',
        { hint: 'Name it: jp query --continue --id=<cid>.' },
      );
    }
  }
  // The configuration, the model and the tools are loaded and checked by the process that runs the
  // turn (a usage error comes back as exit 2 before anything runs); this keeps the client light.
  const toolSelection = { noTools: flags.tools === false, enabled: flags.tool ?? [] };
  const conversationId =
    existing ??
    (forkSource
      ? forkWarned(context, workspace.conversationsDirectory, forkSource)
      : createConversation(workspace.conversationsDirectory, {
          title: titleOf(messageArgument, message, context.secrets),
        }).id);
  on.conversation(conversationId);

  const waitSeconds = Number(facts.environment.JP_LOCK_WAIT ?? '0');
  let lock: ReturnType<typeof acquireLock>;
  try {
    lock = acquireLock(userSubdirectory(workspace, 'locks'), conversationId, {
      waitSeconds: Number.isFinite(waitSeconds) ? waitSeconds : 0,
      role: flags.server === false ? 'in-process' : 'client',
      detached: flags.detach ?? false,
    });
  } catch (error) {
    // Not even locked (a full or read-only data directory): a conversation made for this command goes again.
    if (existing === undefined) removeConversation(workspace.conversationsDirectory, conversationId);
    throw error;
  }
  try {
    const events = readEventLog(eventsFile(workspace.conversationsDirectory, conversationId)).events;
    const { resume, discard, close } = await settleIncompleteTurn(context, conversationId, events, {
      continue: flags.continue ?? false,
      discardTurn: flags.discardTurn ?? false,
      target: flags.id !== undefined ? ` --id=${conversationId}` : '',
      message: messageArgument,
    });
    const request: RunRequest = {
      conversation_id: conversationId,
      workspace: { root: workspace.root, is_default: workspace.isDefault, tool_root: workspace.toolRoot },
      cwd: facts.cwd,
      message: message && message.trim() !== '' ? message : null,
      resume,
      discard_turn: discard,
      ...(close ? { close_turn: true } : {}),
      detached: flags.detach ?? false,
      config: {
        user_file: context.configInputs().userFile,
        workspace_file: context.configInputs().workspaceFile,
        cfg_arguments: context.globals.cfg,
        trusted_workspace_sha256: trust.trustedSha256,
        workspace_trust_state: trust.state,
        flags: configFlags(flags),
      },
      tools: { no_tools: toolSelection.noTools, enabled: toolSelection.enabled },
      lock_token: lock.token,
      log: context.logSettings(),
      run_log: path.join(userSubdirectory(workspace, 'processes'), `${conversationId}.log`),
      query: resultQuery(message ?? ''),
      started_at: startedAt,
    };
    return {
      conversationId,
      lock,
      request,
      events,
      created: existing === undefined,
      activate: () => activateConversation(sessions, session, conversationId),
    };
  } catch (error) {
    lock.release();
    // A failed command leaves nothing behind: a conversation it created is removed again.
    if (existing === undefined) removeConversation(workspace.conversationsDirectory, conversationId);
    throw error;
  }
}

async function execute(
  context: CommandContext,
  prepared: Prepared,
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
  prepared: Prepared,
  flags: QueryFlags,
  early: EarlyServer | undefined,
  renderer: Renderer,
): Promise<number> {
  const { conversationId, request } = prepared;
  if (flags.server === false) return (await import('./query-in-process.ts')).runInProcess(context, prepared, renderer);

  const workspace = context.workspace();
  const logger = await context.logger();
  logger.info('starting a query server', { conversation_id: conversationId, detach: flags.detach ?? false });
  let spawned: Awaited<ReturnType<typeof spawnServer>> | undefined;
  let undoActivation = (): void => {};
  let activationError: unknown;
  try {
    const starting = spawnServer(request, {
      entry: context.facts.programFile,
      environment: context.facts.environment,
      shareStderr: request.log.file === '-' && request.log.verbosity > 0 && !flags.detach,
      ...(early ? { early } : {}),
    });
    // While the server gets ready (the request is on its way to it), not after: this is a file
    // write with an fsync, and a detached query returns as soon as the server is ready.
    try {
      undoActivation = prepared.activate();
    } catch (error) {
      activationError = error;
    }
    spawned = await starting;
    logger.debug('query server ready', { pid: spawned.pid, socket: spawned.socketPath });
  } catch (error) {
    undoActivation();
    prepared.lock.release();
    if (prepared.created) removeConversation(workspace.conversationsDirectory, conversationId);
    throw error;
  }
  prepared.lock.forget();
  // The server runs the turn whatever happens here; a session file that could not be written is
  // reported once the lock is the server's, as it was when activation came after readiness.
  if (activationError !== undefined) throw activationError;

  if (flags.detach) {
    if (renderer instanceof JsonRenderer) renderer.detached(conversationId, spawned.pid);
    else {
      context.stdout.write(`${conversationId}\n`);
      renderer.status(
        `Detached: ${conversationId} (pid ${spawned.pid}). Watch it with \`jp conversation attach ${conversationId}\`.`,
      );
    }
    await renderer.flush();
    return 0;
  }
  const link = await connectToServer(spawned.socketPath);
  if (flags.stdio) {
    const { relayOverStreams } = await import('../../client/stdio-relay.ts');
    return relayOverStreams(
      link,
      (hello) => ({
        ...hello,
        version: PROTOCOL_VERSION,
        capability: spawned.capability,
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
    capability: spawned.capability,
    history: request.resume ? { resume: prepared.events } : 'none',
  });
  const outcome = await withClientSignals(context, client, true, () => client.run());
  return finishOutcome(renderer, outcome, conversationId, {
    text: request.query,
    model: null,
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

/** Forks `source`, warning about the settings it did not carry; returns the fork's id. */
function forkWarned(context: CommandContext, conversationsDirectory: string, source: string): string {
  const fork = forkConversation(
    conversationsDirectory,
    source,
    LogSeal.forUser(dataHome(context.facts.environment)),
    context.workspace().id,
  );
  if (fork.foreignSettings.length > 0) context.warn(foreignSettingsWarning(source, fork.foreignSettings));
  return fork.metadata.id;
}
