/**
 * One MCP server for one run, through the official SDK: started over stdio (a program, in the
 * run's process group, its stderr handed to the run's log) or reached over streamable HTTP, within
 * its start-up time limit; then its tools are listed and called. The client declares the
 * elicitation capability: a server's `elicitation/create` during a call becomes a question of that
 * call (ToolContext.ask), settled like every inquiry. A call has a time limit that does not run
 * while a question waits for its answer. A server that stops is reported once; calls to it fail as
 * tool errors the model can act on.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Question } from '../../inquiry/types.ts';
import type { ProcessTracker, ToolAnswer, ToolResult } from '../tool.ts';
import type { ServerProcessTransport } from './stdio-transport.ts';
import type { CommandSandbox, PreparedCommand } from '../../sandbox/engine.ts';
import { elicitationQuestion, elicitationResult } from './elicitation.ts';
import { describeCallResult } from './result.ts';

export type McpTransportKind = 'stdio' | 'http';

/** A configured server, checked and resolved (`[mcp.servers.<name>]`, see servers.ts). */
export interface McpServerSpec {
  name: string;
  transport: McpTransportKind;
  /** stdio: the program, its arguments, its whole environment (besides the SDK's PATH, HOME...), its directory. */
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** http: the endpoint and the headers sent with every request. */
  url?: string;
  headers: Record<string, string>;
  /** The variable that holds the bearer token; it must be set when the server starts. */
  bearerTokenVariable?: string;
  startupTimeoutSeconds: number;
  toolTimeoutSeconds: number | undefined;
  trustAnnotations: boolean;
  /** stdio: started inside the command sandbox (`mcp.servers.<name>.sandbox = true`). */
  sandbox: boolean;
}

export interface RemoteTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
    title?: string;
  };
}

/** Where a stdio server's process goes (see stdio-transport.ts). */
export interface Placement {
  ownGroup: boolean;
  processes: ProcessTracker | undefined;
  /** The sandbox of servers with `sandbox = true` (DESIGN §10); such a server does not start without it. */
  sandbox: CommandSandbox | undefined;
}

export interface ConnectionEvents {
  /** A line the server wrote on its stderr, redacted. */
  stderr(line: string): void;
  /** Redacts the run's secrets from a text the server made. */
  redact(text: string): string;
  /** The server stopped, or its connection broke, after it was ready. */
  stopped(reason: string): void;
  /** Something the user should know that is not a failure of a call (a request nobody can answer). */
  warning(message: string): void;
}

export interface CallOptions {
  signal: AbortSignal;
  timeoutMilliseconds: number;
  ask(question: Question): Promise<ToolAnswer>;
  progress(message: string): void;
}

interface ActiveCall {
  ask(question: Question): Promise<ToolAnswer>;
  elicitations: number;
  /** Set when a question was deferred: the call is being cancelled. */
  deferred: boolean;
  controller: AbortController;
}

type StreamableHttp = typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');

type Sdk = {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  ServerProcessTransport: typeof import('./stdio-transport.ts').ServerProcessTransport;
  StreamableHTTPClientTransport: StreamableHttp['StreamableHTTPClientTransport'];
  ElicitRequestSchema: typeof import('@modelcontextprotocol/sdk/types.js').ElicitRequestSchema;
  AjvJsonSchemaValidator: typeof import('@modelcontextprotocol/sdk/validation/ajv').AjvJsonSchemaValidator;
};

/** The SDK is loaded only by runs that have MCP servers. */
async function loadSdk(): Promise<Sdk> {
  const [client, stdio, http, types, ajv] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('./stdio-transport.ts'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]);
  return {
    Client: client.Client,
    ServerProcessTransport: stdio.ServerProcessTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ElicitRequestSchema: types.ElicitRequestSchema,
    AjvJsonSchemaValidator: ajv.AjvJsonSchemaValidator,
  };
}

/** setTimeout's largest delay; a larger one fires at once. */
const maxTimerMilliseconds = 2_147_483_647;
/** Progress of one call is shown at most this often (its last step always). */
const progressIntervalMilliseconds = 250;

function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT' && /spawn/.test(message)) return `${message}: no such program (is it installed and on PATH?)`;
  if (code === 'EACCES' && /spawn/.test(message)) return `${message}: not executable`;
  return message;
}

export class McpConnection {
  readonly spec: McpServerSpec;
  state: 'starting' | 'ready' | 'failed' | 'stopped' = 'starting';
  /** Why it failed or stopped. */
  problem: string | undefined;
  tools: RemoteTool[] = [];
  private readonly events: ConnectionEvents;
  private client: Client | undefined;
  private transport: Transport | undefined;
  private process: ServerProcessTransport | undefined;
  private validators: InstanceType<Sdk['AjvJsonSchemaValidator']> | undefined;
  private activeCall: ActiveCall | undefined;
  private readonly recentStderr: string[] = [];
  private closing = false;

  private readonly placement: Placement;
  /** Removes the private TMPDIR of a sandboxed server. */
  private sandboxCleanup: (() => void) | undefined;

