/**
 * The final `result` object (DESIGN §5): stdout's last line in `--format json`, and what decides
 * the exit code. `status` and `exit_code` always agree.
 */
import type { ConversationEvent } from '../conversation/events.ts';
import { describeTurn, splitTurns } from '../conversation/turn-state.ts';
import { exitCodeOf, type JpError, type RunStatus } from '../errors.ts';
import type { FinishReason, Source, Usage } from '../llm/types.ts';
import { eventsFile } from '../conversation/store.ts';
import { someNames } from '../plural.ts';
import type { Secrets } from '../redact.ts';
import { workspaceDirectoryName } from '../workspace/workspace.ts';
import {
  summarizeTurn,
  type HookAnswerSummary,
  type PendingInquiry,
  type PermissionDenial,
  type ToolSummary,
  type Unanswered,
} from '../turn/summary.ts';
import type { TurnOutcome } from '../turn/engine.ts';
import { truncateOutput } from '../tools/truncate.ts';

/**
 * The result echoes the query, cut to this many characters (head and tail): piped input of tens of
 * MB is the provider's to read, not the result's to repeat (DESIGN §8).
 */
export const maxResultQueryCharacters = 10_000;

/** The query as the result reports it. */
export function resultQuery(text: string): string {
  return truncateOutput(text, maxResultQueryCharacters, 'query');
}

export interface ResultWarning {
  code: string;
  message: string;
  /** For `workspace_untrusted` and `conversation_settings_ignored`: the keys that were ignored. */
  keys?: string[];
}

/** The warning of a run that ignored keys of an untrusted workspace config. */
export function untrustedKeysWarning(file: string, keys: readonly string[]): ResultWarning {
  return {
    code: 'workspace_untrusted',
    message:
      `ignored ${someNames(keys)} in ${file}: this workspace config is not trusted; ` +
      'review it, then run `jp trust` to use these settings',
    keys: [...keys],
  };
}

export interface ResultObject {
  v: 1;
  type: 'result';
  ts: string;
  conversation_id: string | null;
  /** The conversation's log, relative to the workspace root; null when no conversation was chosen. */
  log_file: string | null;
  status: RunStatus;
  exit_code: number;
  query: string;
  answer: string;
  /** Citations and sources of the answer (web search results, cited documents). */
  sources: Source[];
  tools: ToolSummary[];
  permission_denials: PermissionDenial[];
  unanswered: Unanswered[];
  /** Inquiries a PermissionRequest hook answered (README "Hooks"). */
  hook_answers: HookAnswerSummary[];
  pending_inquiry: PendingInquiry | null;
  metadata: {
    model: string | null;
    iterations: number;
    duration_ms: number;
    /** null when no request reported usage (the provider sent none, or none was made). */
    usage: Usage | null;
    /**
     * What the run's model requests cost in US dollars, from the price table jp ships
     * (llm/prices.ts); null when it is not known (a local or unknown model, no usage reported).
     */
    cost_usd: number | null;
    /** Why the model's last response ended (`length`: cut at the output limit); null when it did not end. */
    finish_reason: FinishReason | null;
    /**
     * The model the provider said answered the last response (a local server names the one it has loaded); null when it
     * did not say.
     */
    response_model: string | null;
  };
  /** What the run says although it went on, e.g. an answer cut at the output limit, untrusted keys ignored. */
  warnings: ResultWarning[];
  /** `hint` says how to fix it, when jp knows. */
  error: { code: string; message: string; hint?: string } | null;
}

/** Where a conversation's log is, relative to its workspace root (the record of the run, for scripts). */
export function logFileOf(conversationId: string | null): string | null {
  return conversationId === null ? null : eventsFile(`${workspaceDirectoryName}/conversations`, conversationId);
}

/** The status of a finished turn: a completed turn with inquiries no human could answer is `denied`. */
export function statusOfTurn(
  outcome: TurnOutcome,
  summary: { permission_denials: unknown[]; unanswered: unknown[] },
): { status: RunStatus; exitCode: number } {
  switch (outcome.status) {
    case 'completed': {
      const status: RunStatus =
        summary.permission_denials.length + summary.unanswered.length > 0 ? 'denied' : 'success';
      return { status, exitCode: exitCodeOf(status) };
    }
    case 'deferred':
      return { status: 'deferred', exitCode: 4 };
    case 'interrupted':
      return { status: 'interrupted', exitCode: outcome.stop?.exitCode ?? 130 };
    case 'error':
      return { status: outcome.error?.status ?? 'error', exitCode: outcome.error?.exitCode ?? 1 };
  }
}

