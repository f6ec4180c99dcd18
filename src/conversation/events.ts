/**
 * Conversation events (DESIGN §6): one JSON object per line of `events.ndjson`, each with `type` and
 * `timestamp`. These names are a public contract: scripts and `schema/` read them.
 */
import type { EncodedAnswer } from '../inquiry/answer.ts';
import type { AnsweredBy, Inquiry, PromptAction } from '../inquiry/types.ts';
import type { FinishReason, ProviderMetadata, Source, Usage } from '../llm/types.ts';

export type TurnEndStatus = 'completed' | 'interrupted' | 'error' | 'discarded';

/** How a tool call ended, as reported in the JSON result. */
export type ToolOutcome = 'ok' | 'error' | 'denied' | 'skipped' | 'deferred' | 'unknown';

/** An image of a user message: its IANA media type and its bytes in base64. */
export interface ImageAttachment {
  media_type: string;
  data: string;
}

export type ConversationEvent =
  | {
      type: 'turn_start';
      timestamp: string;
      /** The tools the turn was started with (--no-tools, --tool): a resumed turn keeps them. */
      tools?: TurnTools;
      /**
       * Proof that this user's jp recorded the turn's tools (conversation/seal.ts); without one they decide
       * nothing.
       */
      seal?: string;
    }
  | {
      type: 'chat_request';
      timestamp: string;
      content: string;
      /** What the user's UserPromptSubmit hooks added for the model (sent after the content). */
      context?: string;
      /** Images the user attached (an editor's prompt), sent to the model with the content. */
      images?: ImageAttachment[];
      /** The command of the Stop hook whose reason this message is (the model goes on with it). */
      hook?: string;
    }
  | {
      type: 'chat_response';
      timestamp: string;
      message: string;
      /** The step's citations and sources, on the last chunk of its text. */
      sources?: Source[];
      /**
       * On the last chunk of a step that was cut off (the stream ended, broke or stalled before the
       * provider's finish, or the run was stopped): the step's text back to the previous step
       * boundary is a partial answer, never sent back to the model.
       */
      incomplete?: true;
    }
  | {
      type: 'chat_response';
      timestamp: string;
      reasoning: string;
      /** Ends a reasoning block: what the provider needs back with it (Anthropic's thinking signature). */
      provider_metadata?: ProviderMetadata;
    }
  | {
      type: 'tool_call_request';
      timestamp: string;
      id: string;
      name: string;
      arguments: unknown;
      /** A tool the provider ran itself (hosted web search): never run by jp, its result follows. */
      provider_executed?: true;
      /** How the commands of this call are confined (`workspace-write, no network`), for tools that start commands. */
      sandbox?: string;
      /**
       * Proof that this user's jp recorded the call (conversation/seal.ts); a call without one is never run on
       * resume.
       */
      seal?: string;
    }
  /** Written right before a tool starts executing: a call with a start and no response may have run. */
  | { type: 'tool_call_start'; timestamp: string; id: string }
  | {
      type: 'tool_call_response';
      timestamp: string;
      id: string;
      content: string;
      is_error: boolean;
      outcome: ToolOutcome;
      /** The result of a provider-executed call, as the provider sent it (JSON text). */
      provider_executed?: true;
    }
  | {
      type: 'inquiry_request';
      timestamp: string;
      id: string;
      tool_call_id: string;
      inquiry: Inquiry;
      /** Asked while the tool was running (an MCP elicitation), not before it ran again. */
      during_call?: true;
    }
  | {
      type: 'inquiry_response';
      timestamp: string;
      id: string;
      /** Written by encodeAnswer, read back only through parseAnswer (inquiry/answer.ts). */
      answer: EncodedAnswer;
      by: AnsweredBy;
      /** What decided the answer when no human did (route()'s action). */
      action?: PromptAction;
      /** Plain-words explanation for policy answers, naming the config key that decided. */
      reason?: string;
      /** With `by: "hook"`: the command of the PermissionRequest hook that answered. */
      hook?: string;
      /** With `by: "user"`: the client the user answered in, as it named itself (`jp web`). */
      client?: string;
      /**
       * Proof that this user's jp recorded this answer to this inquiry (conversation/seal.ts); without one it is
       * never re-used.
       */
      seal?: string;
    }
  | {
      type: 'turn_end';
      timestamp: string;
      status: TurnEndStatus;
      error?: { code: string; message: string };
      /** For `interrupted`: what stopped it. */
      signal?: 'SIGINT' | 'SIGTERM' | 'shutdown';
      /** For `error` and `interrupted`: the exit code the run reported (see `jp conversation wait`). */
      exit_code?: number;
      /** Why the model's last response of the turn ended, when it did end (the provider's finish). */
      finish_reason?: FinishReason;
      /** The model the provider said answered the turn's last response, when it said. */
      response_model?: string;
      /**
       * With `interrupted`: the turn is over, not resumable. A new message arrived while it held
       * nothing a person had to decide (DESIGN §7); it stays in the log and in the history.
       */
      closed?: true;
    }
  /** `seal`: proof that this user's jp recorded these settings (conversation/seal.ts); without one they are ignored. */
  | {
      type: 'config_delta';
      timestamp: string;
      delta: Record<string, unknown>;
      /** The query that recorded it, as its result reports it (`jp config show --id`). */
      query?: string;
      seal?: string;
    }
  /**
   * The token counts one model request reported (written when its response finished): `step` is a
   * request of the agent loop, `compaction` a summary request, `inquiry` a question answered by the
   * model. Per turn and per conversation figures are sums of these.
   */
  | {
      type: 'usage';
      timestamp: string;
      model: string;
      purpose: UsagePurpose;
      usage: Usage;
      /**
       * The request's size as jp measures it (its messages and tools as JSON): with input_tokens, the tokenizer's
       * characters per token.
       */
      request_characters?: number;
    }
  /**
   * The log's events from `replaces[0]` to `replaces[1]` (0-based positions in the log, both
   * included) are sent to the model as `summary` from here on; the events themselves stay in the log.
   */
  | { type: 'compaction'; timestamp: string; summary: string; replaces: [number, number]; reason: CompactionReason }
  /**
   * What the model is told before the conversation (DESIGN §9): the whole system message, recorded
   * at the start of a turn when it differs from the last one recorded. Every request of the
   * conversation sends the last one recorded, byte for byte.
   */
  | { type: 'system_prompt'; timestamp: string; text: string; files: InstructionFileRecord[] }
  /**
   * The workspace's state, recorded `before` a tool batch that can write it and `after` the batch
   * ended (DESIGN §10, checkpoints): `commit` names it in the user-local store of `root`. On
   * `after`, `changed` counts the files that differ from the batch's `before` (`files` names the
   * first of them). `not_covered`: what the checkpoint does not hold (over the size limit, a git
   * repository of its own).
   */
  | {
      type: 'checkpoint';
      timestamp: string;
      when: 'before' | 'after';
      /** The turn's number: 1 for the conversation's first (`jp conversation diff --turn N`). */
      turn?: number;
      root: string;
      commit: string;
      changed?: number;
      files?: string[];
      not_covered?: { path: string; reason: 'size' | 'repository' }[];
    }
  /**
   * `jp conversation undo`: the files of `files` were restored to their state before the change
   * sets named in `undone` (`turn 3`, `undo 1`); `before` and `after` are checkpoints of `root`
   * either side of it, so an undo can be undone.
   */
  | {
      type: 'undo';
      timestamp: string;
      root: string;
      undone: string[];
      before: string;
      after: string;
      files: string[];
      /** Files changed outside jp since were overwritten (`--force`). */
      forced?: string[];
    };

