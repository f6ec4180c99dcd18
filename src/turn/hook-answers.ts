/**
 * A PermissionRequest hook as an answerer of one inquiry (DESIGN §4 "Who answers"): asked once,
 * the first time the inquiry needs an answer: alongside the prompt when a human is asked (the
 * first answer wins; the other is withdrawn: the prompt closes, the hook gets SIGTERM), before the
 * detached policy when nobody is there. No answer, a crash or its timeout leaves the inquiry to
 * the next answerer. A hook's changed input (`updatedInput`) runs only through a prompt that shows
 * it, or with nobody there when the policy would have run it without a human anyway.
 */
import type { DetachedPolicy, Inquiry, PromptAction } from '../inquiry/types.ts';
import type { HookAnswer, TurnHooks } from './hook-port.ts';
import type { ClientAnswer } from './host.ts';

export class HookAsk {
  private pending: Promise<HookAnswer | undefined> | undefined;
  private readonly controller = new AbortController();
  private readonly stopWithRun = (): void => this.controller.abort();
  private notified = false;

  constructor(
    private readonly hooks: TurnHooks | undefined,
    private readonly request: { id: string; toolCallId: string; inquiry: Inquiry },
    private readonly signal: AbortSignal,
  ) {}

  /** Whether a hook is asked about this inquiry at all. */
  get asks(): boolean {
    return this.hooks?.answers(this.request.inquiry) === true;
  }

  /** Asks the hook (once: later calls get the same answer). */
  answer(
    policy: { value: DetachedPolicy; key: string; layer: string },
    humanAsked: boolean,
  ): Promise<HookAnswer | undefined> {
    if (!this.pending) {
      this.signal.addEventListener('abort', this.stopWithRun, { once: true });
      this.pending = this.hooks!.answer({ ...this.request, policy, humanAsked }, this.controller.signal);
    }
    return this.pending;
  }

  /** The answer is no longer wanted (a human gave it, or the inquiry is settled): the hook is stopped. */
  withdraw(): void {
    this.signal.removeEventListener('abort', this.stopWithRun);
    this.controller.abort();
  }

  /** Notification `permission_prompt`, the first time a human is asked. */
  notifyPrompt(): void {
    if (this.notified || !this.hooks) return;
    this.notified = true;
    this.hooks.notify('permission_prompt', promptMessage(this.request.inquiry), this.request.inquiry);
  }
}

/** Whichever of the client and the hook answers first; an unanswered hook leaves the client to answer. */
export async function firstAnswer(
  client: Promise<ClientAnswer>,
  hook: Promise<HookAnswer | undefined> | undefined,
): Promise<{ from: 'client'; reply: ClientAnswer } | { from: 'hook'; answer: HookAnswer }> {
  const fromClient = client.then((reply) => ({ from: 'client' as const, reply }));
  if (!hook) return fromClient;
  const first = await Promise.race([fromClient, hook.then((answer) => ({ from: 'hook' as const, answer }))]);
  if (first.from === 'client' || first.answer) return first as Awaited<ReturnType<typeof firstAnswer>>;
  return fromClient;
}

/**
 * With nobody there, a hook's changed input counts only when the policy would have run the call
 * without a human anyway (`AutoApprove`): a hook never makes jp run what it would not.
 */
export function changedInputAllowed(answer: HookAnswer, policyAction: PromptAction): boolean {
  return answer.updatedArguments === undefined || policyAction === 'AutoApprove';
}

/** How a hook's answer is recorded and told to the model, worded as the policy's answers are. */
export function hookReason(inquiry: Inquiry, answer: HookAnswer): string {
  const hook = `the hook \`${answer.hook}\``;
  const said = answer.message ? ` (it said: ${answer.message})` : '';
  const denied = answer.answer === 'skip';
  switch (inquiry.kind) {
    case 'deliver_tool_result':
      return denied
        ? `result not delivered: ${hook} denied sharing it${said}`
        : `result shared with the approval of ${hook}${said}`;
    case 'escalate':
      return denied
        ? `not run outside the sandbox: ${hook} denied it${said}`
        : `run outside the sandbox with the approval of ${hook}${said}`;
    default: {
      if (denied) return `not run: ${hook} denied it${said}`;
      const changed =
        answer.updatedArguments === undefined
          ? ''
          : ` with the input it changed to ${JSON.stringify(answer.updatedArguments)}`;
      return `run${changed} with the approval of ${hook}${said}`;
    }
  }
}

function promptMessage(inquiry: Inquiry): string {
  switch (inquiry.kind) {
    case 'run_tool':
      return `jp needs your permission to use ${inquiry.tool}`;
    case 'escalate':
      return `jp asks to run ${inquiry.tool} outside the sandbox`;
    case 'deliver_tool_result':
      return `jp asks you to review the result of ${inquiry.tool} before the model sees it`;
    case 'tool_question':
      return `${inquiry.tool} asks you: ${inquiry.question.text}`;
  }
}
