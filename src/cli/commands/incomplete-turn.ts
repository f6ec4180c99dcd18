/**
 * A new message on a conversation whose last turn is unfinished (DESIGN §7). Only a decision
 * blocks: a turn holding a pending inquiry, or a call that may or may not have taken effect, needs
 * `--continue` or `--discard-turn` (asked at a terminal, a menu of the exact commands without
 * one); any other unfinished turn is closed as interrupted (kept in the log), with one line on
 * stderr, and the message goes ahead.
 */
import { TerminalPrompter } from '../../client/prompts.ts';
import type { ConversationEvent } from '../../conversation/events.ts';
import {
  decisionOf,
  findIncompleteTurn,
  startedPendingCalls,
  turnToResume,
  type IncompleteTurn,
  type TurnDecision,
} from '../../conversation/turn-state.ts';
import { JpError, UsageError } from '../../errors.ts';
import type { CommandContext } from '../context.ts';
import { canPrompt } from '../facts.ts';

export interface IncompleteTurnChoice {
  resume: boolean;
  discard: boolean;
  /** Close the unfinished turn (RunRequest.close_turn). */
  close: boolean;
}

/**
 * What becomes of the conversation's incomplete turn, if any: the flags' choice, the user's at a
 * terminal, or closed when it holds nothing to decide. `target`: how the menu names the
 * conversation (` --id=<cid>` or nothing); `message`: the message as given on the command line.
 */
export async function settleIncompleteTurn(
  context: CommandContext,
  conversationId: string,
  events: readonly ConversationEvent[],
  asked: { continue: boolean; discardTurn: boolean; target: string; message: string | undefined },
): Promise<IncompleteTurnChoice> {
  const choice = { resume: asked.continue, discard: asked.discardTurn, close: false };
  const incomplete = choice.resume
    ? turnToResume(conversationId, events, Boolean(asked.message))
    : findIncompleteTurn(events);
  if (!incomplete || choice.resume || choice.discard) return choice;
  const decision = decisionOf(incomplete, await sideEffectFreeTools(incomplete));
  if (!decision) {
    context.status(
      `Closing the unfinished turn of ${conversationId} (${incomplete.resumePoint}; nothing in it to decide) as ` +
        `interrupted; it stays in the log. Sending the new message.`,
    );
    return { ...choice, close: true };
  }
  const answer = await askAboutIncompleteTurn(context, conversationId, describeDecision(decision), asked);
  return { ...choice, resume: answer === 'resume', discard: answer === 'discard' };
}

/**
 * The builtin tools known to change nothing, when the turn has a call that started and has no
 * result (only then are the tools loaded): such a call's outcome is known, nothing to decide.
 */
async function sideEffectFreeTools(incomplete: IncompleteTurn): Promise<Set<string>> {
  if (startedPendingCalls(incomplete).length === 0) return new Set();
  const { builtinTools } = await import('../../tools/registry.ts');
  return new Set(
    builtinTools({ protectedDirectories: [] })
      .filter((tool) => !tool.sideEffects)
      .map((tool) => tool.name),
  );
}

function describeDecision(decision: TurnDecision): string {
  return decision.kind === 'pending inquiry'
    ? 'pending inquiry'
    : `a ${decision.tool} call that may or may not have taken effect`;
}

/** A message as the user would type it again: double quotes where that is safe, else single. */
function shellQuoted(message: string | undefined): string {
  if (message === undefined || message.length > 60 || message.includes('\n')) return '"..."';
  if (!/["$`\\!]/.test(message)) return `"${message}"`;
  return `'${message.replace(/'/g, `'\\''`)}'`;
}

/** The ways on from an incomplete turn, as exact commands with what each does, aligned. */
function incompleteTurnMenu(target: string, message: string | undefined): string {
  const quoted = shellQuoted(message);
  const rows: [string, string][] = [
    [`jp query --continue${target}`, 'finish the interrupted turn'],
    [`jp query --discard-turn${target} ${quoted}`, 'drop it (kept on disk, marked discarded) and send this message'],
    [`jp query --new ${quoted}`, 'send this message in a new conversation'],
  ];
  const width = Math.max(...rows.map(([command]) => command.length));
  return rows.map(([command, effect]) => `${command.padEnd(width)}   ${effect}`).join('\n');
}

/** A new message on a conversation with an incomplete turn: resume it, drop it, or stop. */
async function askAboutIncompleteTurn(
  context: CommandContext,
  conversationId: string,
  resumePoint: string,
  asked: { target: string; message: string | undefined },
): Promise<'resume' | 'discard'> {
  const hint = incompleteTurnMenu(asked.target, asked.message);
  if (!canPrompt(context.facts)) {
    throw new UsageError(
      'incomplete_turn',
      `conversation ${conversationId} has an incomplete turn (${resumePoint}); nothing was sent. Choose:`,
      { hint },
    );
  }
  const prompter = new TerminalPrompter({
    environment: context.facts.environment,
    configuredTheme: () => context.configuredTheme(),
  });
  try {
    const choice = await prompter.choose<'resume' | 'discard' | 'cancel'>(
      `Conversation ${conversationId} has an incomplete turn (${resumePoint}).`,
      [
        { value: 'resume', name: 'resume it, then send the new message' },
        { value: 'discard', name: 'discard it (kept on disk, marked discarded) and send the new message' },
        { value: 'cancel', name: 'cancel: do nothing' },
      ],
      new AbortController().signal,
    );
    if (choice === 'cancel') throw new UsageError('cancelled', 'cancelled: nothing was sent', { hint });
    return choice;
  } catch (error) {
    if (JpError.isInstance(error)) throw error;
    throw new UsageError('cancelled', 'cancelled: nothing was sent', { hint });
  } finally {
    prompter.close();
  }
}
