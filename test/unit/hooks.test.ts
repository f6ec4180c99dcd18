/**
 * The pure parts of hooks (src/hooks/): which hooks a config gives (every layer's, once each,
 * `escalate` only from the user's own layers, the old on_waiting key), how the schema refuses bad
 * entries, how matchers match, and what each exit code and JSON answer decides.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { type ConfigInputs, loadConfig } from '../../src/config/load.ts';
import { JpError } from '../../src/errors.ts';
import type { HookRun } from '../../src/hooks/command.ts';
import { type ConfiguredHook, configuredHooks } from '../../src/hooks/config.ts';
import {
  blocked,
  permissionDecision,
  promptContext,
  stopAsked,
  systemMessage,
  toolDecision,
} from '../../src/hooks/decision.ts';
import { commonToolInput, commonToolName, jpArguments, matchesTool } from '../../src/hooks/tool-names.ts';

const directories: string[] = [];
after(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

function inputs(overrides: Partial<ConfigInputs> = {}): ConfigInputs {
  return { userFile: undefined, workspaceFile: undefined, environment: {}, cfgArguments: [], flags: [], ...overrides };
}

/** A user config file and a workspace's .jp/config.toml in a fresh directory. */
function files(user: string, workspace: string): { user: string; workspace: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'jp-hooks-'));
  directories.push(root);
  mkdirSync(path.join(root, 'w', '.jp'), { recursive: true });
  writeFileSync(path.join(root, 'user.toml'), user);
  writeFileSync(path.join(root, 'w', '.jp', 'config.toml'), workspace);
  return { user: path.join(root, 'user.toml'), workspace: path.join(root, 'w', '.jp', 'config.toml') };
}

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(JpError.isInstance(error), String(error));
    return error.message;
  }
  assert.fail('expected a configuration error');
}

describe('configured hooks', () => {
  it("every layer counts, a hook named twice runs once, and escalate counts only in the user's own layers", () => {
    const { user, workspace } = files(
      '[[hooks.PermissionRequest]]\ncommand = "approve"\n\n[[hooks.PreToolUse]]\nmatcher = "Bash"\ncommand = "guard"\n',
      '[[hooks.PermissionRequest]]\ncommand = "workspace-approve"\nescalate = true\n\n[[hooks.PreToolUse]]\nmatcher = "Bash"\ncommand = "guard"\n',
    );
    const untrusted = loadConfig(inputs({ userFile: user, workspaceFile: workspace }));
    assert.deepEqual(
      untrusted.ignored.map((key) => key.key),
      ['hooks'],
      "an untrusted workspace's hooks are left out",
    );
    assert.deepEqual(
      configuredHooks(untrusted).map((hook) => hook.command),
      ['guard', 'approve'],
    );
    const trusted = loadConfig(
      inputs({
        userFile: user,
        workspaceFile: workspace,
        trustedWorkspaceSha256: untrusted.workspace!.sha256,
        cfgArguments: ['hooks.PermissionRequest=[{command="approve", escalate=true}]'],
      }),
    );
    const hooks = configuredHooks(trusted);
    assert.deepEqual(
      hooks.map((hook) => [hook.event, hook.command, hook.escalate]),
      [
        ['PreToolUse', 'guard', false],
        ['PermissionRequest', 'approve', true],
        ['PermissionRequest', 'workspace-approve', false],
      ],
    );
    assert.equal(trusted.value.hooks?.PermissionRequest?.length, 3, "the merged config keeps every layer's entries");
  });

  it('timeouts default to 60 s (PermissionRequest 600 s); on_waiting is a Notification hook for waiting_for_input', () => {
    const loaded = loadConfig(
      inputs({
        cfgArguments: [
          'hooks.Stop=[{command="a"}]',
          'hooks.PermissionRequest=[{command="b"}]',
          'hooks.PreToolUse=[{command="c", timeout=2.5}]',
          'conversation.hooks.on_waiting="notify-send waiting"',
        ],
      }),
    );
    const byCommand = new Map(configuredHooks(loaded).map((hook) => [hook.command, hook]));
    assert.equal(byCommand.get('a')!.timeoutMilliseconds, 60_000);
    assert.equal(byCommand.get('b')!.timeoutMilliseconds, 600_000);
    assert.equal(byCommand.get('c')!.timeoutMilliseconds, 2500);
    const waiting = byCommand.get('notify-send waiting')!;
    assert.equal(waiting.event, 'Notification');
    assert.equal(waiting.waitingVariables, true);
    assert.ok(waiting.matcher!.test('waiting_for_input'));
    assert.ok(!waiting.matcher!.test('permission_prompt'));
  });

  it('the schema refuses an unknown event, a matcher that is no regular expression, a timeout over an hour, escalate off PermissionRequest', () => {
    assert.match(
      configError(() => loadConfig(inputs({ cfgArguments: ['hooks.PreToolUs=[{command="x"}]'] }))),
      /unknown key hooks\.PreToolUs/,
    );
    assert.match(
      configError(() => loadConfig(inputs({ cfgArguments: ['hooks.PreToolUse=[{command="x", matcher="Bash("}]'] }))),
      /hooks\.PreToolUse\.0\.matcher/,
    );
    assert.match(
      configError(() => loadConfig(inputs({ cfgArguments: ['hooks.Stop=[{command="x", timeout=3601}]'] }))),
      /at most 3600/,
    );
    assert.match(
      configError(() => loadConfig(inputs({ cfgArguments: ['hooks.PreToolUse=[{command="x", escalate=true}]'] }))),
      /unknown key hooks\.PreToolUse\.0\.escalate/,
    );
  });
});

