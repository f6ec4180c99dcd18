/**
 * The composition root: argv is parsed here (commander), process facts are read once, and each
 * command's module is imported only when that command runs, so `jp conversation ls` does not load
 * the engine, the providers or the prompt library.
 */
import { Argument, Command, CommanderError, Option } from 'commander';
import { JpError, toJpError, UsageError } from '../errors.ts';
import { resolveFormat, type OutputFormat, type RequestedFormat } from '../output/channels.ts';
import type { Logger } from '../output/logger.ts';
import { buildErrorResult } from '../report/result.ts';
import { Secrets } from '../redact.ts';
import type { EarlyServer } from '../launch/spawn.ts';
import { shells, type Shell } from './shells.ts';
import { CommandContext, type ContextOptions } from './context.ts';
import { readFacts } from './facts.ts';
import { addGlobalOptions, readGlobalOptions } from './global-options.ts';
import { startHere } from './start-here.ts';
import { jpVersion } from '../version.ts';

type Action = (context: CommandContext, command: Command) => Promise<number> | number;

export function buildProgram(
  programFile: string,
  setExitCode: (code: number) => void,
  writeErr: (text: string) => void,
  /** A query server main.ts started from the command line alone (cli/early-server.ts). */
  startedServer?: EarlyServer,
): Command {
  const contextFor = (command: Command, nonInteractive = false, options: ContextOptions = {}): CommandContext =>
    new CommandContext(readFacts(programFile, nonInteractive), readGlobalOptions(command), undefined, options);
  const program = new Command('jp')
    .description('A command-line LLM agent for scripts, pipes, CI and background runs.')
    .version(`jp ${jpVersion}`, '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeErr, writeOut: (text) => process.stdout.write(text) })
    .exitOverride();
  addGlobalOptions(program);

  const wrap =
    (action: Action, nonInteractiveOf?: (command: Command) => boolean, options: ContextOptions = {}) =>
    async (...parameters: unknown[]): Promise<void> => {
      const command = parameters[parameters.length - 1] as Command;
      const context = contextFor(command, nonInteractiveOf?.(command) ?? false, options);
      let logger: Logger | undefined;
      try {
        await context.loadSafeDirectories();
        if (context.globals.verbosity > 0) logger = await context.logger();
        logger?.debug('command', { command: command.name(), arguments: process.argv.slice(2) });
        setExitCode(await action(context, command));
      } catch (error) {
        const jpError = toJpError(error);
        logger?.error(jpError.message, { code: jpError.code, exit_code: jpError.exitCode });
        setExitCode(context.reportError(jpError));
      }
      // Output is coalesced per event-loop turn; hand all of it to the OS before the process exits.
      await Promise.all([context.stdout.flush(), context.stderr.flush()]);
    };

  const leaf = (parent: Command, name: string): Command => addGlobalOptions(parent.command(name).exitOverride());

  leaf(program, 'init')
    .description('make the current directory a jp workspace (.jp/)')
    .action(wrap(async (context) => (await import('./commands/init.ts')).initCommand(context)));

  leaf(program, 'query')
    .alias('q')
    .description('ask the assistant; MESSAGE may be omitted when stdin is piped')
    .argument('[message...]', 'the message')
    .option('--new', 'start a new conversation')
    .option('--id <cid>', 'use this conversation')
    .option('--fork [cid]', 'branch the active conversation into a new one; --fork=<cid> branches that one')
    .option('--continue', 'resume the incomplete turn of the conversation')
    .option('--discard-turn', 'drop the incomplete turn, then run MESSAGE')
    .option('--detach', 'run in the background: print the conversation id and exit')
    .option('--non-interactive', 'never prompt, even at a terminal (also JP_NON_INTERACTIVE=1)')
    .option('-m, --model <provider/model>', 'e.g. openai/gpt-4.1-mini, anthropic/claude-sonnet-4-5, ollama/qwen3, test')
    .option('--tool <name>', 'enable a tool (repeatable)', (value: string, previous: string[] = []) => [
      ...previous,
      value,
    ])
    .option('--no-tools', 'offer no tools to the model')
    .option('--max-turns <n>', 'cap on LLM round trips in this turn')
    .option('--max-tokens <n>', 'token budget of this turn (input + output), like --max-turns')
    .option('--no-server', 'run the turn inside this process (no socket, no detach)')
    .option('--sandbox <mode>', 'how commands the model runs are confined: workspace-write, read-only or off')
    .option('--stdio', 'speak the client protocol on stdin/stdout instead of drawing the run (for programs: jp web)')
    .action(
      wrap(
        async (context, command) => {
          const early =
            command.opts<{ server?: boolean }>().server !== false && context.logSettings().file !== '-'
              ? (startedServer ??
                (await (await import('./early-server.ts')).startEarlyServer(programFile, context.facts.environment)))
              : undefined;
          const { queryCommand } = await import('./commands/query.ts');
          return queryCommand(context, command.args, command.opts(), early);
        },
        (command) => command.opts<{ nonInteractive?: boolean }>().nonInteractive === true,
      ),
    );

  const conversation = program
    .command('conversation')
    .alias('c')
    .description('list, show, attach to and manage conversations')
    .exitOverride();
  addGlobalOptions(conversation);
  leaf(conversation, 'ls')
    .description('list conversations with their status (running, waiting-for-input, interrupted, idle)')
    .action(wrap(async (context) => (await import('./commands/conversation-ls.ts')).conversationLsCommand(context)));
  // Every conversation subcommand takes its conversation as <cid> or as --id=<cid> (DESIGN §2).
  const onConversation = (name: string, cid: 'optional' | 'required'): Command =>
    leaf(conversation, name)
      .argument(
        '[cid]',
        cid === 'optional' ? 'conversation id (default: the active one)' : 'conversation id (or --id=<cid>)',
      )
      .option('--id <cid>', 'the conversation, as an option');
  onConversation('print', 'optional')
    .description('render a conversation from disk')
    .option('--last', 'only the last turn')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-print.ts')).conversationPrintCommand(
          context,
          conversationOf(command, 'optional'),
          command.opts(),
        ),
      ),
    );
  onConversation('attach', 'optional')
    .description('connect to a running query: watch it live and answer its questions')
    .addOption(
      new Option('--tail <n>', 'show the last N content events first (0: live only; default: the current turn)'),
    )
    .option('--read-only', 'watch only; never answer prompts')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-attach.ts')).conversationAttachCommand(
          context,
          conversationOf(command, 'optional'),
          command.opts(),
        ),
      ),
    );
  onConversation('kill', 'optional')
    .description('stop a running query (persisted, resumable); --force kills it')
    .option('--force', 'SIGKILL the process and its tools')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-kill.ts')).conversationKillCommand(
          context,
          conversationOf(command, 'optional'),
          command.opts(),
        ),
      ),
    );
  onConversation('wait', 'optional')
    .description("block until the conversation's run stops; exit with its exit code")
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-wait.ts')).conversationWaitCommand(
          context,
          conversationOf(command, 'optional'),
        ),
      ),
    );
  onConversation('compact', 'optional')
    .description('summarise older turns now: the model is sent the summary instead of them from then on')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-compact.ts')).conversationCompactCommand(
          context,
          conversationOf(command, 'optional'),
        ),
      ),
    );
  onConversation('diff', 'optional')
    .description('what a turn changed in the files (default: the last turn that changed any), as a unified diff')
    .option(
      '--turn <n>',
      'the turn to show (1 is the first; `jp conversation print` marks the ones that changed files)',
    )
    .option('--all', 'everything the conversation changed')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-diff.ts')).conversationDiffCommand(
          context,
          conversationOf(command, 'optional'),
          command.opts(),
        ),
      ),
    );
  onConversation('undo', 'optional')
    .description('put back the files a turn (and every later one) changed, as they were before it')
    .option('--turn <n>', 'undo this turn and the turns after it (default: the last change, an undo included)')
    .option('--force', 'also take back files changed outside jp since')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-undo.ts')).conversationUndoCommand(
          context,
          conversationOf(command, 'optional'),
          command.opts(),
        ),
      ),
    );
  onConversation('rm', 'required')
    .description('remove a conversation')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-manage.ts')).conversationRmCommand(
          context,
          conversationOf(command, 'required'),
        ),
      ),
    );
  onConversation('use', 'required')
    .description("make a conversation this session's active one")
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-manage.ts')).conversationUseCommand(
          context,
          conversationOf(command, 'required'),
        ),
      ),
    );
  onConversation('fork', 'required')
    .description('copy the complete turns of a conversation into a new one')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/conversation-manage.ts')).conversationForkCommand(
          context,
          conversationOf(command, 'required'),
        ),
      ),
    );

  leaf(program, 'trust')
    .description("trust this workspace's .jp/config.toml as it is now (its settings that need trust apply only then)")
    .option('--revoke', 'do not trust it: runs ignore its settings that need trust, and never ask about it')
    .option('--show', 'print whether it is trusted and which of its settings need trust')
    .action(
      wrap(async (context, command) => (await import('./commands/trust.ts')).trustCommand(context, command.opts())),
    );

  leaf(program, 'approvals')
    .description('the approvals you gave at prompts "always in this workspace", and revoking them')
    .argument('[action]', 'revoke')
    .argument('[numbers...]', 'the approvals to revoke, by the numbers `jp approvals` shows')
    .option('--all', 'with revoke: every approval of this workspace')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/approvals.ts')).approvalsCommand(
          context,
          command.args[0],
          command.args.slice(1),
          command.opts(),
        ),
      ),
    );

  const config = program.command('config').description('inspect the configuration').exitOverride();
  addGlobalOptions(config);
  leaf(config, 'show')
    .description('the merged configuration with where each value came from')
    .option('--effective <tool>', "a tool's resolved policies per inquiry kind, and the layer that set each")
    .option('--id <cid>', 'with the settings this conversation recorded (a layer of every query on it), listed')
    .action(
      wrap(async (context, command) =>
        (await import('./commands/config-show.ts')).configShowCommand(context, command.opts()),
      ),
    );

  const sandbox = program.command('sandbox').description('the command sandbox').exitOverride();
  addGlobalOptions(sandbox);
  leaf(sandbox, 'check')
    .description('what the command sandbox can do on this machine; exits non-zero when it cannot run')
    .action(wrap(async (context) => (await import('./commands/sandbox-check.ts')).sandboxCheckCommand(context)));

  const seal = program
    .command('seal')
    .description('the key that proves which conversation logs your jp wrote')
    .exitOverride();
  addGlobalOptions(seal);
  leaf(seal, 'rotate')
    .description('make a new log seal key: what was sealed with the old one stays readable and carries no authority')
    .action(wrap(async (context) => (await import('./commands/seal-rotate.ts')).sealRotateCommand(context)));

  const mcp = program.command('mcp').description('MCP servers').exitOverride();
  addGlobalOptions(mcp);
  leaf(mcp, 'ls')
    .description('each configured MCP server: its transport, its state (ready, failed: why, disabled) and its tools')
    .action(wrap(async (context) => (await import('./commands/mcp-ls.ts')).mcpLsCommand(context)));

  leaf(program, 'acp')
    .description('speak the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains, Neovim)')
    .option(
      '-m, --model <provider/model>',
      'the model of every prompt, e.g. anthropic/claude-sonnet-4-5 (default: assistant.model); ' +
        'repeat it to offer more models in the editor',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .action(
      wrap(
        async (context, command) => (await import('./commands/acp.ts')).acpCommand(context, command.opts()),
        () => true,
        // Editors start agents from wherever they are: each session names its workspace (its cwd).
        { launchWorkspace: false },
      ),
    );

  leaf(program, 'web')
    .description('serve a page showing every run (this machine, and SSH hosts): watch, answer, continue, stop')
    .option('--port <n>', 'the port (default: a free one)')
    .option('--bind <address>', 'listen on this address instead of 127.0.0.1 (read the README first)')
    .option(
      '--host <ssh-host>',
      'an SSH host whose runs to show too (repeatable; adds to [web] hosts)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--stdio', "serve this machine's runs on stdin/stdout to a jp web elsewhere (what --host runs over ssh)")
    .action(wrap(async (context, command) => (await import('./commands/web.ts')).webCommand(context, command.opts())));

  leaf(program, 'completion')
    .description('print the shell completion script (commands, flags, providers, conversation ids)')
    .addArgument(new Argument('<shell>', 'the shell').choices(shells))
    .action(
      wrap(async (context, command) => {
        const { completionScript } = await import('./completion.ts');
        context.stdout.write(completionScript(command.args[0] as Shell));
        return 0;
      }),
    );
  // What the completion scripts ask at every Tab: the candidates for the last word, one a line;
  // with --describe (zsh, fish), a candidate that has a description is followed by a tab and it.
  program
    .command('__complete', { hidden: true })
    .option('--describe')
    .argument('[words...]')
    .allowUnknownOption()
    .helpOption(false)
    .exitOverride()
    .action(async (words: string[], options: { describe?: boolean }) => {
      // Loaded here: completion knows the tools, which every other command would load for nothing.
      const { completionCandidates } = await import('./completion.ts');
      const lines = completionCandidates(program, words, process.cwd(), process.env).map((candidate) =>
        options.describe && candidate.description
          ? `${candidate.value}\t${candidate.description}\n`
          : `${candidate.value}\n`,
      );
      process.stdout.write(lines.join(''));
    });
  return program;
}

