/**
 * Shorthands for `jp acp` tests driven by the SDK's client (support/acp.ts): an editor on a fake
 * provider, a session, a prompt, and the end every test shares (stdout held only JSON-RPC, all of
 * it valid ACP by the SDK's schema).
 */
import assert from 'node:assert/strict';
import { type ClientCapabilities, methods, type McpServer } from '@agentclientprotocol/sdk';
import { type Editor, initialize, startEditor, validateTraffic } from './acp.ts';
import { type FakeProvider, type ScriptedStep, startFakeProvider } from './fake-provider.ts';
import type { Sandbox } from './jp.ts';

type Cleanup = { add(cleanup: () => unknown): void };

export async function acpProvider(
  cleanup: Cleanup,
  steps: ScriptedStep[] | ((request: never, index: number) => ScriptedStep),
): Promise<FakeProvider> {
  const started = await startFakeProvider({ wire: 'openai-chat', steps: steps as ScriptedStep[] });
  cleanup.add(() => started.close());
  return started;
}

/** `jp acp` arguments that point jp at the fake provider, and the key it needs. */
export function acpModelSettings(fake: FakeProvider): { args: string[]; env: NodeJS.ProcessEnv } {
  return {
    args: [
      '-m',
      'openai/gpt-test',
      '-c',
      `providers.openai.base_url="${fake.baseUrl}"`,
      '-c',
      'providers.openai.api="chat"',
    ],
    env: { OPENAI_API_KEY: 'sk-test-key-000000000000000000' },
  };
}

export async function acpEditor(
  cleanup: Cleanup,
  sandbox: Sandbox,
  fake: FakeProvider,
  options: { extra?: string[]; capabilities?: ClientCapabilities; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<Editor> {
  const settings = acpModelSettings(fake);
  const editor = startEditor(sandbox, {
    args: [...settings.args, ...(options.extra ?? [])],
    env: { ...settings.env, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  cleanup.add(() => editor.close());
  await initialize(editor, options.capabilities ?? {});
  return editor;
}

export async function acpNewSession(editor: Editor, cwd: string, mcpServers: McpServer[] = []): Promise<string> {
  return (await editor.connection.agent.request(methods.agent.session.new, { cwd, mcpServers })).sessionId;
}

export function acpPrompt(editor: Editor, sessionId: string, text: string): Promise<{ stopReason: string }> {
  return editor.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

/** The end of every test: jp acp exits 0 when the editor closes stdin; stdout held only valid ACP. */
export async function acpFinish(editor: Editor): Promise<void> {
  const code = await editor.close();
  assert.equal(code, 0, editor.stderr());
  assert.ok(validateTraffic(editor) > 0);
}

/** A request's JSON-RPC error (the test fails if it succeeds). */
export function acpErrorOf<T>(promise: Promise<T>): Promise<{ code: number; message: string; data?: unknown }> {
  return promise.then(
    () => assert.fail('expected a JSON-RPC error'),
    (error: { code: number; message: string; data?: unknown }) => error,
  );
}
