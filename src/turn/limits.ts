/**
 * The words of a turn's limits: a run's budget reached (the error `jp query --continue` resumes), a
 * model's refusal (the error that ends the turn), an answer cut at an output limit (a warning).
 */
import { ProviderError, RunError, type JpError } from '../errors.ts';
import type { ContextWindow } from '../llm/context-window.ts';
import { stepOutputLimit, type StreamPart, type Usage } from '../llm/types.ts';

export type FinishPart = Extract<StreamPart, { type: 'finish' }>;

/**
 * The budgets of one run of a turn, checked before each request: LLM round trips (--max-turns) and
 * input + output tokens (--max-tokens). The error when one is reached, with the figures.
 */
export function budgetReached(
  iterations: number,
  usage: Usage | null,
  maxTurns: number,
  maxTokens: number | undefined,
): RunError | undefined {
  if (iterations >= maxTurns) {
    return new RunError(
      'max_turns_exceeded',
      `stopped after ${iterations} LLM round trips (assistant.max_turns = ${maxTurns})`,
      {
        hint: 'Continue with `jp query --continue`, or raise the cap with --max-turns.',
      },
    );
  }
  const used = (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0);
  if (maxTokens !== undefined && used >= maxTokens) {
    return new RunError(
      'budget_exceeded',
      `stopped after ${used} tokens (input + output) of a budget of ${maxTokens} (assistant.budget.tokens), ` +
        `in ${iterations} LLM round trips`,
      {
        hint: 'Continue with `jp query --continue`, or raise the budget with --max-tokens.',
      },
    );
  }
  return undefined;
}

/** A refusal or content filter ends the turn (exit 1) with the provider's reason. */
export function refusal(modelId: string, finish: FinishPart): JpError {
  const reason = finish.providerReason ?? finish.reason;
  return new ProviderError(
    'refused',
    `${modelId}: the model refused to answer (${reason})${finish.detail ? `: ${finish.detail}` : ''}`,
    {
      hint: 'Rephrase the request, or ask another model with -m.',
    },
  );
}

/**
 * The warning of an answer that ended at an output limit (finish `length`), blaming what stopped it:
 * jp's limit of one response; the context window, when the request and its answer filled it (a
 * server with no output cap writes until its window is full); `assistant.max_output_tokens`, only
 * when it was set and reached; else the provider's own limit.
 */
export function cutAtLimitWarning(
  finish: FinishPart,
  limits: { maxOutputTokens: number | undefined; window: ContextWindow | undefined },
): string {
  if (finish.providerReason === stepOutputLimit.reason)
    return (
      `the answer was cut at jp's limit of one response (${stepOutputLimit.bytes / 1024 / 1024} MiB ` +
      `or ${stepOutputLimit.pieces} streamed pieces): the provider kept streaming`
    );
  const { maxOutputTokens, window } = limits;
  const input = finish.usage?.input_tokens ?? null;
  const output = finish.usage?.output_tokens ?? null;
  const used = input !== null && output !== null ? input + output : (finish.usage?.total_tokens ?? null);
  const capReached = maxOutputTokens !== undefined && (output === null || output >= maxOutputTokens);
  if (window && used !== null && used >= window.tokens * windowFilledShare && !capReached) {
    return (
      `the answer was cut because the context window filled up: ${input ?? '?'} tokens of request ` +
      `and ${output ?? '?'} of answer took ${used} of the ${window.tokens}-token window (${window.source}); ` +
      'a larger window, a shorter conversation (`jp conversation compact`) or fewer tools (--no-tools) ' +
      'leave the answer more room'
    );
  }
  if (capReached)
    return `the answer was cut at assistant.max_output_tokens (${maxOutputTokens} tokens); raise it for longer answers`;
  return (
    `the answer was cut at the provider's output limit${output !== null ? ` after ${output} tokens` : ''} ` +
    '(jp set no cap: assistant.max_output_tokens is unset; a server may also stop when its context window is full)'
  );
}

/**
 * A request and its answer that reached this share of the window filled it (servers count a few tokens of their own).
 */
const windowFilledShare = 0.98;

/** The warning of a step that ended with reasoning and no answer. */
export function reasoningOnlyWarning(reasoningCharacters: number, conversationId: string): string {
  return (
    `the model gave no answer, only reasoning (${reasoningCharacters} characters): ` +
    'its chat template may keep everything in the reasoning (a thinking template that is never closed); ' +
    `the log keeps the reasoning (\`jp conversation print --json ${conversationId}\` shows it)`
  );
}
