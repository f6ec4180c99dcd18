/**
 * An editor for `jp acp` tests: the SDK's own client app over the child's stdio, as Zed or a Neovim
 * plugin connects. Every byte the agent writes to stdout is kept, and every message both ways, so a
 * test can check that stdout held nothing but JSON-RPC and that the whole session's traffic is
 * what the SDK's JSON Schema allows.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type ClientCapabilities,
  type ClientConnection,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import ajv2020 from 'ajv/dist/2020.js';
import { startJp, type Sandbox } from './jp.ts';

export interface Editor {
  child: ChildProcess;
  connection: ClientConnection;
  /** Every session/update received, in order. */
  updates: SessionNotification[];
  /** Every permission request received, in order. */
  permissions: RequestPermissionRequest[];
  elicitations: CreateElicitationRequest[];
  /** How the editor answers the next permission request (default: allow once). */
  onPermission: (request: RequestPermissionRequest, signal: AbortSignal) => Promise<RequestPermissionResponse>;
  onElicitation: (request: CreateElicitationRequest) => Promise<CreateElicitationResponse>;
  /** The editor's open buffers by absolute path (what fs/read_text_file answers; else the request fails). */
  buffers: Map<string, string>;
  /** When set, fs/write_text_file is refused as acpx refuses it: `Internal error` with this reason in `data.details`. */
  refuseWrites: string | undefined;
  /**
   * The editor's terminals (when it advertises `terminal`): each terminal/create runs its command
   * for real, in `terminalEnvironment` (the editor's own, as an editor's terminals inherit it).
   */
  terminals: EditorTerminal[];
  terminalEnvironment: NodeJS.ProcessEnv;
  /** Every fs/read_text_file path and fs/write_text_file asked of the editor, in order. */
  fileReads: string[];
  fileWrites: { path: string; content: string }[];
  /** Everything the agent wrote on stdout, byte for byte. */
  stdout(): Buffer;
  /** The requests the editor sent, by id (to match the agent's responses). */
  sentRequests: Map<string, string>;
  stderr(): string;
  /** Closes stdin (the editor quits) and waits for the agent to exit. */
  close(): Promise<number | null>;
}

export interface EditorTerminal {
  id: string;
  command: string;
  args: string[];
  cwd: string | null | undefined;
  output: string;
  exit: Promise<{ exitCode: number | null; signal: string | null }>;
  killed: boolean;
  released: boolean;
}

