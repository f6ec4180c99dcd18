/**
 * A cheap look, before the program loads, at whether a live process holds the conversation that
 * `jp query --id=<cid>` names. Used by the launcher (launcher.ts) in two ways:
 * - held: the query will be refused (exit 5), so no query server is prespawned for it (50 refused
 *   queries at once would otherwise start 100 processes);
 * - held, and nothing else on the command line could end the query differently (see
 *   onlyTheLockDecides): the launcher prints the refusal itself, the very error the program would
 *   print, without loading the program. A refusal then costs about one bare Node start-up.
 *
 * Contract: "held" means the lock file names a live holder right now, which is what the program's
 * own check would find at this instant. Anything unusual (no --id, JP_LOCK_WAIT, --new or --fork,
 * no workspace, unreadable files) answers "not held", which is the behaviour without this check.
 */
import { fstatSync } from 'node:fs';
import path from 'node:path';
import { conversationExists, conversationIdPattern } from '../conversation/store.ts';
import type { LockedError } from '../errors.ts';
import { refusalIfHeld } from '../workspace/lock.ts';
import { resolveWorkspace } from '../workspace/workspace.ts';

/** The `--id` value of a query command line, if it names one. */
export function explicitConversationId(argv: readonly string[]): string | undefined {
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument === '--') return undefined;
    if (argument.startsWith('--id=')) return argument.slice('--id='.length);
    if (argument === '--id') return argv[index + 1];
  }
  return undefined;
}

/**
 * Whether the program, given this command line, would reach its lock check with nothing before it
 * that could end differently (a usage error, a missing message, JSON output): `query` or `q`, then
 * exactly one `--id`, any `-m/--model` and `-c/--cfg` (the client passes both on unchecked: the
 * process that runs the turn checks them) and a message of at least one non-blank word. Any other
 * option, `--`, or an option value that looks like an option sends the command line to the program.
 */
export function onlyTheLockDecides(argv: readonly string[]): boolean {
  if (argv[0] !== 'query' && argv[0] !== 'q') return false;
  let ids = 0;
  let hasMessage = false;
  for (let index = 1; index < argv.length; index++) {
    const argument = argv[index]!;
    if (argument.startsWith('--id=')) ids++;
    else if (argument.startsWith('--model=') || argument.startsWith('--cfg=')) continue;
    else if (['--id', '-m', '--model', '-c', '--cfg'].includes(argument)) {
      const value = argv[++index];
      if (value === undefined || value.startsWith('-')) return false;
      if (argument === '--id') ids++;
    } else if (argument.startsWith('-')) return false;
    else if (argument.trim() !== '') hasMessage = true;
  }
  return ids === 1 && hasMessage;
}

/**
 * Whether the program would leave stdin alone: it reads a pipe or a socket before its lock check
 * (a writer then sees its data taken, not a broken pipe), but not a terminal or a device, and
 * reading a regular file changes nothing anyone can see.
 */
function stdinIsLeftAlone(): boolean {
  try {
    const stat = fstatSync(0);
    return !stat.isFIFO() && !stat.isSocket();
  } catch {
    return true;
  }
}

export interface EarlyLockCheck {
  held: boolean;
  /** Set when the launcher can print the program's refusal itself (held, and onlyTheLockDecides). */
  refusal?: LockedError;
}

export function checkExplicitTarget(argv: readonly string[], cwd: string, environment: NodeJS.ProcessEnv): EarlyLockCheck {
  const conversationId = explicitConversationId(argv);
  // Only a well-formed id can have a lock (and only such an id is safe to put in a path).
  if (!conversationId || !conversationIdPattern.test(conversationId)) return { held: false };
  if (argv.includes('--new') || argv.some((argument) => argument === '--fork' || argument.startsWith('--fork='))) return { held: false };
  const wait = Number(environment.JP_LOCK_WAIT ?? '0');
  if (!Number.isFinite(wait) || wait > 0) return { held: false };
  try {
    const workspace = resolveWorkspace(cwd, environment);
    const refusal = refusalIfHeld(path.join(workspace.userDirectory, 'locks'), conversationId);
    if (!refusal) return { held: false };
    // The program first checks that the conversation exists.
    const certain = onlyTheLockDecides(argv) && stdinIsLeftAlone() && conversationExists(workspace.conversationsDirectory, conversationId);
    return certain ? { held: true, refusal } : { held: true };
  } catch {
    return { held: false };
  }
}