export function buildTurnResult(options: {
  conversationId: string;
  query: string;
  outcome: TurnOutcome;
  events: readonly ConversationEvent[];
  model: string | null;
  startedAt: number;
  /** Warnings of the run itself (untrusted keys), before the turn's own. */
  warnings?: ResultWarning[];
  /** The query and errors may quote a secret: the result is redacted by these where it is made. */
  secrets: Secrets;
  /** What the run's requests cost (US dollars), when known. */
  costUsd?: number;
}): ResultObject {
  const summary = summarizeTurn(options.events.slice(Math.max(0, options.outcome.turnStart)));
  const { status, exitCode } = statusOfTurn(options.outcome, summary);
  const error = options.outcome.error;
  // Made here, so redacted here: the query and errors may quote a secret (the events are redacted already).
  return options.secrets.redactValue<ResultObject>({
    ...resultHead(options.conversationId, status, exitCode, options.query),
    answer: summary.answer,
    sources: summary.sources,
    tools: summary.tools,
    permission_denials: summary.permission_denials,
    unanswered: summary.unanswered,
    hook_answers: summary.hook_answers,
    pending_inquiry: options.outcome.status === 'deferred' ? summary.pending_inquiry : null,
    metadata: {
      model: options.model,
      iterations: options.outcome.iterations,
      duration_ms: Date.now() - options.startedAt,
      usage: options.outcome.usage,
      cost_usd: options.costUsd ?? null,
      finish_reason: options.outcome.finishReason ?? null,
      response_model: options.outcome.responseModel ?? null,
    },
    warnings: [...(options.warnings ?? []), ...(options.outcome.warnings ?? [])],
    error: error
      ? errorObject(error)
      : options.outcome.status === 'interrupted'
        ? interruptedError(options.outcome)
        : null,
  });
}

/** The fields every result opens with: what it is, when, of which conversation, how it ended, for which query. */
function resultHead(
  conversationId: string | null,
  status: ResultObject['status'],
  exitCode: number,
  query: string,
): Pick<ResultObject, 'v' | 'type' | 'ts' | 'conversation_id' | 'log_file' | 'status' | 'exit_code' | 'query'> {
  return {
    v: 1,
    type: 'result',
    ts: new Date().toISOString(),
    conversation_id: conversationId,
    log_file: logFileOf(conversationId),
    status,
    exit_code: exitCode,
    query: resultQuery(query),
  };
}

/** What an interrupted turn's result says: resumable, unless the user aborted it (then it was dropped). */
function interruptedError(outcome: TurnOutcome): { code: string; message: string } {
  if (outcome.stop?.discard)
    return {
      code: 'aborted',
      message: 'the turn was aborted: it was dropped (kept in the log, marked discarded) and cannot be resumed',
    };
  return { code: 'interrupted', message: 'the run was interrupted; resume it with `jp query --continue`' };
}

/** A result for a run that failed before (or without) a turn: usage errors, locks, startup failures. */
export function buildErrorResult(options: {
  conversationId: string | null;
  query: string;
  error: JpError;
  model: string | null;
  startedAt: number;
  warnings?: ResultWarning[];
  secrets: Secrets;
}): ResultObject {
  return options.secrets.redactValue<ResultObject>({
    ...resultHead(options.conversationId, options.error.status, options.error.exitCode, options.query),
    answer: '',
    sources: [],
    tools: [],
    permission_denials: [],
    unanswered: [],
    hook_answers: [],
    pending_inquiry: null,
    metadata: {
      model: options.model,
      iterations: 0,
      duration_ms: Date.now() - options.startedAt,
      usage: null,
      cost_usd: null,
      finish_reason: null,
      response_model: null,
    },
    warnings: options.warnings ?? [],
    error: errorObject(options.error),
  });
}

function errorObject(error: JpError): { code: string; message: string; hint?: string } {
  return error.hint
    ? { code: error.code, message: error.message, hint: error.hint }
    : { code: error.code, message: error.message };
}

/**
 * The exit code of the last run of a conversation, derived from its log alone (for `wait` when the
 * server is gone): a pending inquiry is 4, a stop marker carries its code, a completed turn is 0 or
 * 3, and a turn that just stopped (a crash, kill -9) is 1.
 */
export function exitCodeFromLog(events: readonly ConversationEvent[]): { exitCode: number; description: string } {
  const turns = splitTurns(events);
  const last = turns[turns.length - 1];
  if (!last) return { exitCode: 0, description: 'no turns yet' };
  if (last.final === 'discarded') return { exitCode: 0, description: 'the last turn was discarded' };
  // Closed for a new message whose turn never started: that run failed.
  if (last.final === 'interrupted') return { exitCode: 1, description: 'the last turn was closed unfinished' };
  if (last.final === 'completed') {
    const summary = summarizeTurn(last.events);
    const denied = summary.permission_denials.length + summary.unanswered.length > 0;
    return denied
      ? { exitCode: 3, description: 'completed, with inquiries no user could answer' }
      : { exitCode: 0, description: 'completed' };
  }
  const incomplete = describeTurn(last);
  if (incomplete.pendingInquiries.length > 0)
    return { exitCode: 4, description: `waiting for input (${incomplete.pendingInquiries[0]!.inquiry.tool})` };
  const stop = incomplete.lastStop;
  const lastEvent = last.events[last.events.length - 1];
  if (stop && stop === lastEvent) {
    return {
      exitCode: stop.exit_code ?? (stop.status === 'error' ? 1 : 130),
      description: stop.status === 'error' ? `error: ${stop.error?.message ?? 'unknown'}` : 'interrupted',
    };
  }
  return { exitCode: 1, description: `stopped without finishing (${incomplete.resumePoint}); resume with --continue` };
}
