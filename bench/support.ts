/**
 * What every benchmark section shares: timing a whole process, medians, the floors measured in the
 * same run, and the table of figures. A section is a file in bench/sections/ whose default export is
 * a `Section`; bench/run.ts registers it with one line.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Row {
  figure: string;
  value: string;
  /** What the figure is read against, measured in the same run ('' when there is none). */
  floor: string;
  goal: string;
}

export interface Bench {
  /** Runs per figure (JP_BENCH_RUNS, default 15); a section may use fewer for slow figures. */
  runs: number;
  report(row: Row): void;
  /** Median wall time of `node -e 0` in the bare environment, measured once per bench run. */
  nodeStart(): Promise<number>;
  /** Peak RSS in kilobytes of an idle `node`, measured once per bench run. */
  idleNodeKilobytes(): Promise<number>;
}

export type Section = (bench: Bench) => Promise<void>;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export const ms = (value: number): string => `${value.toFixed(0)} ms`;
export const megabytes = (kilobytes: number): string => `${(kilobytes / 1024).toFixed(1)} MB`;

/**
 * The environment of every floor: the same bare one jp runs in here (test/support/jp.ts). It matters:
 * a variable such as NODE_EXTRA_CA_CERTS (set on some machines) costs every node start-up 60-100 ms,
 * and a floor measured with it beside jp measured without it would flatter jp.
 */
export const floorEnvironment: NodeJS.ProcessEnv = { PATH: process.env.PATH, LANG: 'C.UTF-8' };

export interface TimedProcess {
  total: number;
  firstByte: number;
  stdout: string;
  code: number | null;
}

/** Wall time of a whole process, and of its first stdout byte. */
export function timeProcess(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<TimedProcess> {
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

export async function medianOf(count: number, measure: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let index = 0; index < count; index++) values.push(await measure());
  return median(values);
}

export function nodeStartOnce(): Promise<number> {
  return timeProcess(process.execPath, ['-e', '0'], { env: floorEnvironment }).then((result) => result.total);
}

/**
 * A figure and `node -e 0` measured in turn (A B A B ...), so that drift in the machine's speed weighs
 * on both alike: the medians of each and the median of the pairwise ratios.
 */
export async function pairedWithNodeStart(
  count: number,
  measure: () => Promise<number>,
): Promise<{ value: number; floor: number; ratio: number }> {
  const values: number[] = [];
  const floors: number[] = [];
  const ratios: number[] = [];
  for (let index = 0; index < count; index++) {
    const value = await measure();
    const floor = await nodeStartOnce();
    values.push(value);
    floors.push(floor);
    ratios.push(value / floor);
  }
  return { value: median(values), floor: median(floors), ratio: median(ratios) };
}

/** A process's peak resident set so far (VmHWM), in kilobytes; 0 once it is gone. */
export function peakKilobytes(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