export function startEditor(
  sandbox: Sandbox,
  options: { args?: string[]; env?: NodeJS.ProcessEnv; capabilities?: ClientCapabilities; cwd?: string } = {},
): Editor {
  const child = startJp(sandbox, ['acp', ...(options.args ?? [])], {
    stdin: 'open-pipe',
    ...(options.env ? { env: options.env } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const received: Buffer[] = [];
  const errors: Buffer[] = [];
  // Safety net only (never a timed assertion): a hung agent is killed, so the test's pending
  // requests fail with the connection instead of hanging the suite.
  const safety = setTimeout(() => {
    errors.push(Buffer.from('\n[test harness: jp acp still running after 120 s (hung); killed]\n'));
    child.kill('SIGKILL');
  }, 120_000);
  child.once('exit', () => clearTimeout(safety));
  child.stderr!.on('data', (chunk: Buffer) => errors.push(chunk));
  // Every complete stdout line is checked as it arrives: one that is not JSON-RPC ends the agent at
  // once (an SDK client would skip it and wait forever for the answer it displaced).
  let partialLine = '';
  const checkLines = (chunk: Buffer): void => {
    const lines = (partialLine + chunk.toString('utf8')).split('\n');
    partialLine = lines.pop()!;
    for (const line of lines) {
      let message: { jsonrpc?: unknown } | undefined;
      try {
        message = JSON.parse(line) as { jsonrpc?: unknown };
      } catch {
        message = undefined;
      }
      if (message?.jsonrpc !== '2.0') {
        errors.push(
          Buffer.from(
            `\n[test harness: stdout carried a line that is not JSON-RPC: ${JSON.stringify(line.slice(0, 200))}; killed]\n`,
          ),
        );
        child.kill('SIGKILL');
      }
    }
  };
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      child.stdout!.on('data', (chunk: Buffer) => {
        received.push(chunk);
        checkLines(chunk);
        controller.enqueue(new Uint8Array(chunk));
      });
      child.stdout!.on('end', () => controller.close());
    },
  });
  const sentRequests = new Map<string, string>();
  let pendingSent = '';
  const output = new WritableStream<Uint8Array>({
    write(chunk) {
      pendingSent += Buffer.from(chunk).toString('utf8');
      const lines = pendingSent.split('\n');
      pendingSent = lines.pop()!;
      for (const line of lines) {
        const message = JSON.parse(line) as { id?: number | string; method?: string };
        if (message.id !== undefined && message.method !== undefined)
          sentRequests.set(String(message.id), message.method);
      }
      // An answer that comes after the editor closed the agent's stdin (a terminal's exit) is dropped.
      if (child.stdin!.writableEnded || child.stdin!.destroyed) return Promise.resolve();
      return new Promise((resolve) => child.stdin!.write(chunk, () => resolve()));
    },
    close() {
      child.stdin!.end();
    },
  });
  const editor: Editor = {
    child,
    connection: undefined as unknown as ClientConnection,
    updates: [],
    permissions: [],
    elicitations: [],
    onPermission: async (request) => ({
      outcome: {
        outcome: 'selected',
        optionId: request.options.find((option) => option.kind === 'allow_once')!.optionId,
      },
    }),
    onElicitation: async () => ({ action: 'cancel' }),
    buffers: new Map(),
    refuseWrites: undefined,
    terminals: [],
    terminalEnvironment: { PATH: process.env.PATH },
    fileReads: [],
    fileWrites: [],
    stdout: () => Buffer.concat(received),
    sentRequests,
    stderr: () => Buffer.concat(errors).toString('utf8'),
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve(code);
        });
        child.stdin!.end();
      }),
  };
  const terminalProcesses = new Map<string, ChildProcess>();
  child.once('exit', () => {
    for (const running of terminalProcesses.values())
      try {
        process.kill(-running.pid!, 'SIGKILL');
      } catch {
        // ended
      }
  });
  const app = client({ name: 'test-editor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      editor.updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params, signal }) => {
      editor.permissions.push(params);
      return editor.onPermission(params, signal);
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      editor.fileReads.push(params.path);
      // An open buffer, else the file on disk, as an editor answers.
      // (Regular files only: reading a FIFO would block this test process.)
      const content =
        editor.buffers.get(params.path) ??
        (existsSync(params.path) && statSync(params.path).isFile() ? readFileSync(params.path, 'utf8') : undefined);
      if (content === undefined) throw RequestError.resourceNotFound(params.path);
      return { content };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      editor.fileWrites.push({ path: params.path, content: params.content });
      if (editor.refuseWrites !== undefined) throw RequestError.internalError({ details: editor.refuseWrites });
      editor.buffers.set(params.path, params.content);
      return {};
    })
    .onRequest(methods.client.terminal.create, ({ params }) => {
      const id = `term-${editor.terminals.length + 1}`;
      const running = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? undefined,
        env: editor.terminalEnvironment,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const terminal: EditorTerminal = {
        id,
        command: params.command,
        args: params.args ?? [],
        cwd: params.cwd,
        output: '',
        exit: new Promise((resolve) => {
          running.once('close', (code, signal) => resolve({ exitCode: code, signal }));
          running.once('error', () => resolve({ exitCode: 127, signal: null }));
        }),
        killed: false,
        released: false,
      };
      running.stdout!.on('data', (chunk: Buffer) => (terminal.output += chunk.toString('utf8')));
      running.stderr!.on('data', (chunk: Buffer) => (terminal.output += chunk.toString('utf8')));
      terminalProcesses.set(id, running);
      editor.terminals.push(terminal);
      return { terminalId: id };
    })
    .onRequest(methods.client.terminal.output, async ({ params }) => {
      const terminal = editor.terminals.find((entry) => entry.id === params.terminalId)!;
      const exited = terminalProcesses.get(terminal.id)!.exitCode !== null;
      return {
        output: terminal.output,
        truncated: false,
        ...(exited ? { exitStatus: await terminal.exit } : {}),
      };
    })
    .onRequest(methods.client.terminal.waitForExit, async ({ params }) => {
      const terminal = editor.terminals.find((entry) => entry.id === params.terminalId)!;
      return terminal.exit;
    })
    .onRequest(methods.client.terminal.kill, ({ params }) => {
      const terminal = editor.terminals.find((entry) => entry.id === params.terminalId)!;
      terminal.killed = true;
      try {
        process.kill(-terminalProcesses.get(terminal.id)!.pid!, 'SIGKILL');
      } catch {
        // it ended already
      }
      return {};
    })
    .onRequest(methods.client.terminal.release, ({ params }) => {
      editor.terminals.find((entry) => entry.id === params.terminalId)!.released = true;
      return {};
    })
    .onRequest(methods.client.elicitation.create, ({ params }) => {
      editor.elicitations.push(params);
      return editor.onElicitation(params);
    });
  editor.connection = app.connect(ndJsonStream(output, input));
  return editor;
}

