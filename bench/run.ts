/**
 * `npm run bench`: jp's figures, each beside its floor measured in the same run on this machine.
 * Medians over several runs; nothing here is a pass/fail test.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startFakeProvider, textStep, type FakeProvider, type ScriptedPart } from '../test/support/fake-provider.ts';
import { fuzzServer, openFileDescriptors, residentMemoryKilobytes } from '../test/support/fuzz.ts';
import { createSandbox, eventually, fakeModelArguments, jpBinary, processesMatching, runJp, sleep, type Sandbox } from '../test/support/jp.ts';

const runs = Number(process.env.JP_BENCH_RUNS ?? 15);

interface Row {
  figure: string;
  value: string;
  floor: string;
  goal: string;
}
const rows: Row[] = [];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const ms = (value: number): string => `${value.toFixed(0)} ms`;

/** Wall time of a whole process, and of its first stdout byte. */
function timeProcess(file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ total: number; firstByte: number; stdout: string; code: number | null }> {
  return new Promise((resolve) => {
    const started = performance.now();
    let firstByte = Number.NaN;
    let stdout = '';
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (chunk: Buffer) => {
      if (Number.isNaN(firstByte)) firstByte = performance.now() - started;
      stdout += chunk.toString();
    });
    child.on('close', (code) => resolve({ total: performance.now() - started, firstByte, stdout, code }));
  });
}

async function medianOf(count: number, measure: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let index = 0; index < count; index++) values.push(await measure());
  return median(values);
}

/**
 * The environment of every floor: the same bare one jp runs in here (test/support/jp.ts). It matters:
 * a variable such as NODE_EXTRA_CA_CERTS (set on some machines) costs every node start-up 60-100 ms,
 * and a floor measured with it beside jp measured without it would flatter jp.
 */
const floorEnvironment: NodeJS.ProcessEnv = { PATH: process.env.PATH, LANG: 'C.UTF-8' };

async function nodeFloor(): Promise<number> {
  return medianOf(runs, async () => (await timeProcess(process.execPath, ['-e', '0'], { env: floorEnvironment })).total);
}

function jpEnvironment(sandbox: Sandbox, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...sandbox.env, ...extra };
}

async function startup(floor: number): Promise<void> {
  const sandbox = createSandbox();
  const version = await medianOf(runs, async () => (await timeProcess(process.execPath, [jpBinary, '--version'], { env: jpEnvironment(sandbox) })).total);
  rows.push({ figure: 'jp --version', value: `${ms(version)} (${(version / floor).toFixed(2)}×)`, floor: `node -e 0: ${ms(floor)}`, goal: '≤ 1.6× node -e 0' });

  // 1,000 conversations, a realistic mix: mostly idle, a few incomplete.
  const conversations = path.join(sandbox.workspace, '.jp', 'conversations');
  const timestamp = new Date().toISOString();
  for (let index = 0; index < 1000; index++) {
    const id = `jp-c${(1_700_000_000_000 + index).toString()}${String(index % 1000).padStart(3, '0')}`;
    mkdirSync(path.join(conversations, id), { recursive: true });
    writeFileSync(path.join(conversations, id, 'metadata.json'), JSON.stringify({ id, title: `conversation ${index}`, created_at: timestamp, updated_at: timestamp }));
    const events = [
      { type: 'turn_start', timestamp },
      { type: 'chat_request', timestamp, content: `question ${index}` },
      { type: 'chat_response', timestamp, message: 'an answer '.repeat(50) },
      ...(index % 50 === 0 ? [] : [{ type: 'turn_end', timestamp, status: 'completed' }]),
    ];
    writeFileSync(path.join(conversations, id, 'events.ndjson'), events.map((event) => JSON.stringify(event) + '\n').join(''));
  }
  const list = await medianOf(runs, async () => {
    const result = await timeProcess(process.execPath, [jpBinary, 'conversation', 'ls'], { cwd: sandbox.workspace, env: jpEnvironment(sandbox) });
    if (result.code !== 0 || result.stdout.split('\n').length < 1000) throw new Error('ls failed');
    return result.total;
  });
  rows.push({ figure: 'jp conversation ls (1,000 conversations)', value: `${ms(list)} (${(list / floor).toFixed(2)}×)`, floor: `node -e 0: ${ms(floor)}`, goal: 'close to node start-up' });
  sandbox.cleanup();
}

