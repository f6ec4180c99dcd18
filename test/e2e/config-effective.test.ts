/**
 * `jp config show --effective <tool>` answers only for tools that exist: an unknown name is a usage
 * error that lists the known tools, taken from the tool registry (builtins and local command tools,
 * enabled or not).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runJp, type Sandbox, useCleanup } from '../support/jp.ts';

const cleanup = useCleanup();

const config = `
[conversation.tools.deploy]
command = "./deploy.sh"
description = "Deploy the site"

[conversation.tools.run_command]
enable = false
`;

/** The user's own config (a workspace config's local tools wait for the user's trust). */
function sandboxWithUserConfig(): Sandbox {
  const sandbox = cleanup.sandbox();
  const directory = path.join(sandbox.env.XDG_CONFIG_HOME!, 'jp');
  mkdirSync(directory, { recursive: true });
  writeFileSync(path.join(directory, 'config.toml'), config);
  return sandbox;
}

describe('config show --effective', () => {
  it('an unknown tool exits 2, prints nothing on stdout, and lists the known tools (a local tool and a disabled builtin included)', async () => {
    const sandbox = sandboxWithUserConfig();
    const result = await runJp(sandbox, ['config', 'show', '--effective', 'nosuchtool']);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /"nosuchtool": no such tool/);
    const known = /Known tools: ([^\n]*)\./.exec(result.stderr)?.[1]?.split(', ');
    assert.deepEqual(known, ['fs_read_file', 'fs_list_files', 'fs_create_file', 'fs_modify_file', 'run_command', 'ask_user', 'deploy']);

    const json = await runJp(sandbox, ['config', 'show', '--json', '--effective', 'nosuchtool']);
    assert.equal(json.code, 2);
    assert.equal(json.stdout, '');
    const error = JSON.parse(json.stderr.trim());
    assert.equal(error.code, 'tool_unknown');
    assert.match(error.hint, /Known tools: .*deploy/);
  });

  it('known tools, builtin, local or disabled, still print their policies', async () => {
    const sandbox = sandboxWithUserConfig();
    for (const tool of ['fs_modify_file', 'deploy', 'run_command']) {
      const result = await runJp(sandbox, ['config', 'show', '--effective', tool]);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^tool ${tool}\\n`));
      assert.match(result.stdout, /detached\.run +=/);
    }
  });
});