export type UsagePurpose = 'step' | 'compaction' | 'inquiry';

/** A turn's tools as the command line chose them: none (`--no-tools`), or the configured ones plus `--tool` names. */
export interface TurnTools {
  no_tools: boolean;
  enabled: string[];
}

/**
 * `threshold`: the next request would have passed the threshold of the window; `context_length`: the provider refused
 * it as too long; `manual`: jp conversation compact.
 */
export type CompactionReason = 'threshold' | 'context_length' | 'manual';

/** An instruction file the system prompt includes: its path as shown, its size, the bytes included. */
export interface InstructionFileRecord {
  path: string;
  bytes: number;
  included: number;
}

export type EventType = ConversationEvent['type'];
export type EventOf<T extends EventType> = Extract<ConversationEvent, { type: T }>;

export const eventTypes: readonly EventType[] = [
  'turn_start',
  'chat_request',
  'chat_response',
  'tool_call_request',
  'tool_call_start',
  'tool_call_response',
  'inquiry_request',
  'inquiry_response',
  'turn_end',
  'config_delta',
  'usage',
  'compaction',
  'system_prompt',
  'checkpoint',
  'undo',
];

/** Content events, counted by `attach --tail=N` (RFD 025). */
export function isContentEvent(event: ConversationEvent): boolean {
  return (
    event.type === 'chat_request' ||
    event.type === 'chat_response' ||
    event.type === 'tool_call_request' ||
    event.type === 'tool_call_response'
  );
}

export function now(): string {
  return new Date().toISOString();
}

/** Loose structural check for a line read from disk; the reader skips anything that fails it. */
export function isConversationEvent(value: unknown): value is ConversationEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  if (typeof record.type !== 'string' || typeof record.timestamp !== 'string') return false;
  switch (record.type) {
    case 'turn_start':
      return true;
    case 'chat_request':
      return typeof record.content === 'string';
    case 'chat_response':
      return typeof record.message === 'string' || typeof record.reasoning === 'string';
    case 'tool_call_request':
      return typeof record.id === 'string' && typeof record.name === 'string';
    case 'tool_call_start':
      return typeof record.id === 'string';
    case 'tool_call_response':
      return typeof record.id === 'string' && typeof record.content === 'string';
    case 'inquiry_request':
      return typeof record.id === 'string' && typeof record.inquiry === 'object' && record.inquiry !== null;
    case 'inquiry_response':
      return typeof record.id === 'string' && typeof record.by === 'string';
    case 'turn_end':
      return typeof record.status === 'string';
    case 'config_delta':
      return true;
    case 'usage':
      return typeof record.usage === 'object' && record.usage !== null;
    case 'compaction':
      return (
        typeof record.summary === 'string' &&
        Array.isArray(record.replaces) &&
        record.replaces.length === 2 &&
        record.replaces.every((position) => Number.isInteger(position) && (position as number) >= 0)
      );
    case 'system_prompt':
      return typeof record.text === 'string' && Array.isArray(record.files);
    case 'checkpoint':
      return (
        (record.when === 'before' || record.when === 'after') &&
        typeof record.root === 'string' &&
        typeof record.commit === 'string'
      );
    case 'undo':
      return (
        typeof record.root === 'string' &&
        typeof record.before === 'string' &&
        typeof record.after === 'string' &&
        Array.isArray(record.files) &&
        Array.isArray(record.undone)
      );
    default:
      return false;
  }
}
