/**
 * The crash trial shared by the test suite (a reduced count) and `bench/crash.ts` (1,000 by hand):
 * a scripted multi-tool turn against a slowly streaming local provider is SIGKILLed at a random
 * instant; afterwards the conversation must open, `ls` must show a status that matches the log,
 * and `--continue` must complete the turn with every tool call answered exactly once and every
 * complete line written before the kill still in place.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { startFakeProvider, stepByToolResults, textStep, toolStep, type FakeProvider } from './fake-provider.ts';
import { collect, conversationIds, fakeModelArguments, readEvents, runJp, sleep, startJp, type Sandbox } from './jp.ts';

export type CrashMode = 'no-server' | 'server';

export async function startCrashProvider(): Promise<FakeProvider> {
  return startFakeProvider({
    wire: 'openai-chat',
    chunkDelayMs: 15,
    steps: stepByToolResults([
      toolStep(
        [
          { name: 'fs_read_file', arguments: { path: 'input.txt' } },
          { name: 'run_command', arguments: { command: 'echo ran >> ran.log; sleep 0.1' } },
          { name: 'fs_list_files', arguments: {} },
        ],
        'Starting the work. I will read the input, run a command and look around.\n\nHere we go.',
      ),
      toolStep(
        [
          {
            name: 'fs_create_file',
            arguments: { path: `notes-${Date.now()}-${Math.random().toString(36).slice(2)}.txt`, content: 'notes' },
          },
        ],
        'Now writing notes.\n\n',
      ),
      textStep(
        'All the work is finished. The input was read, the command ran, and the notes are written down for later.',
        { chunks: 12 },
      ),
    ]),
  });
}

export interface TrialOutcome {
  killedAfterMs: number;
  statusAfterKill: string;
  continued: boolean;
  problems: string[];
}

function completeLinesPrefix(content: string): string {
  const end = content.lastIndexOf('\n');
  return end === -1 ? '' : content.slice(0, end + 1);
}

function eventsText(sandbox: Sandbox, conversationId: string): string {
  const file = path.join(sandbox.workspace, '.jp', 'conversations', conversationId, 'events.ndjson');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

/** The pid of the server of a conversation not in `earlier` (this trial's), from the registry. */
function serverPid(sandbox: Sandbox, earlier: Set<string>): number | undefined {
  const base = path.join(sandbox.dataHome, 'jp', 'workspace');
  if (!existsSync(base)) return undefined;
  for (const workspace of readdirSync(base)) {
    const processes = path.join(base, workspace, 'processes');
    if (!existsSync(processes)) continue;
    for (const name of readdirSync(processes)) {
      if (!name.endsWith('.json') || earlier.has(name.slice(0, -'.json'.length))) continue;
      try {
        return (JSON.parse(readFileSync(path.join(processes, name), 'utf8')) as { pid: number }).pid;
      } catch {
        // being written
      }
    }
  }
  return undefined;
}

