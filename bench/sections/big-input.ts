/**
 * 20 MB of piped input (`cat big | jp query "summarise"`) through the query server and with
 * --no-server: wall time and the peak resident set of each process, beside a bare `node` that
 * reads the same input from the same kind of pipe.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createSandbox, jpBinary, processesMatching, type Sandbox } from '../../test/support/jp.ts';
import { floorEnvironment, median, megabytes, ms, peakKilobytes, type Section } from '../support.ts';

interface Measured {
  milliseconds: number;
  /** Peak RSS of the process the command started, in kilobytes. */
  client: number;
  /** Peak RSS of its query server (0 with --no-server). */
  server: number;
}

function serversOf(sandbox: Sandbox): number[] {
  return processesMatching(jpBinary, '__serve').filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`XDG_DATA_HOME=${sandbox.dataHome}`);
    } catch {
      return false;
    }
  });
}

/** Runs `file args` with `input` on a pipe; samples the peak RSS of it and of its server until both are gone. */
async function measure(
  file: string,
  args: string[],
  input: Buffer,
  options: { cwd: string; env: NodeJS.ProcessEnv; sandbox?: Sandbox },
): Promise<Measured> {
  const started = performance.now();
  const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'ignore', 'ignore'] });
  child.stdin.on('error', () => {});
  child.stdin.end(input);
  const peaks = { client: 0, server: new Map<number, number>() };
  const sample = (): void => {
    peaks.client = Math.max(peaks.client, peakKilobytes(child.pid!));
    for (const pid of options.sandbox ? serversOf(options.sandbox) : [])
      peaks.server.set(pid, Math.max(peaks.server.get(pid) ?? 0, peakKilobytes(pid)));
  };
  const sampler = setInterval(sample, 5);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const milliseconds = performance.now() - started;
  clearInterval(sampler);
  while (options.sandbox && serversOf(options.sandbox).length > 0) {
    sample();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}`);
  return { milliseconds, client: peaks.client, server: Math.max(0, ...peaks.server.values()) };
}

const bigInput: Section = async (bench) => {
  const sandbox = createSandbox();
  const script = path.join(sandbox.workspace, 'summary.json');
  sandbox.write('summary.json', JSON.stringify({ steps: [{ parts: [{ text: 'A summary.' }] }] }));
  const line = 'diff --git a/src/parser.ts b/src/parser.ts: one line of a large diff, ✓ naïve\n';
  const input = Buffer.from(line.repeat(Math.ceil((20 * 1024 * 1024) / Buffer.byteLength(line))));
  const count = Math.min(bench.runs, 5);
  const runs = { server: [] as Measured[], inProcess: [] as Measured[], floor: [] as Measured[] };
  // Interleaved, so that drift in the machine's speed weighs on each alike.
  for (let index = 0; index < count; index++) {
    runs.server.push(
      await measure(
        process.execPath,
        [jpBinary, 'query', '--new', '-m', 'test', '-c', `providers.test.script=${script}`, 'summarise'],
        input,
        { cwd: sandbox.workspace, env: sandbox.env, sandbox },
      ),
    );
    runs.inProcess.push(
      await measure(
        process.execPath,
        [jpBinary, 'query', '--new', '--no-server', '-m', 'test', '-c', `providers.test.script=${script}`, 'summarise'],
        input,
        { cwd: sandbox.workspace, env: sandbox.env },
      ),
    );
    runs.floor.push(
      await measure(
        process.execPath,
        ['-e', 'const c=[];process.stdin.on("data",(d)=>c.push(d)).on("end",()=>Buffer.concat(c).toString())'],
        input,
        { cwd: sandbox.workspace, env: floorEnvironment },
      ),
    );
  }
  const mid = (values: Measured[], key: keyof Measured): number => median(values.map((value) => value[key]));
  const floorTime = `node reading the 20 MB from a pipe: ${ms(mid(runs.floor, 'milliseconds'))}`;
  const floorMemory = `node holding the 20 MB read from a pipe: ${megabytes(mid(runs.floor, 'client'))}`;
  bench.report({
    figure: `20 MB piped input: total (server) (median of ${count})`,
    value: ms(mid(runs.server, 'milliseconds')),
    floor: floorTime,
    goal: '',
  });
  bench.report({
    figure: `20 MB piped input: total (--no-server) (median of ${count})`,
    value: ms(mid(runs.inProcess, 'milliseconds')),
    floor: floorTime,
    goal: '',
  });
  bench.report({
    figure: '20 MB piped input: peak RSS (server)',
    value: `client ${megabytes(mid(runs.server, 'client'))}, server ${megabytes(mid(runs.server, 'server'))}`,
    floor: floorMemory,
    goal: '',
  });
  bench.report({
    figure: '20 MB piped input: peak RSS (--no-server)',
    value: megabytes(mid(runs.inProcess, 'client')),
    floor: floorMemory,
    goal: '',
  });
  sandbox.cleanup();
};
export default bigInput;