/** The conversation a subcommand names, as <cid> or --id=<cid> (not both, unless they agree). */
function conversationOf(command: Command, cid: 'optional'): string | undefined;
function conversationOf(command: Command, cid: 'required'): string;
function conversationOf(command: Command, cid: 'optional' | 'required'): string | undefined {
  const positional = command.args[0];
  const option = command.opts<{ id?: string }>().id;
  if (positional !== undefined && option !== undefined && positional !== option) {
    throw new UsageError('flags_conflict', `two conversations given: ${positional} and --id=${option}`, {
      hint: 'Give the conversation once, as <cid> or as --id=<cid>.',
    });
  }
  const id = option ?? positional;
  if (id === undefined && cid === 'required') {
    throw new UsageError('conversation_missing', `jp conversation ${command.name()} needs a conversation id`, {
      hint: `jp conversation ${command.name()} <cid>, or --id=<cid>; \`jp conversation ls\` lists them.`,
    });
  }
  return id;
}

/**
 * `--fork` takes its conversation only attached, `--fork=<cid>` (DESIGN §2): a bare `--fork` forks
 * the active conversation, and the word after it is the message, never an id. Commander would take
 * that word as the option's value, so a bare `--fork` is given an empty value before parsing.
 */
function withAttachedForkValue(argv: string[]): string[] {
  const endOfOptions = argv.indexOf('--');
  return argv.map((argument, index) =>
    argument === '--fork' && (endOfOptions === -1 || index < endOfOptions) ? '--fork=' : argument,
  );
}