describe('tool names and inputs', () => {
  it("jp's tools have the common names; a matcher is anchored and matches either name", () => {
    assert.equal(commonToolName('run_command'), 'Bash');
    assert.equal(commonToolName('fs_modify_file'), 'Edit');
    assert.equal(commonToolName('mcp__git__status'), 'mcp__git__status');
    assert.ok(matchesTool(/^(?:Bash)$/, 'run_command'));
    assert.ok(matchesTool(/^(?:run_command)$/, 'run_command'));
    assert.ok(!matchesTool(/^(?:Bas)$/, 'run_command'));
    assert.ok(matchesTool(/^(?:mcp__git__.*)$/, 'mcp__git__status'));
    assert.ok(matchesTool(undefined, 'anything'));
  });

  it('file tools get the absolute file_path; a changed file_path becomes the path, the rest replaces the input', () => {
    assert.deepEqual(commonToolInput('fs_create_file', { path: 'a/b.txt', content: 'x' }, '/root'), {
      path: 'a/b.txt',
      content: 'x',
      file_path: '/root/a/b.txt',
    });
    assert.deepEqual(
      jpArguments(
        'fs_create_file',
        { path: 'a/b.txt', file_path: '/root/a/b.txt', content: 'y' },
        { path: 'a/b.txt' },
        '/root',
      ),
      { path: 'a/b.txt', content: 'y' },
    );
    assert.deepEqual(
      jpArguments(
        'fs_create_file',
        { path: 'a/b.txt', file_path: '/root/c.txt', content: 'y' },
        { path: 'a/b.txt' },
        '/root',
      ),
      { path: '/root/c.txt', content: 'y' },
    );
    assert.deepEqual(jpArguments('run_command', { command: 'ls' }, { command: 'rm', cwd: 'x' }, '/root'), {
      command: 'ls',
    });
  });
});

const hook: ConfiguredHook = {
  event: 'PreToolUse',
  command: 'h',
  matcher: undefined,
  timeoutMilliseconds: 1000,
  escalate: false,
  waitingVariables: false,
};

function ok(json: Record<string, unknown> | undefined, stdout = json ? JSON.stringify(json) : ''): HookRun {
  return { kind: 'ok', hook, json, stdout, stderr: '' };
}

describe('what a hook decides', () => {
  it('PreToolUse: permissionDecision, the older decision, exit 2, continue: false, failures', () => {
    const specific = (output: Record<string, unknown>): HookRun => ok({ hookSpecificOutput: output });
    assert.deepEqual(toolDecision(specific({ permissionDecision: 'deny', permissionDecisionReason: 'no' })), {
      decision: 'deny',
      reason: 'no',
      updatedInput: undefined,
    });
    assert.equal(toolDecision(specific({ permissionDecision: 'ask' })).decision, 'ask');
    assert.deepEqual(toolDecision(specific({ permissionDecision: 'allow', updatedInput: { a: 1 } })).updatedInput, {
      a: 1,
    });
    assert.equal(toolDecision(specific({ permissionDecision: 'maybe' })).decision, undefined);
    assert.deepEqual(toolDecision(ok({ decision: 'block', reason: 'older form' })), {
      decision: 'deny',
      reason: 'older form',
      updatedInput: undefined,
    });
    assert.equal(toolDecision(ok({ decision: 'approve' })).decision, 'allow');
    assert.equal(toolDecision({ kind: 'block', hook, stderr: 'stop' }).decision, 'deny');
    assert.equal(toolDecision(ok({ continue: false, stopReason: 'enough' })).decision, 'deny');
    assert.equal(toolDecision({ kind: 'failed', hook, failure: 'exit code 1', stderr: '' }).decision, undefined);
    assert.equal(toolDecision(ok(undefined, 'plain text')).decision, undefined);
  });

  it('PermissionRequest: decision.behavior with message, updatedInput and interrupt; exit 2 denies; anything else is no answer', () => {
    const decided = (decision: unknown): HookRun =>
      ok({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } });
    assert.deepEqual(permissionDecision(decided({ behavior: 'allow', updatedInput: { command: 'ls' } })), {
      behavior: 'allow',
      message: undefined,
      updatedInput: { command: 'ls' },
      interrupt: false,
    });
    assert.deepEqual(permissionDecision(decided({ behavior: 'deny', message: 'no', interrupt: true })), {
      behavior: 'deny',
      message: 'no',
      updatedInput: undefined,
      interrupt: true,
    });
    assert.equal(permissionDecision(decided({ behavior: 'ask' })), undefined);
    assert.equal(permissionDecision(ok(undefined, '')), undefined);
    assert.equal(permissionDecision({ kind: 'block', hook, stderr: 'nope' })?.behavior, 'deny');
    assert.equal(permissionDecision({ kind: 'cancelled', hook }), undefined);
    assert.equal(
      permissionDecision(ok({ hookSpecificOutput: { permissionDecision: 'allow' } }))?.behavior,
      'allow',
      "PreToolUse's form is read too",
    );
  });

  it('blocks, context, stop and messages', () => {
    assert.deepEqual(blocked({ kind: 'block', hook, stderr: 'why' }), { reason: 'why' });
    assert.deepEqual(blocked(ok({ decision: 'block', reason: 'because' })), { reason: 'because' });
    assert.equal(blocked(ok({ decision: 'approve' })), undefined);
    assert.equal(promptContext(ok(undefined, 'plain context')), 'plain context');
    assert.equal(promptContext(ok({ hookSpecificOutput: { additionalContext: 'json context' } })), 'json context');
    assert.equal(promptContext(ok({ continue: true })), undefined, 'a JSON answer is not context by itself');
    assert.equal(stopAsked(ok({ continue: false })), 'the hook asked to stop (continue: false)');
    assert.equal(stopAsked(ok({ continue: true })), undefined);
    assert.equal(systemMessage(ok({ systemMessage: 'hello you' })), 'hello you');
  });
});
