/**
 * The config files are read once per process (config/snapshot.ts): `jp query` reads the user config
 * and the workspace config once each, and its query server reads none (it goes by the snapshot the
 * client sent with the run request). Counted as the kernel sees it: `strace -f` of the whole
 * command, the client and everything it starts, headless and at a terminal that answers the trust
 * prompt (where the theme, the safe directories, the secret variables, the trust decision and the
 * configuration are all needed).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { writeUserConfig } from '../support/mcp.ts';
import { jpBinary, type Sandbox, useCleanup } from '../support/jp.ts';
import { Screen } from '../support/screen.ts';

const cleanup = useCleanup();

/** A user config and a workspace config that every part of a run reads something of. */
function configuredSandbox(): { sandbox: Sandbox; userFile: string; workspaceFile: string } {
  const sandbox = cleanup.sandbox({
    // run = "unattended" needs the user's trust: at a terminal, the run asks first.
    config: '[assistant]\nmax_turns = 5\n\n[conversation.tools.run_command]\nrun = "unattended"\n',
  });
  const script = sandbox.write('script.json', JSON.stringify({ steps: [{ parts: [{ text: 'Hello!' }] }] }));
  const userFile = writeUserConfig(
    sandbox,
    [
      '[assistant]',
      'model = "test"',
      '[providers.test]',
      `script = ${JSON.stringify(script)}`,
      '[secrets]',
      'env_vars = ["MY_TOKEN"]',
      '[safe]',
      'directories = []',
      '[ui]',
      'theme = "dark"',
      '',
    ].join('\n'),
  );
  return { sandbox, userFile, workspaceFile: path.join(sandbox.workspace, '.jp', 'config.toml') };
}

/** strace's command line: every process and thread, whole strings, the opens and the program starts. */
function traced(trace: string): string[] {
  return ['-f', '-s', '4096', '-e', 'trace=openat,execve', '-o', trace];
}

interface Opens {
  /** The pid strace started (the client). */
  client: number;
  /** The query servers' pids. */
  servers: number[];
  /** For each file asked about, the pids that opened it, once per open. */
  openers: Map<string, number[]>;
}

function opensIn(trace: string, files: string[]): Opens {
  const lines = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
  const pidOf = (line: string): number => Number(/^(\d+)/.exec(line)![1]);
  const openers = new Map(files.map((file) => [file, [] as number[]]));
  for (const line of lines) {
    // An open split by another process's line is whole in its first part ("<unfinished ...>").
    const opened = /openat\([^,]+, "([^"]+)"/.exec(line);
    if (opened && !line.includes('resumed>')) openers.get(opened[1]!)?.push(pidOf(line));
  }
  const servers = lines
    .filter((line) => line.includes('execve(') && line.includes('"__serve"') && line.includes('bin/node'))
    .map(pidOf);
  return { client: pidOf(lines[0]!), servers: [...new Set(servers)], openers };
}

function assertOpenedOnceByTheClient(opens: Opens, files: string[]): void {
  for (const file of files)
    assert.deepEqual(opens.openers.get(file), [opens.client], `${file}: opened once, by the client`);
}

/** Runs jp under strace, headless (pipes, no terminal); resolves with its exit code and output. */
async function runTraced(
  sandbox: Sandbox,
  trace: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; output: string }> {
  const child = spawn('/usr/bin/strace', [...traced(trace), process.execPath, jpBinary, ...args], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output };
}

describe('the config files are read once per process; the query server reads none', () => {
  it('jp query, headless: the user and workspace configs are opened once each, by the client', async () => {
    const { sandbox, userFile, workspaceFile } = configuredSandbox();
    const trace = path.join(sandbox.root, 'trace');
    const { code, output } = await runTraced(sandbox, trace, ['query', '--new', 'hello'], { MY_TOKEN: 'secret' });
    assert.equal(code, 0, output);
    assert.match(output, /Hello!/);
    const opens = opensIn(trace, [userFile, workspaceFile]);
    assert.equal(opens.servers.length, 1, 'a query server ran');
    assert.notEqual(opens.servers[0], opens.client);
    assertOpenedOnceByTheClient(opens, [userFile, workspaceFile]);
  });

  it('jp query --no-server: opened once each', async () => {
    const { sandbox, userFile, workspaceFile } = configuredSandbox();
    const trace = path.join(sandbox.root, 'trace');
    const { code, output } = await runTraced(sandbox, trace, ['query', '--no-server', '--new', 'hello']);
    assert.equal(code, 0, output);
    assert.match(output, /Hello!/);
    const opens = opensIn(trace, [userFile, workspaceFile]);
    assert.equal(opens.servers.length, 0);
    assertOpenedOnceByTheClient(opens, [userFile, workspaceFile]);
  });

  it('jp query at a terminal that answers the trust prompt: opened once each, by the client', async () => {
    const { sandbox, userFile, workspaceFile } = configuredSandbox();
    const trace = path.join(sandbox.root, 'trace');
    const screen = Screen.program(
      sandbox,
      '/usr/bin/strace',
      [...traced(trace), process.execPath, jpBinary, 'query', '--new', 'hello'],
      { cleanup },
    );
    await screen.waitFor(/Trust this config as it is now\?/);
    screen.press('y');
    assert.equal((await screen.exited).exitCode, 0, screen.text());
    assert.match(screen.text(), /Hello!/);
    const opens = opensIn(trace, [userFile, workspaceFile]);
    assert.equal(opens.servers.length, 1, 'a query server ran');
    assertOpenedOnceByTheClient(opens, [userFile, workspaceFile]);
  });
});
