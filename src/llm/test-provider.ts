/**
 * The `test` provider: replays a scripted conversation from a JSON file, with no network. It is only
 * ever used when the model is explicitly `test` (never as a fallback), and jp says so on stderr.
 *
 * Script format:
 *   { "steps": [ { "parts": [ {"text": "..."}, {"reasoning": "..."}, {"delay_ms": 100},
 *                             {"tool_call": {"name": "fs_create_file", "arguments": {...}}} ] }, ... ],
 *     "inquiry_answer": <JSON value answering structured inquiries> }
 * Request n of a turn gets steps[n], where n is the number of tool-result rounds since the last user
 * message (so a resumed turn gets the step it was waiting for); past the end, the last step.
 */
import { readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import { UsageError } from '../errors.ts';
import type { ChatModel, ChatRequest, StreamPart } from './types.ts';

const partSchema = z.union([
  z.strictObject({ text: z.string() }),
  z.strictObject({ reasoning: z.string() }),
  z.strictObject({ delay_ms: z.number().check(z.nonnegative()) }),
  z.strictObject({
    tool_call: z.strictObject({ id: z.optional(z.string()), name: z.string(), arguments: z.unknown() }),
  }),
]);

const scriptSchema = z.strictObject({
  description: z.optional(z.string()),
  steps: z.array(z.strictObject({ parts: z.array(partSchema) })).check(z.minLength(1)),
  inquiry_answer: z.optional(z.unknown()),
});

export type TestScript = z.infer<typeof scriptSchema>;

export function loadTestScript(file: string): TestScript {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      'test_script_unreadable',
      `cannot read test provider script ${file}: ${(error as Error).message}`,
      {
        hint: 'Set providers.test.script to an existing JSON file (see examples/demo-script.json).',
      },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      'test_script_invalid',
      `test provider script ${file} is not valid JSON: ${(error as Error).message}`,
    );
  }
  const result = scriptSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new UsageError(
      'test_script_invalid',
      `test provider script ${file}: invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
      {
        hint:
          'Each step is {"parts": [...]} with parts {"text"}, {"reasoning"}, {"delay_ms"} or {"tool_call": ' +
          '{"name", "arguments"}}.',
      },
    );
  }
  return result.data;
}

function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    function onAbort(): void {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export class TestChatModel implements ChatModel {
  readonly id: string;
  private readonly script: TestScript;

  constructor(id: string, script: TestScript) {
    this.id = id;
    this.script = script;
  }

  async *stream(request: ChatRequest): AsyncIterable<StreamPart> {
    if (request.signal.aborted) throw request.signal.reason;
    if (request.responseFormat) {
      const text = JSON.stringify({ answer: this.script.inquiry_answer ?? null });
      yield { type: 'text', text };
      yield { type: 'finish', usage: null, reason: 'stop', providerReason: null };
      return;
    }
    const lastUser = request.messages.map((message) => message.role).lastIndexOf('user');
    const rounds = request.messages.slice(lastUser + 1).filter((message) => message.role === 'tool').length;
    const step = this.script.steps[Math.min(rounds, this.script.steps.length - 1)]!;
    let toolCalls = 0;
    for (const part of step.parts) {
      if ('delay_ms' in part) await sleep(part.delay_ms, request.signal);
      else if ('text' in part) {
        yield { type: 'text', text: part.text };
      } else if ('reasoning' in part) {
        yield { type: 'reasoning', text: part.reasoning };
      } else {
        toolCalls++;
        const id = part.tool_call.id ?? `test_call_${rounds}_${toolCalls}`;
        yield {
          type: 'tool_call',
          id,
          name: part.tool_call.name,
          input: JSON.stringify(part.tool_call.arguments ?? {}),
        };
      }
      if (request.signal.aborted) throw request.signal.reason;
    }
    // A script is not a model: it spends no tokens, so it reports no usage.
    yield { type: 'finish', usage: null, reason: toolCalls > 0 ? 'tool-calls' : 'stop', providerReason: null };
  }
}
