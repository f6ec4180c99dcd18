/**
 * The words of a turn's limits: a run's budget reached (the error `jp query --continue` resumes), a
 * model's refusal (the error that ends the turn), an answer cut at an output limit (a warning).
 */
import { ProviderError, RunError, type JpError } from '../errors.ts';
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
      `stopped after ${used} tokens (input + output) of a budget of ${maxTokens} (assistant.budget.tokens), in ${iterations} LLM round trips`,
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

/** The warning of an answer that ended at an output limit: jp's limit of one response, or the model's. */
export function cutAtLimitWarning(finish: FinishPart, maxOutputTokens: number | undefined): string {
  return finish.providerReason === stepOutputLimit.reason
    ? `the answer was cut at jp's limit of one response (${stepOutputLimit.bytes / 1024 / 1024} MiB or ${stepOutputLimit.pieces} streamed pieces): the provider kept streaming`
    : `the answer was cut at the model's output limit${maxOutputTokens ? ` (${maxOutputTokens} tokens)` : ''}; raise \`assistant.max_output_tokens\``;
}
