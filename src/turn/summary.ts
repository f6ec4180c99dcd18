/**
 * What a turn did, derived from its events: the answer text, each tool call and how it ended,
 * the inquiries no human could answer. The JSON result and `wait` are built from this.
 */
import type { ConversationEvent, EventOf, ToolOutcome } from '../conversation/events.ts';
import type { Inquiry, JsonValue } from '../inquiry/types.ts';
import type { Source } from '../llm/types.ts';

export interface ToolSummary {
  id: string;
  name: string;
  arguments: unknown;
  result: string | null;
  status: ToolOutcome;
}

export interface PermissionDenial {
  tool_name: string;
  tool_call_id: string;
  kind: 'run_tool' | 'deliver_tool_result' | 'escalate';
  tool_input: unknown;
  reason: string;
}

export interface Unanswered {
  tool_name: string;
  tool_call_id: string;
  question_id: string;
  question: string;
  reason: string;
}

/** An inquiry a PermissionRequest hook answered. */
export interface HookAnswerSummary {
  tool_name: string;
  tool_call_id: string;
  kind: 'run_tool' | 'deliver_tool_result' | 'escalate';
  answer: JsonValue;
  hook: string;
  reason: string;
}

export interface PendingInquiry {
  id: string;
  tool_call_id: string;
  tool: string;
  kind: Inquiry['kind'];
  inquiry: Inquiry;
}

export interface TurnSummary {
  answer: string;
  sources: Source[];
  tools: ToolSummary[];
  permission_denials: PermissionDenial[];
  unanswered: Unanswered[];
  hook_answers: HookAnswerSummary[];
  pending_inquiry: PendingInquiry | null;
}

export function summarizeTurn(events: readonly ConversationEvent[]): TurnSummary {
  const tools = new Map<string, ToolSummary>();
  const requests = new Map<string, EventOf<'inquiry_request'>>();
  const responded = new Set<string>();
  const permission_denials: PermissionDenial[] = [];
  const unanswered: Unanswered[] = [];
  const hook_answers: HookAnswerSummary[] = [];
  const steps: { text: string; toolCalls: number; sources: Source[] }[] = [];
  let step: { text: string; toolCalls: number; sources: Source[] } | undefined;
  for (const event of events) {
    switch (event.type) {
      case 'chat_response':
        if ('message' in event) {
          if (!step) steps.push((step = { text: '', toolCalls: 0, sources: [] }));
          step.text += event.message;
          if (event.sources) step.sources.push(...event.sources);
        }
        break;
      case 'tool_call_request':
        // The provider's own tools (hosted web search) are not jp's tool calls.
        if (event.provider_executed) break;
        if (!step) steps.push((step = { text: '', toolCalls: 0, sources: [] }));
        step.toolCalls++;
        tools.set(event.id, {
          id: event.id,
          name: event.name,
          arguments: event.arguments,
          result: null,
          status: 'deferred',
        });
        break;
      case 'tool_call_response': {
        if (event.provider_executed) break;
        step = undefined;
        const tool = tools.get(event.id);
        if (tool) {
          tool.result = event.content;
          tool.status = event.outcome ?? (event.is_error ? 'error' : 'ok');
        }
        break;
      }
      case 'chat_request':
      case 'turn_end':
        step = undefined;
        break;
      case 'inquiry_request':
        requests.set(event.id, event);
        break;
      case 'inquiry_response': {
        responded.add(event.id);
        const request = requests.get(event.id);
        if (request && event.by === 'hook' && request.inquiry.kind !== 'tool_question') {
          hook_answers.push({
            tool_name: request.inquiry.tool,
            tool_call_id: request.tool_call_id,
            kind: request.inquiry.kind,
            answer: event.answer,
            hook: event.hook ?? '',
            reason: event.reason ?? '',
          });
        }
        if (!request || event.by !== 'policy' || event.action !== 'Fail') break;
        const inquiry = request.inquiry;
        const reason = event.reason ?? 'no user available';
        if (inquiry.kind === 'tool_question') {
          unanswered.push({
            tool_name: inquiry.tool,
            tool_call_id: request.tool_call_id,
            question_id: inquiry.question.id,
            question: inquiry.question.text,
            reason,
          });
        } else {
          permission_denials.push({
            tool_name: inquiry.tool,
            tool_call_id: request.tool_call_id,
            kind: inquiry.kind,
            tool_input: tools.get(request.tool_call_id)?.arguments ?? null,
            reason,
          });
        }
        break;
      }
      default:
        break;
    }
  }
  // A step cut off with no tool calls and followed by another step was abandoned (see history.ts).
  const kept = steps.filter((entry, index) => entry.toolCalls > 0 || index === steps.length - 1);
  const answer = kept.map((entry) => entry.text).join('');
  const sources: Source[] = [];
  for (const source of kept.flatMap((entry) => entry.sources)) {
    if (!sources.some((known) => (known.url !== undefined ? known.url === source.url : known.title === source.title)))
      sources.push(source);
  }
  const pending = [...requests.values()].find((request) => !responded.has(request.id));
  return {
    answer,
    sources,
    tools: [...tools.values()],
    permission_denials,
    unanswered,
    hook_answers,
    pending_inquiry: pending
      ? {
          id: pending.id,
          tool_call_id: pending.tool_call_id,
          tool: pending.inquiry.tool,
          kind: pending.inquiry.kind,
          inquiry: pending.inquiry,
        }
      : null,
  };
}