export async function initialize(editor: Editor, capabilities: ClientCapabilities = {}): Promise<void> {
  const response = await editor.connection.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: capabilities,
    clientInfo: { name: 'test-editor', version: '1.0.0' },
  });
  assert.equal(response.protocolVersion, PROTOCOL_VERSION);
}

/** The updates of one session, as `kind: text` lines for text chunks and kinds otherwise (for order checks). */
export function updateKinds(editor: Editor, sessionId: string): string[] {
  return editor.updates
    .filter((notification) => notification.sessionId === sessionId)
    .map((notification) => notification.update.sessionUpdate);
}

export function textOf(
  editor: Editor,
  sessionId: string,
  kind: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk',
): string {
  return editor.updates
    .filter((notification) => notification.sessionId === sessionId && notification.update.sessionUpdate === kind)
    .map((notification) => {
      const content = (notification.update as { content: { type: string; text?: string } }).content;
      return content.type === 'text' ? content.text : '';
    })
    .join('');
}

export type JsonRpcMessage = {
  jsonrpc: string;
  id?: number | string | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: unknown;
};

/** Each line of the agent's stdout, parsed; fails on any byte that is not a JSON-RPC 2.0 message line. */
export function stdoutMessages(editor: Editor): JsonRpcMessage[] {
  const text = editor.stdout().toString('utf8');
  if (text === '') return [];
  assert.ok(text.endsWith('\n'), `stdout ends with a partial line: ${JSON.stringify(text.slice(-80))}`);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      let message: JsonRpcMessage;
      try {
        message = JSON.parse(line) as JsonRpcMessage;
      } catch {
        assert.fail(`stdout carried a line that is not JSON: ${JSON.stringify(line.slice(0, 200))}`);
      }
      assert.equal(message.jsonrpc, '2.0', `stdout carried JSON that is not JSON-RPC 2.0: ${line.slice(0, 200)}`);
      return message;
    });
}

const requireFromHere = createRequire(import.meta.url);
let validators:
  | { message(value: unknown): string | undefined; definition(name: string, value: unknown): string | undefined }
  | undefined;

