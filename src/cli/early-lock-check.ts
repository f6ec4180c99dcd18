/**
 * A cheap look, before `jp query --id=<cid>` prespawns its query server, at whether a live process
 * holds that conversation. Such a query is refused (exit 5) a moment later, and a server booting
 * beside it for nothing doubles its cost: 50 refused queries at once would start 100 processes.
 *
 * Contract: only a hint. "Held" means the lock file names a live holder right now; the query then
 * runs its normal checks, and if it needs a server after all (the holder finished meanwhile) it
 * starts one itself. Anything unusual (no --id, JP_LOCK_WAIT, --new or --fork, no workspace,
 * unreadable files) answers "not held", which is the behaviour without this check.
 */
import path from 'node:path';
import { lockHolder } from '../workspace/lock.ts';
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

export function explicitTargetIsLocked(argv: readonly string[], cwd: string, environment: NodeJS.ProcessEnv): boolean {
  const conversationId = explicitConversationId(argv);
  if (!conversationId || !/^[A-Za-z0-9._-]+$/.test(conversationId)) return false;
  if (argv.includes('--new') || argv.some((argument) => argument === '--fork' || argument.startsWith('--fork='))) return false;
  const wait = Number(environment.JP_LOCK_WAIT ?? '0');
  if (!Number.isFinite(wait) || wait > 0) return false;
  try {
    const workspace = resolveWorkspace(cwd, environment);
    return lockHolder(path.join(workspace.userDirectory, 'locks'), conversationId) !== undefined;
  } catch {
    return false;
  }
}
