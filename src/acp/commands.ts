/**
 * The slash commands a session offers (ACP `available_commands_update`): the jp commands that act
 * on the session's conversation, run as the user would run them at a terminal, in the session's
 * directory. A prompt whose text starts with `/<name>` runs the command instead of a turn; its
 * output is the answer. Pure: the agent runs them (AcpSessionContext.jpCommand).
 */
import type { AvailableCommand, ContentBlock } from '@agentclientprotocol/sdk';
import { UsageError } from '../errors.ts';

interface SessionCommand extends AvailableCommand {
  /**
   * The jp command line for the conversation `id`, with what the user typed after the name; throws on input it does
   * not take.
   */
  argumentsOf(id: string, input: string): string[];
  /** Its output is a diff, shown as one. */
  diff?: boolean;
}

/** `N` or `--turn N` (a turn number), and the flags a command takes, from what the user typed. */
function turnArguments(command: string, input: string, flags: readonly string[]): string[] {
  const words = input.split(/\s+/).filter((word) => word !== '');
  const result: string[] = [];
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    const turn = word === '--turn' ? words[++index] : /^\d+$/.test(word) ? word : undefined;
    if (turn !== undefined && /^\d+$/.test(turn)) result.push('--turn', turn);
    else if (flags.includes(word)) result.push(word);
    else
      throw new UsageError('command_input_invalid', `/${command} does not take ${JSON.stringify(word)}`, {
        hint: `/${command} takes a turn number${flags.length > 0 ? ` and ${flags.join(', ')}` : ''}.`,
      });
  }
  return result;
}

const commands: readonly SessionCommand[] = [
  {
    name: 'compact',
    description:
      "Summarise this conversation's older turns now (jp conversation compact): the model is sent the summary from " +
      'then on; the log keeps everything',
    argumentsOf: (id, input) => {
      if (input.trim() !== '')
        throw new UsageError('command_input_invalid', '/compact takes nothing after it', {
          hint: 'Send /compact alone.',
        });
      return ['conversation', 'compact', id];
    },
  },
  {
    name: 'diff',
    description: 'What a turn changed in the files (jp conversation diff): the last turn that changed any, or turn N',
    input: { hint: '[turn number | --all]' },
    argumentsOf: (id, input) =>
      input.trim() === '--all'
        ? ['conversation', 'diff', id, '--all']
        : ['conversation', 'diff', id, ...turnArguments('diff', input, [])],
    diff: true,
  },
  {
    name: 'undo',
    description:
      'Put back the files the last change (or turn N and the ones after it) changed, as they were ' +
      '(jp conversation undo); /undo again takes it back',
    input: { hint: '[turn number] [--force]' },
    argumentsOf: (id, input) => ['conversation', 'undo', id, ...turnArguments('undo', input, ['--force'])],
  },
];

/** What the editor lists. */
export function availableCommands(): AvailableCommand[] {
  return commands.map(({ name, description, input }) => ({ name, description, ...(input ? { input } : {}) }));
}

/**
 * The command a prompt asks for: a prompt of text only whose first word is `/<name>` of a command
 * offered. Anything else (`/unknown`, a path such as `/etc/hosts is odd`) is an ordinary prompt.
 */
export function commandOf(
  blocks: readonly ContentBlock[],
  conversationId: string,
): { name: string; arguments: string[]; diff: boolean } | undefined {
  if (blocks.length === 0 || blocks.some((block) => block.type !== 'text')) return undefined;
  const text = blocks
    .map((block) => (block.type === 'text' ? block.text : ''))
    .join('')
    .trim();
  const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text);
  const command = match ? commands.find((entry) => entry.name === match[1]) : undefined;
  if (!match || !command) return undefined;
  return {
    name: command.name,
    arguments: command.argumentsOf(conversationId, match[2] ?? ''),
    diff: command.diff === true,
  };
}
