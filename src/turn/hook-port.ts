/**
 * What the engine asks of the user's hooks (DESIGN §10, README "Hooks"), through the TurnHost:
 * plain facts in, decisions out. The hooks themselves (matching, running a command, reading its
 * decision) are src/hooks/; the engine never runs a program of the user's itself.
 */
import type { DetachedPolicy, Inquiry, JsonValue } from '../inquiry/types.ts';

/** Something a hook said for the model to read: its additional context, a block reason, exit-2 stderr. */
export interface HookNote {
  /** The hook's command, as configured. */
  hook: string;
  text: string;
}

export interface ToolCallFacts {
  /** The call id (the common contract's `tool_use_id`). */
  id: string;
  tool: string;
  arguments: unknown;
}

/**
 * PreToolUse, combined over the matching hooks: `deny` wins over `ask` over `allow` (`none`: no hook
 * decided). An allow never skips what jp would ask: hooks cannot widen what runs. `updated`: a hook
 * asked to run other arguments (the common contract's `updatedInput`), already in jp's own shape.
 */
export interface BeforeToolVerdict {
  decision: 'none' | 'allow' | 'ask' | 'deny';
  /** The hook that decided `ask` or `deny`, and why. */
  hook?: string;
  reason?: string;
  updated?: { hook: string; arguments: unknown };
  context: HookNote[];
}

/** A PermissionRequest hook's answer to an inquiry, in the inquiry's own answers. */
export interface HookAnswer {
  hook: string;
  /** run_tool / escalate: 'run' | 'skip'; deliver_tool_result: 'deliver' | 'skip'. */
  answer: JsonValue;
  /** What the hook said (its `message`, its stderr): kept in the record and told to the model. */
  message?: string;
  /** run_tool with `allow`: the arguments the hook wants run instead (its `updatedInput`). */
  updatedArguments?: unknown;
}

/** What a PermissionRequest hook is told about the inquiry besides the inquiry itself. */
export interface HookInquiry {
  id: string;
  toolCallId: string;
  inquiry: Inquiry;
  /** The detached policy that decides when nobody answers, the key that set it and its layer. */
  policy: { value: DetachedPolicy; key: string; layer: string };
  /** A human is being asked at the same time (the first answer wins). */
  humanAsked: boolean;
}

export interface TurnHooks {
  /** PreToolUse: before a call's permission is settled. */
  beforeTool(call: ToolCallFacts, signal: AbortSignal): Promise<BeforeToolVerdict>;
  /** PostToolUse: after the tool ran; what the hooks say goes to the model with the result. */
  afterTool(
    call: ToolCallFacts,
    result: { content: string; isError: boolean },
    signal: AbortSignal,
  ): Promise<HookNote[]>;
  /** Whether a PermissionRequest hook would be asked about this inquiry. */
  answers(inquiry: Inquiry): boolean;
  /** PermissionRequest: undefined when no hook answered (none matched, no decision, a crash, its timeout). */
  answer(request: HookInquiry, signal: AbortSignal): Promise<HookAnswer | undefined>;
  /** Stop: a hook's `block` keeps the turn going with its reason as the next message. */
  stopping(facts: { lastMessage: string; active: boolean }, signal: AbortSignal): Promise<HookNote | undefined>;
  /** PreCompact: told before older turns are summarised. */
  compacting(trigger: 'auto' | 'manual', signal: AbortSignal): Promise<void>;
  /** Notification, not waited for: a human is asked (`permission_prompt`). */
  notify(type: 'permission_prompt', message: string, inquiry: Inquiry): void;
  /** A hook answered `continue: false`: the turn stops at the next step. */
  stopRequested(): HookNote | undefined;
}