/**
 * Runs the CLI; resolves with the exit code. A query server started for it (startedServer) that no
 * run took is ended before this resolves.
 */
export async function main(argv: string[], programFile: string, startedServer?: EarlyServer): Promise<number> {
  try {
    return await parseAndRun(argv, programFile, startedServer);
  } finally {
    await startedServer?.discard();
  }
}

async function parseAndRun(argv: string[], programFile: string, startedServer?: EarlyServer): Promise<number> {
  let exitCode = 0;
  // Commander's own messages (a usage error, help after one) are held until the format is known.
  let commanderOutput = '';
  const program = buildProgram(
    programFile,
    (code) => (exitCode = code),
    (text) => (commanderOutput += text),
    startedServer,
  );
  // The command whose options commander was parsing when it stopped (the format is one of them).
  let reached = program;
  const follow = (command: Command): void => {
    command.hook('preSubcommand', (_parent, subcommand) => {
      reached = subcommand;
    });
    command.commands.forEach(follow);
  };
  follow(program);
  try {
    await program.parseAsync(withAttachedForkValue(argv), { from: 'user' });
  } catch (error) {
    const format = formatOf(reached);
    if (!(error instanceof CommanderError))
      return reportEarlyError(reached, format, JpError.isInstance(error) ? error : toJpError(error));
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
    if (error.code === 'commander.help' && reached === program) {
      // Bare `jp` (no command): where to start, then the commands; a usage case (exit 2).
      process.stderr.write(`${startHere(programFile, process.env)}\n${commanderOutput}`);
      return 2;
    }
    if (format !== 'json') {
      process.stderr.write(commanderOutput);
      return error.exitCode === 0 ? 0 : 2;
    }
    const message = error.message.replace(/^error: /, '');
    // Stopped before its command was reached (`jp --json -m x/y query`: an option of query before
    // it): the command is still the first word that names one.
    const commandNames = new Set(program.commands.map((command) => command.name()));
    const named =
      reached === program
        ? program.commands.find((command) => command.name() === argv.find((word) => commandNames.has(word)))
        : undefined;
    return reportEarlyError(
      named ?? reached,
      format,
      new UsageError('usage', message, {
        hint:
          'Run `jp --help` or `jp <command> --help` for usage; ' +
          "a command's options go after it (jp --json query -m <model> ...).",
      }),
    );
  }
  return exitCode;
}

function formatOf(command: Command): OutputFormat {
  const options = command.optsWithGlobals<{ json?: boolean; format?: RequestedFormat }>();
  return resolveFormat(options.json ? 'json' : (options.format ?? 'auto'), process.stdout.isTTY === true);
}

/** Errors before a command context exists (bad flags): still in the requested format. */
function reportEarlyError(command: Command, format: OutputFormat, error: JpError): number {
  if (format === 'json') {
    const base = { v: 1, ts: new Date().toISOString(), conversation_id: null };
    const hint = error.hint ? { hint: error.hint } : {};
    process.stderr.write(
      JSON.stringify({
        ...base,
        type: 'error',
        code: error.code,
        message: error.message,
        ...hint,
        exit_code: error.exitCode,
      }) + '\n',
    );
    if (command.name() === 'query') {
      process.stdout.write(
        JSON.stringify(
          buildErrorResult({
            conversationId: null,
            query: '',
            error,
            model: null,
            startedAt: Date.now(),
            secrets: new Secrets(),
          }),
        ) + '\n',
      );
    }
  } else {
    process.stderr.write(`error: ${error.message}\n${error.hint ? `  ${error.hint}\n` : ''}`);
  }
  return error.exitCode;
}
