/**
 * What a hook's exit code and JSON mean, per event, in the common hook contract (README "Hooks"):
 * exit 0 with an optional JSON object on stdout, exit 2 to block with stderr as the reason; the
 * common fields `continue` (false stops the turn; `stopReason` says why), `systemMessage` (shown to
 * the user), `decision: "block"` + `reason`, and `hookSpecificOutput` per event (`permissionDecision`,
 * `permissionDecisionReason`, `updatedInput`, `additionalContext`; PermissionRequest's
 * `decision.behavior`, `message`, `updatedInput`, `interrupt`). Anything else a hook prints is
 * ignored; a field of the wrong type is as if absent.
 */
import type { HookRun } from './command.ts';

type Ran = Extract<HookRun, { kind: 'ok' }>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function specific(run: Ran): Record<string, unknown> {
  const value = run.json?.hookSpecificOutput;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** `continue: false`: the hook asks jp to stop the turn; its `stopReason`, or a plain one. */
export function stopAsked(run: HookRun): string | undefined {
  if (run.kind !== 'ok' || run.json?.continue !== false) return undefined;
  return text(run.json.stopReason) ?? 'the hook asked to stop (continue: false)';
}

/** `systemMessage`: a line for the user (never the model). */
export function systemMessage(run: HookRun): string | undefined {
  return run.kind === 'ok' ? text(run.json?.systemMessage) : undefined;
}

/** `hookSpecificOutput.additionalContext`: text for the model. */
export function additionalContext(run: HookRun): string | undefined {
  return run.kind === 'ok' ? text(specific(run).additionalContext) : undefined;
}

/**
 * A block: exit 2 (its stderr) or `decision: "block"` (its `reason`); undefined when the hook did
 * not block. `reason` may be empty: the caller words it then.
 */
export function blocked(run: HookRun): { reason: string } | undefined {
  if (run.kind === 'block') return { reason: run.stderr };
  if (run.kind === 'ok' && run.json?.decision === 'block') return { reason: text(run.json.reason) ?? '' };
  return undefined;
}

export interface ToolDecision {
  decision: 'allow' | 'deny' | 'ask' | undefined;
  reason: string | undefined;
  updatedInput: unknown;
}

/**
 * PreToolUse: `hookSpecificOutput.permissionDecision` (allow | deny | ask) with its reason, or the
 * older top-level `decision` (approve | block) with `reason`; exit 2 denies. `continue: false` denies too.
 */
export function toolDecision(run: HookRun): ToolDecision {
  if (run.kind === 'block') return { decision: 'deny', reason: run.stderr, updatedInput: undefined };
  if (run.kind !== 'ok') return { decision: undefined, reason: undefined, updatedInput: undefined };
  const output = specific(run);
  const stop = stopAsked(run);
  if (stop) return { decision: 'deny', reason: stop, updatedInput: undefined };
  const given = output.permissionDecision;
  const decision =
    given === 'allow' || given === 'deny' || given === 'ask'
      ? given
      : run.json?.decision === 'approve'
        ? 'allow'
        : run.json?.decision === 'block'
          ? 'deny'
          : undefined;
  const reason = text(output.permissionDecisionReason) ?? text(run.json?.reason);
  return { decision, reason, updatedInput: output.updatedInput };
}

export interface PermissionDecision {
  behavior: 'allow' | 'deny';
  message: string | undefined;
  updatedInput: unknown;
  /** `interrupt: true` with a deny: the turn stops too. */
  interrupt: boolean;
}

/**
 * PermissionRequest: `hookSpecificOutput.decision.behavior` (allow | deny) with `message`,
 * `updatedInput` and `interrupt`; PreToolUse's `permissionDecision` allow | deny is read the same
 * way; exit 2 denies with its stderr. Anything else is no answer.
 */
export function permissionDecision(run: HookRun): PermissionDecision | undefined {
  if (run.kind === 'block')
    return { behavior: 'deny', message: text(run.stderr), updatedInput: undefined, interrupt: false };
  if (run.kind !== 'ok') return undefined;
  const output = specific(run);
  const decision = output.decision;
  if (typeof decision === 'object' && decision !== null && !Array.isArray(decision)) {
    const record = decision as Record<string, unknown>;
    if (record.behavior !== 'allow' && record.behavior !== 'deny') return undefined;
    return {
      behavior: record.behavior,
      message: text(record.message),
      updatedInput: record.behavior === 'allow' ? record.updatedInput : undefined,
      interrupt: record.behavior === 'deny' && record.interrupt === true,
    };
  }
  const tool = toolDecision(run);
  if (tool.decision !== 'allow' && tool.decision !== 'deny') return undefined;
  return {
    behavior: tool.decision,
    message: tool.reason,
    updatedInput: tool.decision === 'allow' ? tool.updatedInput : undefined,
    interrupt: false,
  };
}

/**
 * UserPromptSubmit and SessionStart: the context for the model, `hookSpecificOutput.additionalContext`,
 * or the plain text a hook printed (exit 0, not JSON), as in the common contract.
 */
export function promptContext(run: HookRun): string | undefined {
  if (run.kind !== 'ok') return undefined;
  return additionalContext(run) ?? (run.json === undefined ? text(run.stdout) : undefined);
}