/** A bare HTTP client draining a streamed response: the floor for a query and for throughput. */
async function drainWithFetch(provider: FakeProvider): Promise<{ firstByte: number; total: number }> {
  const started = performance.now();
  const response = await fetch(`${provider.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const reader = response.body!.getReader();
  let firstByte = Number.NaN;
  for (;;) {
    const { done } = await reader.read();
    if (Number.isNaN(firstByte)) firstByte = performance.now() - started;
    if (done) break;
  }
  return { firstByte, total: performance.now() - started };
}

async function query(floor: number): Promise<{ inProcess: number; viaServer: number }> {
  const provider = await startFakeProvider({ wire: 'openai-chat', steps: [textStep('An instant answer from a local provider, in a few chunks.', { chunks: 8 })] });
  const sandbox = createSandbox();
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  const environment = jpEnvironment(sandbox, model.env);
  // The two ways are measured in alternation, so that drift in the machine's speed during the run
  // weighs on both alike and their difference (the server's overhead) stays meaningful.
  const samples = { inProcess: { firstByte: [] as number[], total: [] as number[] }, viaServer: { firstByte: [] as number[], total: [] as number[] } };
  for (let index = 0; index < runs; index++) {
    for (const [way, extra] of [['inProcess', ['--no-server']], ['viaServer', []]] as const) {
      const result = await timeProcess(process.execPath, [jpBinary, 'query', '--new', ...extra, ...model.args, 'hello'], { cwd: sandbox.workspace, env: environment });
      if (result.code !== 0) throw new Error(`query failed with ${result.code}`);
      samples[way].firstByte.push(result.firstByte);
      samples[way].total.push(result.total);
    }
  }
  const inProcess = { firstByte: median(samples.inProcess.firstByte), total: median(samples.inProcess.total) };
  const viaServer = { firstByte: median(samples.viaServer.firstByte), total: median(samples.viaServer.total) };
  const bare = { firstByte: [] as number[], total: [] as number[] };
  for (let index = 0; index < runs; index++) {
    const drained = await drainWithFetch(provider);
    bare.firstByte.push(drained.firstByte);
    bare.total.push(drained.total);
  }
  const floorText = `node -e 0 ${ms(floor)} + bare HTTP drain ${ms(median(bare.total))}`;
  rows.push({ figure: 'query, instant local provider: first stdout byte (server)', value: ms(viaServer.firstByte), floor: floorText, goal: '' });
  rows.push({ figure: 'query, instant local provider: total (server)', value: ms(viaServer.total), floor: floorText, goal: '≤ 300 ms median' });
  rows.push({ figure: 'query, instant local provider: first stdout byte (--no-server)', value: ms(inProcess.firstByte), floor: floorText, goal: '' });
  rows.push({ figure: 'query, instant local provider: total (--no-server)', value: ms(inProcess.total), floor: floorText, goal: '≤ 300 ms median' });
  rows.push({ figure: 'foreground overhead of the server over --no-server', value: ms(viaServer.total - inProcess.total), floor: `node -e 0: ${ms(floor)}`, goal: '≤ 60 ms' });
  await provider.close();
  sandbox.cleanup();
  return { inProcess: inProcess.total, viaServer: viaServer.total };
}

async function throughput(): Promise<void> {
  const tokens = 20_000;
  const parts: ScriptedPart[] = Array.from({ length: tokens }, (_, index) => ({ text: `t${index % 10} ` }));
  const provider = await startFakeProvider({ wire: 'openai-chat', steps: [{ parts }] });
  const sandbox = createSandbox();
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  const environment = jpEnvironment(sandbox, model.env);
  const jpRates: number[] = [];
  const bareRates: number[] = [];
  for (let index = 0; index < 3; index++) {
    const result = await timeProcess(process.execPath, [jpBinary, 'query', '--new', ...model.args, 'stream'], { cwd: sandbox.workspace, env: environment });
    if (result.code !== 0 || result.stdout.length < tokens * 3) throw new Error('throughput query failed');
    jpRates.push(tokens / ((result.total - result.firstByte) / 1000));
    const drained = await drainWithFetch(provider);
    bareRates.push(tokens / ((drained.total - drained.firstByte) / 1000));
  }
  rows.push({ figure: 'streaming throughput to stdout (tokens/s)', value: median(jpRates).toFixed(0), floor: `bare HTTP drain: ${median(bareRates).toFixed(0)} tokens/s`, goal: '' });
  await provider.close();
  sandbox.cleanup();
}

async function detachAndAttach(floor: number): Promise<void> {
  const sandbox = createSandbox();
  const slowScript = path.join(sandbox.workspace, 'slow.json');
  const parts = [{ text: 'start ' }, ...Array.from({ length: 400 }, (_, index) => [{ text: `w${index} ` }, { delay_ms: 10 }]).flat()];
  writeFileSync(slowScript, JSON.stringify({ steps: [{ parts }] }));
  const settings = ['-m', 'test', '-c', 'providers.test.script=slow.json'];
  const environment = jpEnvironment(sandbox);
  const detachTimes: number[] = [];
  const attachTimes: number[] = [];
  const protocolTimes: number[] = [];
  for (let index = 0; index < Math.min(runs, 10); index++) {
    const detached = await timeProcess(process.execPath, [jpBinary, 'query', '--new', '--detach', ...settings, 'go'], { cwd: sandbox.workspace, env: environment });
    detachTimes.push(detached.total);
    const conversationId = detached.stdout.trim();
    const socketPath = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.sock`);
    // Protocol level: connect, hello, first live message after the server's hello.
    protocolTimes.push(await firstLiveEvent(socketPath));
    // Whole command: `jp conversation attach --tail=0` until its first stdout byte.
    const attach = await new Promise<number>((resolve) => {
      const started = performance.now();
      const child = spawn(process.execPath, [jpBinary, 'conversation', 'attach', '--tail=0', '--read-only', conversationId], { cwd: sandbox.workspace, env: environment, stdio: ['ignore', 'pipe', 'ignore'] });
      child.stdout.once('data', () => {
        resolve(performance.now() - started);
        child.kill();
      });
    });
    attachTimes.push(attach);
    spawnSync(process.execPath, [jpBinary, 'conversation', 'kill', '--force', conversationId], { cwd: sandbox.workspace, env: environment });
  }
  // The floor of any design where a Node client returns only once a Node server is ready
  // (DESIGN §8): a bare node process that spawns a detached node child and exits on its first byte.
  const handOffScript = path.join(sandbox.workspace, 'hand-off-floor.mjs');
  writeFileSync(handOffScript, [
    "import { spawn } from 'node:child_process';",
    "const child = spawn(process.execPath, ['-e', 'process.stdout.write(\"ready\")'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });",
    "child.stdout.once('data', () => { child.unref(); process.exit(0); });",
  ].join('\n'));
  const handOffFloor = await medianOf(Math.min(runs, 10), async () => (await timeProcess(process.execPath, [handOffScript], { env: floorEnvironment })).total);
  rows.push({ figure: 'jp query --detach: return time', value: ms(median(detachTimes)), floor: `node -e 0: ${ms(floor)}; node spawning node until ready: ${ms(handOffFloor)}`, goal: '≤ 150 ms' });
  rows.push({ figure: 'attach: connect → first live event (protocol)', value: `${median(protocolTimes).toFixed(1)} ms`, floor: '', goal: '≤ 100 ms' });
  rows.push({ figure: 'jp conversation attach: start → first live byte', value: ms(median(attachTimes)), floor: `node -e 0: ${ms(floor)}`, goal: '' });
  sandbox.cleanup();
}

