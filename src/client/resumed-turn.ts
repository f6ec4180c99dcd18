/**
 * What the text renderer (text-renderer.ts) shows when a run resumes an incomplete turn (RFD 024),
 * as chrome lines it writes to stderr: the conversation, where the turn resumes, and each tool call
 * of the turn, done or pending.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { describeTurn, type IncompleteTurn } from '../conversation/turn-state.ts';
import { oneLine } from './chrome-text.ts';
import { summarizeArguments } from './renderer.ts';
import type { PaletteRole } from './theme.ts';

/**
 * The lines that say what a resumed turn (RFD 024) resumes: each tool call of the turn with its
 * arguments, done (✓) or pending (⏸), and what a pending one waits for; with the name of each tool
 * call of the turn, by id. Undefined when the events hold no turn.
 */
export function resumedTurn(
  events: readonly ConversationEvent[],
  conversationId: string,
  paint: (text: string, role: PaletteRole) => string,
): { lines: string[]; toolNames: Map<string, string> } | undefined {
  const start = events.map((event) => event.type).lastIndexOf('turn_start');
  if (start === -1) return undefined;
  const lines: string[] = [];
  const toolNames = new Map<string, string>();
  const turn: IncompleteTurn = describeTurn({ start, events: events.slice(start), final: undefined });
  const responses = new Map<string, ConversationEvent & { type: 'tool_call_response' }>();
  const started = new Set<string>();
  for (const event of turn.turn.events) {
    if (event.type === 'tool_call_request') toolNames.set(event.id, event.name);
    if (event.type === 'tool_call_response') responses.set(event.id, event);
    if (event.type === 'tool_call_start') started.add(event.id);
  }
  const pendingInquiry = new Map(turn.pendingInquiries.map((event) => [event.tool_call_id, event.inquiry]));
  lines.push(`Resuming incomplete turn for ${conversationId}…`);
  lines.push(paint(`⏳ Incomplete turn (${turn.resumePoint})`, 'warning'));
  for (const event of turn.turn.events) {
    if (event.type !== 'tool_call_request') continue;
    const header = `${oneLine(event.name)} ${summarizeArguments(event.arguments, 100)}`;
    const response = responses.get(event.id);
    if (response) {
      const outcome =
        response.outcome === 'ok' || (response.outcome === undefined && !response.is_error)
          ? 'completed'
          : (response.outcome ?? 'error');
      lines.push(`  ${paint('✓', 'string')} ${header} — ${outcome}`);
      continue;
    }
    const inquiry = pendingInquiry.get(event.id);
    const waiting =
      inquiry?.kind === 'tool_question'
        ? oneLine(JSON.stringify(inquiry.question.text))
        : inquiry?.kind === 'deliver_tool_result'
          ? 'send its result?'
          : inquiry?.kind === 'run_tool'
            ? 'run it?'
            : inquiry?.kind === 'escalate'
              ? inquiry.needs === 'git'
                ? 'write inside .git/?'
                : 'run it outside the sandbox?'
              : started.has(event.id)
                ? 'was running when jp stopped'
                : 'not run yet';
    lines.push(`  ${paint('⏸', 'warning')} ${header} — ${waiting}`);
  }
  return { lines, toolNames };
}