/** The SDK's JSON Schema of ACP v1, compiled once. */
function schemaValidators(): NonNullable<typeof validators> {
  if (validators) return validators;
  const schema = JSON.parse(
    readFileSync(requireFromHere.resolve('@agentclientprotocol/sdk/schema/v1/schema.json'), 'utf8'),
  ) as Record<string, unknown>;
  // ajv is CommonJS: under NodeNext the default import is its module.exports, whose `default` is the class.
  const ajv = new ajv2020.default({ strict: false, allErrors: false });
  // The schema's numeric formats (from its Rust source), checked as what they say.
  const integerIn = (low: number, high: number) => (value: number) =>
    Number.isInteger(value) && value >= low && value <= high;
  ajv.addFormat('int64', { type: 'number', validate: integerIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) });
  ajv.addFormat('uint16', { type: 'number', validate: integerIn(0, 65_535) });
  ajv.addFormat('uint32', { type: 'number', validate: integerIn(0, 4_294_967_295) });
  ajv.addFormat('int32', { type: 'number', validate: integerIn(-2_147_483_648, 2_147_483_647) });
  ajv.addFormat('uint64', { type: 'number', validate: integerIn(0, Number.MAX_SAFE_INTEGER) });
  ajv.addFormat('double', { type: 'number', validate: (value: number) => Number.isFinite(value) });
  ajv.addSchema(schema, 'acp');
  const whole = ajv.getSchema('acp')!;
  const describe = (errors: unknown): string => JSON.stringify(errors).slice(0, 600);
  validators = {
    message: (value) => (whole(value) ? undefined : describe(whole.errors)),
    definition: (name, value) => {
      const validate = ajv.getSchema(`acp#/$defs/${name}`);
      assert.ok(validate, `the SDK schema has no definition ${name}`);
      return validate(value) ? undefined : describe(validate.errors);
    },
  };
  return validators;
}

/** What the agent answers to each client method, by the schema's definition names. */
const responseDefinitions: Record<string, string> = {
  initialize: 'InitializeResponse',
  'session/new': 'NewSessionResponse',
  'session/load': 'LoadSessionResponse',
  'session/list': 'ListSessionsResponse',
  'session/prompt': 'PromptResponse',
  'session/resume': 'ResumeSessionResponse',
  'session/close': 'CloseSessionResponse',
  'session/set_mode': 'SetSessionModeResponse',
  'session/set_config_option': 'SetSessionConfigOptionResponse',
};
const requestDefinitions: Record<string, string> = {
  'session/request_permission': 'RequestPermissionRequest',
  'elicitation/create': 'CreateElicitationRequest',
  'fs/read_text_file': 'ReadTextFileRequest',
  'fs/write_text_file': 'WriteTextFileRequest',
  'terminal/create': 'CreateTerminalRequest',
  'terminal/output': 'TerminalOutputRequest',
  'terminal/wait_for_exit': 'WaitForTerminalExitRequest',
  'terminal/kill': 'KillTerminalRequest',
  'terminal/release': 'ReleaseTerminalRequest',
};

/**
 * Checks one message the agent sent against the SDK's schema: as an ACP message, then a
 * notification's or request's params, or a response's result (`answers`: the method of the
 * request it answers), against the definition of its method.
 */
export function validateAgentMessage(sent: JsonRpcMessage, answers: string | undefined): void {
  const { message, definition } = schemaValidators();
  const problem = message(sent);
  assert.equal(problem, undefined, `not an ACP message: ${JSON.stringify(sent).slice(0, 300)}: ${problem}`);
  if (sent.method === 'session/update')
    assert.equal(definition('SessionNotification', sent.params), undefined, JSON.stringify(sent).slice(0, 300));
  else if (sent.method !== undefined && sent.id !== undefined) {
    const name = requestDefinitions[sent.method];
    assert.ok(name, `the agent sent an unexpected request ${sent.method}`);
    assert.equal(definition(name, sent.params), undefined, JSON.stringify(sent).slice(0, 300));
  } else if (sent.method === undefined && 'result' in sent) {
    const name = answers && responseDefinitions[answers];
    if (name)
      assert.equal(
        definition(name, sent.result),
        undefined,
        `${answers} response: ${JSON.stringify(sent).slice(0, 300)}`,
      );
  } else if (sent.method === undefined) {
    assert.equal(definition('Error', sent.error), undefined, JSON.stringify(sent).slice(0, 300));
  }
}

/**
 * Checks everything the agent sent in this session against the SDK's schema (validateAgentMessage).
 * Returns how many messages were checked.
 */
export function validateTraffic(editor: Editor): number {
  const messages = stdoutMessages(editor);
  for (const sent of messages)
    validateAgentMessage(sent, sent.method === undefined ? editor.sentRequests.get(String(sent.id)) : undefined);
  return messages.length;
}
