/**
 * A call's PreToolUse and PostToolUse hooks (README "Hooks"). Hooks cannot widen what runs: a
 * PreToolUse hook may deny the call, ask (a human is asked even when the tool runs unattended; with
 * nobody there the detached policy decides), or add context for the model; its `allow` skips
 * nothing jp would ask. Changed input (`updatedInput`) runs only through a prompt that shows it, or
 * with nobody there by the same settings that would have run the call without a human. What a
 * PostToolUse hook says (exit 2's stderr, a block's reason, its context) goes to the model with the
 * result.
 */
import type { Tool } from '../tools/tool.ts';
import type { HookNote } from './hook-port.ts';
import type { TurnHost } from './host.ts';

export type BeforeTool =
  | { kind: 'denied'; content: string }
  /** `ask`: ask before it runs whatever the run mode; `notes`: for the model (a changed input among them). */
  | { kind: 'go'; arguments: unknown; ask: boolean; notes: HookNote[] };

export async function beforeTool(
  host: TurnHost,
  call: { id: string; tool: Tool; arguments: unknown },
  signal: AbortSignal,
): Promise<BeforeTool> {
  const hooks = host.hooks;
  if (!hooks) return { kind: 'go', arguments: call.arguments, ask: false, notes: [] };
  const verdict = await hooks.beforeTool({ id: call.id, tool: call.tool.name, arguments: call.arguments }, signal);
  if (verdict.decision === 'deny') {
    return {
      kind: 'denied',
      content: `Not run: the hook \`${verdict.hook}\` denied it${verdict.reason ? `: ${verdict.reason}` : '.'}`,
    };
  }
  let argumentsValue = call.arguments;
  let ask = verdict.decision === 'ask';
  const notes = [...verdict.context];
  if (ask)
    host.notice(
      'info',
      `the hook \`${verdict.hook}\` asks for a decision ` +
        `on ${call.tool.name}${verdict.reason ? `: ${verdict.reason}` : ''}`,
    );
  if (verdict.updated) {
    const validated = call.tool.validate(verdict.updated.arguments);
    if (!validated.ok) {
      host.notice(
        'warning',
        `ignored the input the hook \`${verdict.updated.hook}\` gave ${call.tool.name}: ${validated.message}`,
      );
    } else {
      argumentsValue = validated.value;
      // With a human there, the prompt shows the changed input; with nobody, the settings that run the call decide.
      if (host.hasPromptingClient()) ask = true;
      const changed = `changed the input to ${JSON.stringify(argumentsValue)}`;
      notes.push({ hook: verdict.updated.hook, text: changed });
      host.notice(
        'info',
        `the hook \`${verdict.updated.hook}\` ${changed}${ask ? '; you are asked about the changed input' : ''}`,
      );
    }
  }
  return { kind: 'go', arguments: argumentsValue, ask, notes };
}

/** PostToolUse: what the hooks say about the result, for the model. */
export function afterTool(
  host: TurnHost,
  call: { id: string; tool: Tool; arguments: unknown },
  result: { content: string; isError: boolean },
  signal: AbortSignal,
): Promise<HookNote[]> {
  const hooks = host.hooks;
  if (!hooks) return Promise.resolve([]);
  return hooks.afterTool({ id: call.id, tool: call.tool.name, arguments: call.arguments }, result, signal);
}

/** The result, then one line per thing a hook said for the model. */
export function withHookNotes(content: string, notes: readonly HookNote[]): string {
  if (notes.length === 0) return content;
  const lines = notes.map((note) => `[hook \`${note.hook}\`] ${note.text}`);
  return `${content}${content.endsWith('\n') || content === '' ? '' : '\n'}\n${lines.join('\n')}`;
}
