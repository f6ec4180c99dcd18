/**
 * An MCP server's tool as a jp tool named `mcp__<server>__<tool>`, with the server's JSON Schema.
 * It is an ordinary tool for policy (`conversation.tools.mcp__<server>__<tool>`): it asks before it
 * runs and counts as having side effects, unless the server is configured with
 * `trust_annotations = true` and marks the tool `readOnlyHint`.
 */
import { validationMessage, type Tool } from '../tool.ts';
import type { McpConnection, RemoteTool } from './connection.ts';

/** Providers accept tool names of at most 64 letters, digits, `_` and `-`. */
export const maxToolNameLength = 64;

/** The jp name of a server's tool; characters providers refuse become `_`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export function createMcpTool(connection: McpConnection, remote: RemoteTool, name: string): Tool {
  const server = connection.spec.name;
  const parameters: Record<string, unknown> = { ...remote.inputSchema };
  delete parameters.$schema;
  if (parameters.type === undefined) parameters.type = 'object';
  const readOnly = connection.spec.trustAnnotations && remote.annotations?.readOnlyHint === true;
  let validator: ReturnType<McpConnection['validatorFor']>;
  let compiled = false;
  const tool: Tool = {
    name,
    description:
      remote.description ??
      remote.title ??
      remote.annotations?.title ??
      `Tool ${remote.name} of the MCP server ${server}`,
    parameters,
    sideEffects: !readOnly,
    ...(readOnly ? { readOnly: true } : {}),
    available: () => connection.state === 'ready',
    validate(argumentsValue) {
      const value = argumentsValue ?? {};
      if (typeof value !== 'object' || Array.isArray(value))
        return { ok: false, message: validationMessage(name, 'the arguments must be a JSON object', parameters) };
      if (!compiled) {
        validator = connection.validatorFor(remote.inputSchema);
        compiled = true;
      }
      if (!validator) return { ok: true, value };
      const result = validator(value);
      return result.valid
        ? { ok: true, value }
        : { ok: false, message: validationMessage(name, result.errorMessage, parameters) };
    },
    execute(argumentsValue, context) {
      return connection.call(remote.name, name, argumentsValue as Record<string, unknown>, {
        signal: context.signal,
        timeoutMilliseconds: context.timeoutMilliseconds,
        ask: context.ask,
        progress: context.progress,
      });
    },
  };
  if (readOnly)
    tool.defaultRunMode = {
      value: 'unattended',
      reason: `readOnlyHint of the MCP server ${server}, trusted by mcp.servers.${server}.trust_annotations`,
    };
  if (connection.spec.toolTimeoutSeconds !== undefined) tool.timeoutSeconds = connection.spec.toolTimeoutSeconds;
  return tool;
}
