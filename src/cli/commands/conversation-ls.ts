/**
 * `jp conversation ls [--json]`: every conversation with its status (server/listing.ts).
 */
import type { CommandContext } from '../context.ts';
import { visible } from '../../output/sanitize.ts';
import { listConversations } from '../../server/listing.ts';

export function conversationLsCommand(context: CommandContext): number {
  const conversations = listConversations(context.workspace(), context.facts.environment, {
    withUsage: context.format === 'json',
  });
  if (context.format === 'json') {
    context.stdout.write(JSON.stringify(conversations) + '\n');
    return 0;
  }
  if (conversations.length === 0) {
    context.status('No conversations yet; start one with `jp query "..."`.');
    return 0;
  }
  // At a terminal every row fits its width: a long status or title is cut with `…` (--json has them whole).
  const width = context.stdout.isTerminal ? context.stdout.columns : Infinity;
  const idWidth = Math.max(20, ...conversations.map((conversation) => conversation.id.length));
  const fixed = 2 + idWidth + 1 + 16 + 1;
  const statusWidth = Math.min(
    Math.max(6, ...conversations.map((conversation) => conversation.status.length)),
    Math.max(12, Math.floor((width - fixed) / 2)),
  );
  const titleWidth = Math.max(8, width - fixed - statusWidth - 1);
  const cut = (text: string, limit: number): string => (text.length > limit ? text.slice(0, limit - 1) + '…' : text);
  const lines = [`  ${'ID'.padEnd(idWidth)} ${'UPDATED'.padEnd(16)} ${'STATUS'.padEnd(statusWidth)} TITLE`];
  for (const conversation of conversations) {
    const updated = conversation.updated_at.replace('T', ' ').slice(0, 16);
    // A title is the model's or a log's text: shown visibly, on one line.
    const changed =
      conversation.changed_turns.length > 0 ? `[changed files: turn ${conversation.changed_turns.join(', ')}] ` : '';
    const title = cut(changed + visible(conversation.title ?? '', { singleLine: true }), titleWidth);
    const active = conversation.active ? '*' : ' ';
    const status = cut(visible(conversation.status, { singleLine: true }), statusWidth).padEnd(statusWidth);
    lines.push(`${active} ${conversation.id.padEnd(idWidth)} ${updated.padEnd(16)} ${status} ${title}`.trimEnd());
  }
  context.stdout.write(lines.join('\n') + '\n');
  return 0;
}
