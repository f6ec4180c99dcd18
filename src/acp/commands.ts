/**
 * The slash commands a session offers (ACP `available_commands_update`): the jp commands that act
 * on the session's conversation, run as the user would run them at a terminal, in the session's
 * directory. A prompt whose text starts with `/<name>` runs the command instead of a turn; its
 * output is the answer. Pure: the agent runs them (AcpSessionContext.jpCommand).
 */
import type { AvailableCommand, ContentBlock } from '@agentclientprotocol/sdk';

interface SessionCommand extends AvailableCommand {
  /** The jp command line for the conversation `id`, with what the user typed after the name. */
  argumentsOf(id: string, input: string): string[];
}

const commands: readonly SessionCommand[] = [
  {
    name: 'compact',
    description:
      "Summarise this conversation's older turns now (jp conversation compact): the model is sent the summary from then on; the log keeps everything",
    argumentsOf: (id) => ['conversation', 'compact', id],
  },
];

/** What the editor lists. */
export function availableCommands(): AvailableCommand[] {
  return commands.map(({ name, description }) => ({ name, description }));
}

/**
 * The command a prompt asks for: a prompt of text only whose first word is `/<name>` of a command
 * offered. Anything else (`/unknown`, a path such as `/etc/hosts is odd`) is an ordinary prompt.
 */
export function commandOf(
  blocks: readonly ContentBlock[],
  conversationId: string,
): { name: string; arguments: string[] } | undefined {
  if (blocks.length === 0 || blocks.some((block) => block.type !== 'text')) return undefined;
  const text = blocks
    .map((block) => (block.type === 'text' ? block.text : ''))
    .join('')
    .trim();
  const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text);
  const command = match ? commands.find((entry) => entry.name === match[1]) : undefined;
  if (!match || !command) return undefined;
  return { name: command.name, arguments: command.argumentsOf(conversationId, match[2] ?? '') };
}
