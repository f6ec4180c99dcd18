/**
 * Runs the real turn engine (src/turn/engine.ts TurnRun) in-process, in milliseconds: the test
 * provider's script as the model (each request it receives is kept, to assert what goes back to
 * the model), a RecordingHost as the host, the real config, seal, inquiry routing and tool-call
 * stages. Tools are test input: `scriptedTool` makes one whose run the test writes.
 */
import type { ConversationEvent } from '../../src/conversation/events.ts';
import { loadConfig, type LoadedConfig } from '../../src/config/load.ts';
import { testConfigInputs } from './config.ts';
import { LogSeal } from '../../src/conversation/seal.ts';
import type { BuiltinDetachedDefault } from '../../src/config/policy.ts';
import type { EscalationNeed } from '../../src/inquiry/types.ts';
import { TestChatModel, type TestScript } from '../../src/llm/test-provider.ts';
import type { ChatModel, ChatRequest, StreamPart } from '../../src/llm/types.ts';
import { runSandboxes } from '../../src/sandbox/engine.ts';
import type { Tool, ToolContext, ToolResult } from '../../src/tools/tool.ts';
import { TurnRun, type TurnOutcome } from '../../src/turn/engine.ts';
import type { RecordingHost } from './recording-host.ts';

export const conversationId = 'jp-c1700000000000000';
/** The seal of "this user's jp"; a log sealed with another key is one this jp did not write. */
export const workspaceId = 'w-000000000000';
export const ownSeal = new LogSeal(Buffer.alloc(32, 7));

export function testConfig(cfgArguments: string[] = []): LoadedConfig {
  return loadConfig(testConfigInputs({ cfgArguments }));
}

/** The test provider playing `script` (or a model of the test's own), keeping every request it was sent. */
export class RecordingModel implements ChatModel {
  readonly id: string;
  readonly requests: ChatRequest[] = [];
  private readonly model: ChatModel;

  constructor(script: TestScript | ChatModel) {
    this.model = 'stream' in script ? script : new TestChatModel('test/script', script);
    this.id = this.model.id;
  }

  stream(request: ChatRequest): AsyncIterable<StreamPart> {
    this.requests.push(structuredClone({ ...request, signal: undefined }) as unknown as ChatRequest);
    return this.model.stream(request);
  }
}

export interface TurnSetup {
  host: RecordingHost;
  /** The test provider's script, or a model of the test's own (a stream paced by the event loop). */
  script: TestScript | ChatModel;
  tools?: Tool[];
  /** `--cfg` arguments: `conversation.tools.x.run="unattended"`. */
  cfg?: string[];
  /** The log before this run (copied: the run's own events are in the result). */
  events?: readonly ConversationEvent[];
  /** A new message starts a turn; without one the incomplete turn is resumed. */
  message?: string;
  reply?: string;
  builtinDetached?: BuiltinDetachedDefault;
  seal?: LogSeal;
  signal?: AbortSignal;
}

export async function runTurn(
  setup: TurnSetup,
): Promise<{ outcome: TurnOutcome; events: ConversationEvent[]; model: RecordingModel }> {
  const config = testConfig(setup.cfg);
  const model = new RecordingModel(setup.script);
  const events = [...(setup.events ?? [])];
  const resume = setup.message === undefined;
  const outcome = await new TurnRun({
    host: setup.host,
    events,
    conversationId,
    model,
    tools: new Map((setup.tools ?? []).map((tool) => [tool.name, tool])),
    config,
    seal: (setup.seal ?? ownSeal).at({ conversationId, workspaceId }),
    builtinDetached: () => setup.builtinDetached ?? 'deny',
    toolRoot: process.cwd(),
    toolEnvironment: () => ({}),
    sandbox: runSandboxes({
      config: config.value,
      workspaceRoot: process.cwd(),
      toolRoot: process.cwd(),
      environment: {},
    }),
    maxTurns: 10,
    systemPrompt: { text: 'You are a test.', files: [] },
    signal: setup.signal ?? new AbortController().signal,
    message: setup.message,
    resume,
    ...(setup.reply !== undefined ? { reply: setup.reply } : {}),
  }).run();
  return { outcome, events, model };
}

/** A script: the model calls these tools in one step, then answers `answer`. */
export function callsThenAnswers(
  calls: { name: string; arguments?: unknown; id?: string }[],
  answer = 'Done.',
): TestScript {
  return {
    steps: [
      {
        parts: calls.map((call) => ({
          tool_call: { name: call.name, arguments: call.arguments ?? {}, ...(call.id ? { id: call.id } : {}) },
        })),
      },
      { parts: [{ text: answer }] },
    ],
  };
}

/** The log as a crash right after the first event matching `where` leaves it. */
export function cutAfter(
  events: readonly ConversationEvent[],
  where: (event: ConversationEvent) => boolean,
): ConversationEvent[] {
  const index = events.findIndex(where);
  if (index === -1) throw new Error('the log has no such event to cut after');
  return events.slice(0, index + 1);
}

export interface ScriptedTool extends Tool {
  /** The arguments of each run, in order. */
  readonly runs: unknown[];
}

/**
 * A tool whose run the test writes. Its arguments are an object with an optional string `path`;
 * anything else is invalid, with a message naming the tool.
 */
export function scriptedTool(
  name: string,
  options: {
    sideEffects?: boolean;
    readOnly?: boolean;
    tellsWhoAnswered?: boolean;
    confined?: boolean;
    escalation?: (argumentsValue: unknown) => { needs: EscalationNeed; justification: string } | undefined;
    run?: (argumentsValue: unknown, context: ToolContext) => Promise<ToolResult> | ToolResult;
  } = {},
): ScriptedTool {
  const runs: unknown[] = [];
  return {
    name,
    description: `${name} (a test tool)`,
    parameters: { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false },
    sideEffects: options.sideEffects ?? true,
    ...(options.readOnly ? { readOnly: true } : {}),
    ...(options.tellsWhoAnswered ? { tellsWhoAnswered: true } : {}),
    ...(options.confined ? { confined: true } : {}),
    ...(options.escalation ? { escalation: options.escalation } : {}),
    runs,
    validate(argumentsValue) {
      const valid =
        typeof argumentsValue === 'object' &&
        argumentsValue !== null &&
        !Array.isArray(argumentsValue) &&
        Object.entries(argumentsValue).every(([key, value]) => key === 'path' && typeof value === 'string');
      return valid
        ? { ok: true, value: argumentsValue }
        : { ok: false, message: `Invalid arguments for ${name}: expected {"path"?: string}` };
    },
    async execute(argumentsValue, context) {
      runs.push(argumentsValue);
      return options.run ? options.run(argumentsValue, context) : { kind: 'success', content: `${name} ran` };
    },
  };
}