/** One trial in a fresh conversation of `sandbox`. */
export async function crashTrial(
  sandbox: Sandbox,
  provider: FakeProvider,
  mode: CrashMode,
  killAfterMs: number,
): Promise<TrialOutcome> {
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  const settings = [
    ...model.args,
    '-c',
    'conversation.tools.defaults.detached="auto"',
    '-c',
    'conversation.tools.fs_read_file.result="ask"',
  ];
  const before = new Set(conversationIds(sandbox));
  const args = ['query', '--new', ...(mode === 'no-server' ? ['--no-server'] : []), ...settings, 'do the work'];
  const started = Date.now();
  const child = startJp(sandbox, args, { env: model.env });
  const finished = collect(child, args, 120_000);
  if (mode === 'server') {
    // The instant is in the server's life: wait for it to register first.
    const deadline = Date.now() + 30_000;
    while (serverPid(sandbox, before) === undefined && Date.now() < deadline) await sleep(5);
  }
  await sleep(Math.max(0, killAfterMs - (Date.now() - started)));
  if (mode === 'no-server') {
    try {
      process.kill(child.pid!, 'SIGKILL');
    } catch {
      // already finished
    }
  } else {
    const pid = serverPid(sandbox, before);
    for (const target of [pid, child.pid].filter((value): value is number => value !== undefined)) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // already finished
      }
    }
  }
  await finished;
  const problems: string[] = [];
  const conversationId = conversationIds(sandbox).find((id) => !before.has(id));
  if (!conversationId)
    return { killedAfterMs: Date.now() - started, statusAfterKill: 'not created', continued: false, problems };
  const atKill = completeLinesPrefix(eventsText(sandbox, conversationId));

  const listed = await runJp(sandbox, ['conversation', 'ls', '--json']);
  if (listed.code !== 0) problems.push(`ls failed: ${listed.stderr}`);
  const entry = (JSON.parse(listed.stdout || '[]') as { id: string; status: string }[]).find(
    (item) => item.id === conversationId,
  );
  const status = entry?.status ?? 'missing';
  const events = readEvents(sandbox, conversationId);
  // Idle: no turn started yet, or the last turn has its final turn_end.
  const lastStart = events.map((event) => event.type).lastIndexOf('turn_start');
  const idle =
    lastStart === -1 ||
    events
      .slice(lastStart)
      .some((event) => event.type === 'turn_end' && (event.status === 'completed' || event.status === 'discarded'));
  if (status.startsWith('running')) problems.push(`ls says ${status} after the process was killed`);
  if (idle !== (status === 'idle'))
    problems.push(`ls says ${status}, but the log ${idle ? 'is complete' : 'has an incomplete turn'}`);

  let continued = false;
  if (!idle) {
    const resumed = await runJp(sandbox, ['query', '--continue', `--id=${conversationId}`, ...settings], {
      env: model.env,
      timeoutMs: 120_000,
    });
    continued = true;
    if (resumed.code !== 0) problems.push(`--continue exited ${resumed.code}: ${resumed.stderr.slice(-500)}`);
  }
  const finalText = eventsText(sandbox, conversationId);
  if (!finalText.startsWith(atKill)) problems.push('lines written before the kill are no longer a prefix of the log');
  const finalEvents = readEvents(sandbox, conversationId);
  if (finalEvents.some((event) => event.type === 'turn_start')) {
    const end = finalEvents[finalEvents.length - 1];
    if (end?.type !== 'turn_end' || end.status !== 'completed')
      problems.push(`the turn did not complete: last event ${JSON.stringify(end)}`);
  }
  const requested = finalEvents
    .filter((event) => event.type === 'tool_call_request')
    .map((event) => event.id as string);
  for (const id of requested) {
    const answers = finalEvents.filter((event) => event.type === 'tool_call_response' && event.id === id).length;
    if (answers !== 1) problems.push(`tool call ${id} answered ${answers} times`);
  }
  const inquiries = finalEvents.filter((event) => event.type === 'inquiry_request').map((event) => event.id as string);
  for (const id of inquiries) {
    const answers = finalEvents.filter((event) => event.type === 'inquiry_response' && event.id === id).length;
    if (answers !== 1) problems.push(`inquiry ${id} answered ${answers} times`);
  }
  return { killedAfterMs: killAfterMs, statusAfterKill: status, continued, problems };
}

/** Measures how long one uninterrupted run of the scripted turn takes. */
export async function measureTurn(sandbox: Sandbox, provider: FakeProvider, mode: CrashMode): Promise<number> {
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  const started = Date.now();
  const result = await runJp(
    sandbox,
    [
      'query',
      '--new',
      ...(mode === 'no-server' ? ['--no-server'] : []),
      ...model.args,
      '-c',
      'conversation.tools.defaults.detached="auto"',
      '-c',
      'conversation.tools.fs_read_file.result="ask"',
      'do the work',
    ],
    { env: model.env },
  );
  if (result.code !== 0) throw new Error(`the uninterrupted turn failed (${result.code}): ${result.stderr}`);
  return Date.now() - started;
}