function firstLiveEvent(socketPath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.createConnection(socketPath);
    let buffered = '';
    let greeted = false;
    socket.on('error', reject);
    socket.on('connect', () => socket.write(JSON.stringify({ type: 'hello', version: 1, can_prompt: false, read_only: true }) + '\n'));
    socket.on('data', (chunk) => {
      buffered += chunk.toString();
      for (;;) {
        const newline = buffered.indexOf('\n');
        if (newline === -1) return;
        const message = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        if (message.type === 'hello') greeted = true;
        else if (greeted && (message.type === 'delta' || message.type === 'event')) {
          resolve(performance.now() - started);
          socket.destroy();
          return;
        }
      }
    });
  });
}

async function memory(): Promise<void> {
  const sandbox = createSandbox();
  writeFileSync(path.join(sandbox.workspace, 'mem.json'), JSON.stringify({ steps: [{ parts: [{ text: 'thinking ' }, { delay_ms: 1500 }, { text: 'done' }] }] }));
  const environment = jpEnvironment(sandbox);
  const client = spawn(process.execPath, [jpBinary, 'query', '-m', 'test', '-c', 'providers.test.script=mem.json', 'hi'], { cwd: sandbox.workspace, env: environment, stdio: ['ignore', 'pipe', 'ignore'] });
  let clientPeak = 0;
  let serverPeak = 0;
  const peak = (pid: number): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  const done = new Promise((resolve) => client.on('close', resolve));
  const sampler = setInterval(() => {
    try {
      clientPeak = Math.max(clientPeak, peak(client.pid!));
      for (const pid of processesMatching(jpBinary, '__serve')) serverPeak = Math.max(serverPeak, peak(pid));
    } catch {
      // a process ended between the listing and the read
    }
  }, 50);
  await done;
  clearInterval(sampler);
  const floorPeak = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(()=>{},300)'], { stdio: 'ignore', env: floorEnvironment });
    setTimeout(() => resolve(peak(child.pid!)), 200);
  });
  rows.push({ figure: 'peak RSS, client (foreground query)', value: `${(clientPeak / 1024).toFixed(1)} MB`, floor: `idle node: ${(floorPeak / 1024).toFixed(1)} MB`, goal: '' });
  rows.push({ figure: 'peak RSS, server', value: `${(serverPeak / 1024).toFixed(1)} MB`, floor: `idle node: ${(floorPeak / 1024).toFixed(1)} MB`, goal: '' });
  sandbox.cleanup();
}

