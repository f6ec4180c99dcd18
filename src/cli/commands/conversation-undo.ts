/**
 * `jp conversation undo [<cid>] [--turn N] [--force]`: puts back the files a turn (and every later
 * change) changed, as they were before it (src/checkpoint/undo.ts). Says what it did on stderr, or
 * in one `undone` line with `--json`. A file changed outside jp since stops it (exit 1) unless
 * `--force`; a running conversation is refused (exit 5).
 */
import { checkpointSettings } from '../../checkpoint/recorder.ts';
import type { NotCovered } from '../../checkpoint/store.ts';
import { undoChanges } from '../../checkpoint/undo.ts';
import { targetConversation } from '../../conversation/targets.ts';
import { UsageError } from '../../errors.ts';
import type { CommandContext } from '../context.ts';

export async function conversationUndoCommand(
  context: CommandContext,
  id: string | undefined,
  options: { turn?: string; force?: boolean },
): Promise<number> {
  const workspace = context.workspace();
  const conversationId = targetConversation(workspace, context.facts.environment, id);
  const turn = parseTurn(options.turn);
  const config = await context.config();
  const report = await undoChanges({
    workspace,
    conversationId,
    environment: context.facts.environment,
    settings: checkpointSettings(config.value),
    ...(turn !== undefined ? { turn } : {}),
    ...(options.force ? { force: true } : {}),
  });
  if (context.format === 'json') {
    context.jsonLine(
      context.stdout,
      'undone',
      {
        undone: report.undone,
        files: report.roots.flatMap((root) => root.files.map((file) => ({ ...file, root: root.root }))),
        forced: report.roots.flatMap((root) => root.forced.map((file) => ({ path: file, root: root.root }))),
        not_covered: report.roots.flatMap((root) => root.notCovered.map((entry) => ({ ...entry, root: root.root }))),
      },
      conversationId,
    );
    return 0;
  }
  for (const root of report.roots) {
    for (const file of root.files)
      context.status(
        `  ${file.change === 'added' ? 'restored' : file.change === 'deleted' ? 'removed ' : 'reverted'} ${file.path}`,
      );
    if (root.forced.length > 0)
      context.warn(`overwrote changes made outside jp since (--force): ${root.forced.join(', ')}`);
    if (root.notCovered.length > 0)
      context.warn(`not in the checkpoints, so left as they are: ${describeNotCovered(root.notCovered)}`);
  }
  const count = report.roots.reduce((sum, root) => sum + root.files.length, 0);
  context.status(
    `Undid ${report.undone.join(', ')} of ${conversationId}: ${count === 1 ? '1 file' : `${count} files`} back ` +
      `as ${count === 1 ? 'it was' : 'they were'}. \`jp conversation undo\` again takes this undo back.`,
  );
  return 0;
}

export function parseTurn(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(value))
    throw new UsageError('flag_invalid', `--turn ${JSON.stringify(value)} is not a turn number (1 is the first turn)`);
  return Number(value);
}

export function describeNotCovered(entries: readonly NotCovered[]): string {
  const named = entries
    .slice(0, 10)
    .map(
      (entry) =>
        `${entry.path} (${entry.reason === 'size' ? 'over checkpoints.max_file_size' : 'a git repository of its own'})`,
    );
  return `${named.join(', ')}${entries.length > 10 ? ` and ${entries.length - 10} more` : ''}`;
}
