/**
 * A query SIGKILLed in its first moments, shared by the test suite (a reduced count) and
 * `bench/crash.ts --early` (1,000 by hand): the client and its query server are each killed at a
 * random instant of the query's first 300 ms, and afterwards no conversation of the workspace may be
 * without its log and metadata (a conversation appears complete or not at all), and `ls` lists
 * none as damaged.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { collect, conversationIds, eventually, runJp, sleep, startJp, testProvider, type Sandbox } from './jp.ts';

/**
 * Pids of the processes whose working directory is `directory` or below it: a trial's jp client and
 * tools (in the workspace) and its query server (in jp's private directories of the sandbox).
 */
function processesIn(directory: string): { pid: number; serve: boolean }[] {
  const found: { pid: number; serve: boolean }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd !== directory && !cwd.startsWith(`${directory}/`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3))) continue;
      found.push({ pid: Number(entry), serve: readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('__serve') });
    } catch {
      // gone while we looked
    }
  }
  return found;
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Problems with the conversations on disk: each must have a regular log and its metadata. */
export function incompleteConversations(sandbox: Sandbox, ignore: ReadonlySet<string> = new Set()): string[] {
  const directory = path.join(sandbox.workspace, '.jp', 'conversations');
  const problems: string[] = [];
  for (const name of existsSync(directory) ? readdirSync(directory) : []) {
    if (!name.startsWith('jp-c') || ignore.has(name)) continue;
    const log = path.join(directory, name, 'events.ndjson');
    const metadata = path.join(directory, name, 'metadata.json');
    if (!existsSync(log) || !lstatSync(log).isFile()) problems.push(`${name} has no log`);
    try {
      if (JSON.parse(readFileSync(metadata, 'utf8')).id !== name)
        problems.push(`${name}: metadata.json names another conversation`);
    } catch {
      problems.push(`${name} has no readable metadata.json`);
    }
  }
  return problems;
}

/**
 * One trial: a new query whose client is SIGKILLed `clientAfterMs` after it started and whose query
 * server `serverAfterMs` after (either first); returns what is wrong with the conversations after.
 */
export async function earlyKillTrial(
  sandbox: Sandbox,
  clientAfterMs: number,
  serverAfterMs: number,
): Promise<string[]> {
  const args = [
    'query',
    '--new',
    ...testProvider(sandbox, { steps: [{ parts: [{ text: 'Done.' }] }] }),
    'a question killed early',
  ];
  const earlier = new Set(conversationIds(sandbox));
  const started = Date.now();
  const child = startJp(sandbox, args);
  const finished = collect(child, args, 60_000);
  const kills = [
    { at: clientAfterMs, run: () => kill(child.pid!) },
    {
      at: serverAfterMs,
      run: () => {
        for (const found of processesIn(sandbox.root)) if (found.serve) kill(found.pid);
      },
    },
  ].sort((a, b) => a.at - b.at);
  for (const next of kills) {
    await sleep(Math.max(0, next.at - (Date.now() - started)));
    next.run();
  }
  await finished;
  await eventually('every process of the trial to end', () => processesIn(sandbox.root).length === 0, 60_000);
  return incompleteConversations(sandbox, earlier);
}

/** `ls` after trials: it must succeed and list no conversation as damaged. */
export async function listingProblems(sandbox: Sandbox): Promise<string[]> {
  const listed = await runJp(sandbox, ['conversation', 'ls', '--json'], { timeoutMs: 60_000 });
  if (listed.code !== 0) return [`ls exited ${listed.code}: ${listed.stderr}`];
  return (JSON.parse(listed.stdout) as { id: string; state: string; status: string }[])
    .filter((entry) => entry.state === 'damaged')
    .map((entry) => `ls: ${entry.id} ${entry.status}`);
}