async function locks(floor: number): Promise<void> {
  const sandbox = createSandbox();
  writeFileSync(path.join(sandbox.workspace, 'hold.json'), JSON.stringify({ steps: [{ parts: [{ text: 'x' }, { delay_ms: 60_000 }] }] }));
  const settings = ['-m', 'test', '-c', 'providers.test.script=hold.json'];
  const conversationId = (await runJp(sandbox, ['query', '--detach', ...settings, 'hold'])).stdout.trim();
  const environment = jpEnvironment(sandbox);
  const alone = await medianOf(runs, async () => {
    const result = await timeProcess(process.execPath, [jpBinary, 'query', `--id=${conversationId}`, ...settings, 'again'], { cwd: sandbox.workspace, env: environment });
    if (result.code !== 5) throw new Error(`expected exit 5, got ${result.code}`);
    return result.total;
  });
  const started = performance.now();
  const contended = await Promise.all(
    Array.from({ length: 50 }, () => timeProcess(process.execPath, [jpBinary, 'query', `--id=${conversationId}`, ...settings, 'again'], { cwd: sandbox.workspace, env: environment }).then((result) => {
      if (result.code !== 5) throw new Error(`expected exit 5 under contention, got ${result.code}`);
      return performance.now() - started;
    })),
  );
  // The floor of 50 refusals at once: 50 bare node processes started together on this machine's cores.
  const floorStarted = performance.now();
  const bare = await Promise.all(Array.from({ length: 50 }, () => timeProcess(process.execPath, ['-e', '0'], { env: floorEnvironment }).then(() => performance.now() - floorStarted)));
  rows.push({ figure: 'lock refusal (exit 5), one process', value: ms(alone), floor: `node -e 0: ${ms(floor)}`, goal: '≤ 1 s' });
  rows.push({
    figure: 'lock refusal, 50 at once: slowest / median',
    value: `${ms(Math.max(...contended))} / ${ms(median(contended))}`,
    floor: `50 × node -e 0 at once: ${ms(Math.max(...bare))} / ${ms(median(bare))}`,
    goal: '≤ 1 s each',
  });
  const killStarted = performance.now();
  await runJp(sandbox, ['conversation', 'kill', conversationId]);
  rows.push({ figure: 'jp conversation kill (graceful): until the run has stopped', value: ms(performance.now() - killStarted), floor: `node -e 0: ${ms(floor)}`, goal: '≤ 2 s' });
  sandbox.cleanup();
}

