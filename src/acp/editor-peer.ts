/**
 * The editor's side of one session, as a run client uses it (EditorPeer): updates, permission
 * requests, forms, files, as far as the editor advertised them in `initialize`.
 */
import {
  type AgentConnection,
  type ClientCapabilities,
  type CreateElicitationResponse,
  type ElicitationSchema,
  methods,
  type PermissionOption,
  type RequestPermissionOutcome,
  type SessionUpdate,
  type ToolCallUpdate,
} from '@agentclientprotocol/sdk';
import type { Logger } from '../output/logger.ts';

/** What a run client needs from the editor's connection, for one session. */
export interface EditorPeer {
  update(update: SessionUpdate): void;
  requestPermission(
    toolCall: ToolCallUpdate,
    options: PermissionOption[],
    signal: AbortSignal,
  ): Promise<RequestPermissionOutcome>;
  /** Undefined when the editor did not advertise form elicitation. */
  elicit:
    | ((
        message: string,
        requestedSchema: ElicitationSchema,
        toolCallId: string | undefined,
        signal: AbortSignal,
      ) => Promise<CreateElicitationResponse>)
    | undefined;
  /** Chrome of the run (retries, warnings). */
  notice(level: 'info' | 'warning', message: string): void;
  /** The editor's fs/read_text_file and fs/write_text_file, when it advertised them. */
  readTextFile: ((file: string, signal: AbortSignal) => Promise<string>) | undefined;
  writeTextFile: ((file: string, content: string, signal: AbortSignal) => Promise<void>) | undefined;
  /** The editor's terminal/* (it advertised `terminal`), else undefined. */
  terminal: EditorTerminals | undefined;
}

/** The editor's terminals, by the methods of ACP's `terminal/*`. */
export interface EditorTerminals {
  create(command: { command: string; args: string[]; cwd: string; outputByteLimit: number }): Promise<string>;
  waitForExit(terminalId: string): Promise<{ exitCode: number | null; signal: string | null }>;
  output(terminalId: string): Promise<{ output: string; truncated: boolean }>;
  kill(terminalId: string): Promise<void>;
  release(terminalId: string): Promise<void>;
}

export function editorPeer(options: {
  connection: AgentConnection;
  capabilities: ClientCapabilities;
  sessionId: string;
  logger: Logger;
  update(update: SessionUpdate): void;
}): EditorPeer {
  const { connection, capabilities, sessionId, logger } = options;
  return {
    update: options.update,
    requestPermission: async (toolCall, permissionOptions, signal) =>
      (
        await connection.client.request(
          methods.client.session.requestPermission,
          { sessionId, toolCall, options: permissionOptions },
          { cancellationSignal: signal },
        )
      ).outcome,
    elicit: capabilities.elicitation?.form
      ? (message, requestedSchema, toolCallId, signal) =>
          connection.client.request(
            methods.client.elicitation.create,
            { sessionId, mode: 'form', message, requestedSchema, ...(toolCallId ? { toolCallId } : {}) },
            { cancellationSignal: signal },
          )
      : undefined,
    readTextFile: capabilities.fs?.readTextFile
      ? async (file, signal) =>
          (
            await connection.client.request(
              methods.client.fs.readTextFile,
              { sessionId, path: file },
              { cancellationSignal: signal, stopWaitingOnCancel: true },
            )
          ).content
      : undefined,
    writeTextFile: capabilities.fs?.writeTextFile
      ? async (file, content, signal) => {
          await connection.client.request(
            methods.client.fs.writeTextFile,
            { sessionId, path: file, content },
            { cancellationSignal: signal, stopWaitingOnCancel: true },
          );
        }
      : undefined,
    terminal: capabilities.terminal
      ? {
          create: async (command) =>
            (
              await connection.client.request(methods.client.terminal.create, {
                sessionId,
                command: command.command,
                args: command.args,
                cwd: command.cwd,
                outputByteLimit: command.outputByteLimit,
              })
            ).terminalId,
          waitForExit: async (terminalId) => {
            const exit = await connection.client.request(methods.client.terminal.waitForExit, {
              sessionId,
              terminalId,
            });
            return { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null };
          },
          output: async (terminalId) => {
            const output = await connection.client.request(methods.client.terminal.output, { sessionId, terminalId });
            return { output: output.output, truncated: output.truncated };
          },
          kill: async (terminalId) => {
            await connection.client.request(methods.client.terminal.kill, { sessionId, terminalId });
          },
          release: async (terminalId) => {
            await connection.client.request(methods.client.terminal.release, { sessionId, terminalId });
          },
        }
      : undefined,
    notice: (level, text) => {
      logger[level === 'info' ? 'info' : 'warn'](`run notice: ${text}`, { session: sessionId });
      if (capabilities.session?.notices) options.update({ sessionUpdate: 'notice', severity: level, title: text });
    },
  };
}

/**
 * What an editor said when it failed a request: its JSON-RPC error's details (a client's refusal is
 * often `Internal error` with the reason in `data`), so the reason reaches the model and the log.
 */
export function editorErrorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const data: unknown = (error as { data?: unknown }).data;
  const record = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  const details =
    typeof data === 'string'
      ? data
      : typeof record.details === 'string'
        ? record.details
        : typeof record.message === 'string'
          ? record.message
          : undefined;
  return details === undefined || error.message.includes(details) ? error.message : `${error.message}: ${details}`;
}