  constructor(spec: McpServerSpec, events: ConnectionEvents, placement: Placement) {
    this.spec = spec;
    this.events = events;
    this.placement = placement;
  }

  /** Starts (or reaches) the server and lists its tools, within its start-up time limit. Never throws. */
  async start(environment: NodeJS.ProcessEnv, clientVersion: string): Promise<void> {
    const limit = this.spec.startupTimeoutSeconds;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), limit * 1000)));
    try {
      const outcome = await Promise.race([this.connect(environment, clientVersion), timedOut]);
      if (outcome === 'timeout')
        throw new Error(`it did not answer within ${limit} s (mcp.servers.${this.spec.name}.startup_timeout_secs)`);
      this.state = 'ready';
    } catch (error) {
      this.state = 'failed';
      const tail = this.recentStderr.length > 0 ? `; its last output: ${this.recentStderr.join(' | ')}` : '';
      const spawnFailed = ['ENOENT', 'EACCES'].includes((error as NodeJS.ErrnoException | undefined)?.code ?? '');
      const exited = this.process?.exitDescription;
      this.problem =
        this.process?.stopReason ??
        `${exited && !spawnFailed ? `it exited during start-up (${exited})` : describeError(error)}${tail}`;
      await this.shutdown();
    } finally {
      clearTimeout(timer);
    }
  }

  private async connect(environment: NodeJS.ProcessEnv, clientVersion: string): Promise<void> {
    const sdk = await loadSdk();
    if (this.closing) throw new Error('the run ended before it started');
    this.validators = new sdk.AjvJsonSchemaValidator();
    const client = new sdk.Client(
      { name: 'jp', version: clientVersion },
      { capabilities: { elicitation: { form: {} } }, jsonSchemaValidator: this.validators },
    );
    client.setRequestHandler(sdk.ElicitRequestSchema, (request) =>
      this.elicit(request.params as { mode?: string; message: string; requestedSchema?: Record<string, unknown> }),
    );
    this.client = client;
    const { spec } = this;
    if (spec.transport === 'stdio') {
      const { sandbox, ...placement } = this.placement;
      const command = spec.sandbox
        ? await confinedServer(spec, sandbox)
        : { file: spec.command!, arguments: spec.args, cwd: spec.cwd, environment: {}, cleanup: () => {} };
      this.sandboxCleanup = command.cleanup;
      this.process = new sdk.ServerProcessTransport({
        command: command.file,
        args: command.arguments,
        env: { ...spec.env, ...command.environment },
        cwd: command.cwd,
        ...placement,
        stderrLine: (line) => this.stderrLine(line),
      });
      this.transport = this.process;
    } else {
      const headers = { ...spec.headers };
      if (spec.bearerTokenVariable) {
        const token = environment[spec.bearerTokenVariable];
        if (!token)
          throw new Error(
            `the variable ${spec.bearerTokenVariable} (mcp.servers.${spec.name}.bearer_token_env) is not set`,
          );
        headers.Authorization = `Bearer ${token}`;
      }
      this.transport = new sdk.StreamableHTTPClientTransport(new URL(spec.url!), { requestInit: { headers } });
    }
    client.onclose = () => this.connectionClosed();
    await client.connect(this.transport);
    const tools: RemoteTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      tools.push(...(page.tools as RemoteTool[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.tools = tools;
  }

  private stderrLine(line: string): void {
    // A server's output is made here for jp (its run log, a start-up problem): redacted here.
    const trimmed = this.events.redact(line.trimEnd());
    if (trimmed === '') return;
    this.recentStderr.push(trimmed.slice(0, 200));
    if (this.recentStderr.length > 3) this.recentStderr.shift();
    this.events.stderr(trimmed);
  }

  private connectionClosed(): void {
    if (this.closing || this.state !== 'ready') return;
    this.state = 'stopped';
    const tail = this.recentStderr.length > 0 ? `; its last output: ${this.recentStderr.join(' | ')}` : '';
    const how = this.process?.exitDescription;
    this.problem = this.process?.stopReason ?? `${how ? `it exited (${how})` : 'it closed the connection'}${tail}`;
    this.events.stopped(this.problem);
  }

  /** A validator of a tool's arguments; undefined when the schema cannot be compiled (the server still checks). */
  validatorFor(schema: Record<string, unknown>): JsonSchemaValidator<unknown> | undefined {
    try {
      return this.validators?.getValidator(schema as never);
    } catch {
      return undefined;
    }
  }

  /** Calls a tool of this server; every failure is a tool error. Throws only when the run stops. */
  async call(
    tool: string,
    displayName: string,
    argumentsValue: Record<string, unknown>,
    options: CallOptions,
  ): Promise<ToolResult> {
    const client = this.client;
    if (this.state !== 'ready' || !client) {
      return {
        kind: 'error',
        message:
          `${displayName} is not available: the MCP ` +
          `server ${this.spec.name} ${this.state === 'stopped' ? 'stopped' : 'is not running'} ` +
          `(${this.problem ?? 'unknown reason'}).`,
      };
    }
    const controller = new AbortController();
    let timedOut = false;
    let remaining = options.timeoutMilliseconds;
    let startedAt = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      startedAt = Date.now();
      timer = setTimeout(
        () => {
          timedOut = true;
          controller.abort();
        },
        Math.min(Math.max(remaining, 0), maxTimerMilliseconds),
      );
    };
    const onStop = (): void => controller.abort();
    options.signal.addEventListener('abort', onStop, { once: true });
    const call: ActiveCall = {
      // The time limit does not run while a question waits for its answer.
      ask: async (question) => {
        clearTimeout(timer);
        remaining -= Date.now() - startedAt;
        try {
          return await options.ask(question);
        } finally {
          if (!controller.signal.aborted) arm();
        }
      },
      elicitations: 0,
      deferred: false,
      controller,
    };
    this.activeCall = call;
    let lastProgress = 0;
    arm();
    try {
      const result = await client.callTool({ name: tool, arguments: argumentsValue }, undefined, {
        signal: controller.signal,
        timeout: maxTimerMilliseconds,
        onprogress: (progress) => {
          const finished = progress.total !== undefined && progress.progress >= progress.total;
          if (!finished && Date.now() - lastProgress < progressIntervalMilliseconds) return;
          lastProgress = Date.now();
          const amount =
            progress.total !== undefined ? `${progress.progress}/${progress.total}` : String(progress.progress);
          options.progress(`progress ${amount}${progress.message ? ` ${progress.message}` : ''}`);
        },
      });
      const described = describeCallResult(result as Record<string, unknown>);
      return described.isError
        ? { kind: 'error', message: described.text || `${displayName} reported an error` }
        : { kind: 'success', content: described.text };
    } catch (error) {
      if (options.signal.aborted) throw options.signal.reason;
      if (call.deferred) return { kind: 'error', message: `${displayName} was cancelled to wait for a user's answer` };
      if (timedOut) {
        return {
          kind: 'error',
          message:
            `${displayName} timed out after ${Math.round(options.timeoutMilliseconds / 1000)} s and was ` +
            `cancelled (mcp.servers.${this.spec.name}.tool_timeout_secs)`,
        };
      }
      // The server may have stopped while the call ran (state changes behind TypeScript's back).
      if ((this.state as McpConnection['state']) === 'stopped')
        return {
          kind: 'error',
          message: `the MCP server ${this.spec.name} stopped while ${displayName} was running: ${this.problem}`,
        };
      return { kind: 'error', message: `${displayName} failed: ${describeError(error)}` };
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onStop);
      if (this.activeCall === call) this.activeCall = undefined;
    }
  }

  private async elicit(params: {
    mode?: string;
    message: string;
    requestedSchema?: Record<string, unknown>;
  }): Promise<Record<string, unknown>> {
    const call = this.activeCall;
    if (!call || params.mode === 'url' || !params.requestedSchema) {
      this.events.warning(`the MCP server ${this.spec.name} asked for input outside a tool call; it was declined`);
      return { action: 'decline' };
    }
    const question = elicitationQuestion(call.elicitations++, params.message, params.requestedSchema);
    const answer = await call.ask(question);
    if (answer.kind === 'deferred') {
      call.deferred = true;
      // Answer the server first, then cancel the call: the run stops to wait for a human.
      setImmediate(() => call.controller.abort());
    }
    return elicitationResult(answer);
  }

  /** Ends the server: closes the connection (a stdio server gets EOF, then SIGTERM, then SIGKILL). */
  async shutdown(): Promise<void> {
    this.closing = true;
    const client = this.client;
    const transport = this.transport;
    if (!client && !transport) return;
    try {
      if (
        transport &&
        'terminateSession' in transport &&
        typeof transport.terminateSession === 'function' &&
        this.state === 'ready'
      ) {
        await (transport.terminateSession as () => Promise<void>).call(transport).catch(() => {});
      }
      await (client ?? transport)!.close();
    } catch {
      // already gone
    } finally {
      this.sandboxCleanup?.();
    }
  }

  /** Synchronous last resort when the process exits: a stdio server must not outlive the run. */
  killNow(): void {
    this.process?.killNow();
  }
}

/**
 * A stdio server's command wrapped in the sandbox; a sandbox that cannot start fails its start-up (never unconfined).
 */
async function confinedServer(spec: McpServerSpec, sandbox: CommandSandbox | undefined): Promise<PreparedCommand> {
  if (!sandbox)
    throw new Error(`mcp.servers.${spec.name}.sandbox = true, but this command has no sandbox to start it in`);
  const availability = await sandbox.availability();
  if (!availability.ok)
    throw new Error(
      `mcp.servers.${spec.name}.sandbox = true, and the sandbox cannot start: ${availability.cause}. ` +
        `Fix: ${availability.fix}`,
    );
  return sandbox.prepare({ file: spec.command!, arguments: spec.args, cwd: spec.cwd });
}
