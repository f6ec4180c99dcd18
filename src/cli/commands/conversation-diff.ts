/**
 * `jp conversation diff [<cid>] [--turn N | --all]`: what a turn changed in the workspace's files
 * (default: the last turn that changed any; `--all`: the whole conversation), from its checkpoints
 * (DESIGN §10): a unified diff on stdout, coloured at a terminal (file content shown visibly, as
 * everything jp draws), plain in a pipe; `--json` one `file_changes` line listing each file with its
 * change. Reads the log without a lock: a run going on is shown as far as it has got.
 */
import { changeSets, selectChangeSets } from '../../checkpoint/change-sets.ts';
import { checkpointSettings } from '../../checkpoint/recorder.ts';
import { review, unifiedDiff } from '../../checkpoint/review.ts';
import { readEventLog } from '../../conversation/reader.ts';
import { eventsFile } from '../../conversation/store.ts';
import { targetConversation } from '../../conversation/targets.ts';
import { UsageError } from '../../errors.ts';
import { colorEnabled } from '../../output/channels.ts';
import { visible } from '../../output/sanitize.ts';
import type { CommandContext } from '../context.ts';
import { describeNotCovered, parseTurn } from './conversation-undo.ts';

export async function conversationDiffCommand(
  context: CommandContext,
  id: string | undefined,
  options: { turn?: string; all?: boolean },
): Promise<number> {
  const workspace = context.workspace();
  const conversationId = targetConversation(workspace, context.facts.environment, id);
  const turn = parseTurn(options.turn);
  if (turn !== undefined && options.all) throw new UsageError('flag_invalid', '--turn and --all cannot go together');
  const events = readEventLog(eventsFile(workspace.conversationsDirectory, conversationId)).events;
  const sets = selectChangeSets(changeSets(events), {
    ...(turn !== undefined ? { turn } : {}),
    ...(options.all ? { all: true } : {}),
    through: 'only',
  });
  if (sets.length === 0 && turn !== undefined)
    throw new UsageError(
      'no_such_change',
      `turn ${turn} of ${conversationId} has no checkpoint: it ran no tool that can change files`,
      {
        hint: '`jp conversation print` marks the turns that changed files.',
      },
    );
  const config = await context.config();
  const reviews = await review(
    {
      userDirectory: workspace.userDirectory,
      conversationId,
      environment: context.facts.environment,
      settings: checkpointSettings(config.value),
      indexName: `${conversationId}.review`,
    },
    sets,
    false,
  );
  const labels = sets.map((set) => set.label);
  if (context.format === 'json') {
    const files = [];
    for (const rootReview of reviews) {
      const { stats } = await unifiedDiff(rootReview);
      for (const change of rootReview.changes) {
        const stat = stats.get(change.path);
        files.push({
          path: change.path,
          root: rootReview.root,
          change: change.kind,
          binary: stat === 'binary',
          added_lines: stat && stat !== 'binary' ? stat.added : null,
          removed_lines: stat && stat !== 'binary' ? stat.removed : null,
          mode: change.toEntry?.gitMode ?? null,
        });
      }
    }
    const notCovered = reviews.flatMap((rootReview) =>
      rootReview.notCovered.map((entry) => ({ ...entry, root: rootReview.root })),
    );
    context.jsonLine(
      context.stdout,
      'file_changes',
      { changes: labels, files, not_covered: notCovered },
      conversationId,
    );
    return 0;
  }
  const changed = reviews.reduce((sum, rootReview) => sum + rootReview.changes.length, 0);
  if (changed === 0) {
    context.status(
      sets.length === 0
        ? `${conversationId} has changed no files (no checkpoint records a change).`
        : `${labels.join(', ')} of ${conversationId} changed no file that its checkpoints hold.`,
    );
  }
  const colour = context.stdout.isTerminal && colorEnabled(context.facts.environment, true);
  for (const rootReview of reviews) {
    if (reviews.length > 1 && rootReview.changes.length > 0) context.status(`in ${rootReview.root}:`);
    const text = (await unifiedDiff(rootReview)).text.toString('utf8');
    context.stdout.write(context.stdout.isTerminal ? drawn(text, colour) : text);
    if (rootReview.notCovered.length > 0)
      context.status(`not in the checkpoints, so not shown: ${describeNotCovered(rootReview.notCovered)}`);
  }
  if (changed > 0)
    context.status(
      `${labels.join(', ')}: ${changed === 1 ? '1 file' : `${changed} files`} ` +
        `changed; \`jp conversation undo${turn !== undefined ? ` --turn ${turn}` : ''}\` ` +
        `takes ${changed === 1 ? 'it' : 'them'} back.`,
    );
  return 0;
}

/** A diff for a terminal: each line shown visibly (file content is not jp's), in jp's colours. */
function drawn(text: string, colour: boolean): string {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines
    .map((line) => {
      const shown = visible(line, { singleLine: true });
      if (!colour) return shown;
      if (line.startsWith('diff --git') || line.startsWith('+++ ') || line.startsWith('--- '))
        return `\u001b[1m${shown}\u001b[0m`;
      if (line.startsWith('@@')) return `\u001b[36m${shown}\u001b[0m`;
      if (line.startsWith('+')) return `\u001b[32m${shown}\u001b[0m`;
      if (line.startsWith('-')) return `\u001b[31m${shown}\u001b[0m`;
      return shown;
    })
    .map((line) => `${line}\n`)
    .join('');
}