async function fuzz(): Promise<void> {
  const sandbox = createSandbox();
  writeFileSync(
    path.join(sandbox.workspace, 'wait.json'),
    JSON.stringify({ steps: [{ parts: [{ tool_call: { name: 'run_command', arguments: { command: 'while [ ! -f release ]; do sleep 0.05; done' } } }] }, { parts: [{ text: 'ok' }] }] }),
  );
  const conversationId = (
    await runJp(sandbox, ['query', '--detach', '-m', 'test', '-c', 'providers.test.script=wait.json', '-c', 'conversation.tools.run_command.run="unattended"', 'x'])
  ).stdout.trim();
  const entryFile = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.json`);
  const entry = await eventually('the tool is running', () => {
    try {
      const current = JSON.parse(readFileSync(entryFile, 'utf8')) as { pid: number; socket_path: string; tool_process_groups: unknown[] };
      return current.tool_process_groups.length === 1 ? current : undefined;
    } catch {
      return undefined;
    }
  });
  await sleep(300);
  const baseline = residentMemoryKilobytes(entry.pid);
  const descriptors = openFileDescriptors(entry.pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, residentMemoryKilobytes(entry.pid))), 25);
  const started = performance.now();
  const report = await fuzzServer(entry.socket_path, { frames: 10_000, concurrency: 20 });
  const elapsed = performance.now() - started;
  clearInterval(sampler);
  await eventually('fds back to baseline', () => openFileDescriptors(entry.pid) === descriptors);
  rows.push({
    figure: 'fuzz: 10,000 malformed frames / 20 connections',
    value: `${(elapsed / 1000).toFixed(1)} s, RSS +${((peak - baseline) / 1024).toFixed(1)} MB, fds back to ${descriptors}`,
    floor: `baseline RSS ${(baseline / 1024).toFixed(1)} MB`,
    goal: 'RSS +< 20 MB, fds back to baseline',
  });
  void report;
  writeFileSync(path.join(sandbox.workspace, 'release'), '');
  await runJp(sandbox, ['conversation', 'wait', conversationId]);
  sandbox.cleanup();
}

// `npm run bench -- query detach` runs only the named sections; no names: all of them.
const sections: Record<string, (floor: number) => Promise<unknown>> = { startup, query, throughput, detach: detachAndAttach, memory, locks, fuzz };
const chosen = process.argv.slice(2);
for (const name of chosen) {
  if (!(name in sections)) {
    console.error(`unknown benchmark section "${name}"; choose from: ${Object.keys(sections).join(', ')}`);
    process.exit(2);
  }
}
const floor = await nodeFloor();
for (const [name, run] of Object.entries(sections)) if (chosen.length === 0 || chosen.includes(name)) await run(floor);

const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => Object.values(row)[column]!.length), ['figure', 'value', 'floor', 'goal'][column]!.length));
const line = (cells: string[]): string => cells.map((cell, index) => cell.padEnd(widths[index]!)).join(' | ');
console.log(`jp benchmarks (median of ${runs} runs unless noted), node ${process.version}, ${new Date().toISOString()}`);
console.log(line(['figure', 'value', 'floor (same run)', 'goal']));
console.log(widths.map((width) => '-'.repeat(width)).join('-|-'));
for (const row of rows) console.log(line([row.figure, row.value, row.floor, row.goal]));
