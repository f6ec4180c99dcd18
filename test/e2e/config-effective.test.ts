/**
 * `jp config show --effective <tool>` answers only for tools that exist: an unknown name is a usage
 * error that lists the known tools, taken from the tool registry (builtins and local command tools,
 * enabled or not) and from the configured MCP servers, asked for their tools as `jp mcp ls` asks
 * them (server-everything, a real MCP server from the npm registry, over stdio).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { eventually, runJp, type Sandbox, useCleanup } from '../support/jp.ts';
import { everythingStdio, killServers, serverProcesses, writeUserConfig } from '../support/mcp.ts';

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
    assert.deepEqual(known, [
      'fs_read_file',
      'fs_list_files',
      'fs_search',
      'fs_create_file',
      'fs_modify_file',
      'run_command',
      'ask_user',
      'deploy',
    ]);

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

  it('an unknown tool lists the tools of the configured MCP servers too, the ones `jp mcp ls` lists; an MCP tool they offer answers', async () => {
    const sandbox = cleanup.sandbox();
    cleanup.add(() => killServers(sandbox.root));
    writeUserConfig(sandbox, config + '\n' + everythingStdio('everything', sandbox.root));
    const listed = await runJp(sandbox, ['mcp', 'ls', '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const offered: string[] = JSON.parse(listed.stdout).servers[0].tools.map((tool: { name: string }) => tool.name);
    assert.ok(offered.includes('mcp__everything__echo'), offered.join(', '));

    const unknown = await runJp(sandbox, ['config', 'show', '--effective', 'nosuchtool']);
    assert.equal(unknown.code, 2, unknown.stderr);
    assert.equal(unknown.stdout, '');
    assert.match(unknown.stderr, /"nosuchtool": no such tool/);
    const known = /Known tools: ([^\n]*)\./.exec(unknown.stderr)?.[1]?.split(', ');
    assert.deepEqual(known, [
      'fs_read_file',
      'fs_list_files',
      'fs_search',
      'fs_create_file',
      'fs_modify_file',
      'run_command',
      'ask_user',
      'deploy',
      ...offered,
    ]);

    const json = await runJp(sandbox, ['config', 'show', '--json', '--effective', 'nosuchtool']);
    assert.equal(json.code, 2);
    assert.match(JSON.parse(json.stderr.trim()).hint, /Known tools: .*deploy, mcp__everything__/);

    const notOffered = await runJp(sandbox, ['config', 'show', '--effective', 'mcp__everything__nosuchtool']);
    assert.equal(notOffered.code, 2, notOffered.stderr);
    assert.match(
      notOffered.stderr,
      /"mcp__everything__nosuchtool": the MCP server everything offers no tool of that name/,
    );
    assert.match(notOffered.stderr, /Known tools: .*mcp__everything__echo/);

    const effective = await runJp(sandbox, ['config', 'show', '--effective', 'mcp__everything__echo']);
    assert.equal(effective.code, 0, effective.stderr);
    assert.match(
      effective.stdout,
      /^tool mcp__everything__echo\n {2}\(MCP tool of the server everything; its annotations relax nothing/,
    );
    assert.match(effective.stdout, /run \(attached\)\s+= ask\s/);
    await eventually('the servers config show started have ended', () => serverProcesses(sandbox.root).length === 0);
  });

  it('a tool of a configured server that does not start is still taken as its MCP tool, saying why nothing more is known; the failure is listed for an unknown name', async () => {
    const sandbox = cleanup.sandbox();
    writeUserConfig(sandbox, '[mcp.servers.broken]\ncommand = "jp-no-such-program-anywhere"\n');
    const effective = await runJp(sandbox, ['config', 'show', '--effective', 'mcp__broken__echo']);
    assert.equal(effective.code, 0, effective.stderr);
    assert.match(
      effective.stdout,
      /MCP tool of the server broken, which could not be asked for its tools: it failed to start: .*no such program/,
    );
    const unknown = await runJp(sandbox, ['config', 'show', '--effective', 'nosuchtool']);
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.stderr,
      /Not listed, the tools of the MCP servers that offer none now: broken \(.*no such program/,
    );
  });
});
