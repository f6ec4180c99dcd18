/**
 * `jp seal rotate` (DESIGN §10 "A seal binds an event to its place"): replaces this user's log seal
 * key. Conversations stay readable; what was sealed with the old key (settings recorded by earlier
 * queries, approvals of an incomplete turn) carries no authority from now on: settings are ignored
 * and named, approvals asked again, as for a copied log. For a key that may have been read by
 * someone else (a command that ran outside the sandbox, a backup, another machine).
 */
import { LogSeal, sealKeyFile } from '../../conversation/seal.ts';
import { dataHome } from '../../workspace/workspace.ts';
import type { CommandContext } from '../context.ts';

export function sealRotateCommand(context: CommandContext): number {
  const home = dataHome(context.facts.environment);
  LogSeal.rotate(home);
  context.status(
    `Made a new log seal key (${sealKeyFile(home)}). Conversations stay readable; settings and approvals recorded ` +
      `before now carry no authority: pass settings again with --cfg, and approvals of an incomplete turn are ` +
      `asked again.`,
  );
  return 0;
}
