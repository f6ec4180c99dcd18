/**
 * `npm run bench`: jp's figures, each beside its floor measured in the same run on this machine.
 * `npm run bench -- startup detach` runs only the named sections. Nothing here is a pass/fail test.
 *
 * A section is one file in bench/sections/ (default export: a `Section`, see support.ts), registered
 * below with one line.
 */
import { spawn } from 'node:child_process';
import { floorEnvironment, median, medianOf, nodeStartOnce, peakKilobytes, type Row, type Section } from './support.ts';

const sections: Record<string, () => Promise<{ default: Section }>> = {
  startup: () => import('./sections/startup.ts'),
  query: () => import('./sections/query.ts'),
  throughput: () => import('./sections/throughput.ts'),
  stream: () => import('./sections/stream.ts'),
  detach: () => import('./sections/detach.ts'),
  memory: () => import('./sections/memory.ts'),
  locks: () => import('./sections/locks.ts'),
  fuzz: () => import('./sections/fuzz.ts'),
  'big-input': () => import('./sections/big-input.ts'),
  mcp: () => import('./sections/mcp.ts'),
  terminal: () => import('./sections/terminal.ts'),
  sandbox: () => import('./sections/sandbox.ts'),
  cache: () => import('./sections/cache.ts'),
  'first-token': () => import('./sections/first-token.ts'),
  checkpoints: () => import('./sections/checkpoints.ts'),
  web: () => import('./sections/web.ts'),
};

const chosen = process.argv.slice(2);
for (const name of chosen) {
  if (!(name in sections)) {
    console.error(`unknown benchmark section "${name}"; choose from: ${Object.keys(sections).join(', ')}`);
    process.exit(2);
  }
}

const runs = Number(process.env.JP_BENCH_RUNS ?? 15);
const rows: Row[] = [];

function once<T>(measure: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= measure());
}

const bench = {
  runs,
  report: (row: Row) => rows.push(row),
  nodeStart: once(() => medianOf(runs, nodeStartOnce)),
  idleNodeKilobytes: once(async () => {
    const samples: number[] = [];
    for (let index = 0; index < 3; index++) {
      samples.push(
        await new Promise<number>((resolve) => {
          const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 400)'], {
            stdio: 'ignore',
            env: floorEnvironment,
          });
          setTimeout(() => resolve(peakKilobytes(child.pid!)), 300);
        }),
      );
    }
    return median(samples);
  }),
};

for (const [name, load] of Object.entries(sections)) {
  if (chosen.length > 0 && !chosen.includes(name)) continue;
  await (await load()).default(bench);
}

const headers = ['figure', 'value', 'floor (same run)', 'goal'];
const cellsOf = (row: Row): string[] => [row.figure, row.value, row.floor, row.goal];
const widths = headers.map((header, column) =>
  Math.max(header.length, ...rows.map((row) => cellsOf(row)[column]!.length)),
);
const line = (cells: string[]): string => cells.map((cell, index) => cell.padEnd(widths[index]!)).join(' | ');
console.log(
  `jp benchmarks (median of ${runs} runs unless noted), node ${process.version}, ${new Date().toISOString()}`,
);
// The goals are set on Node 24, the active LTS (what users run); other versions are for comparison.
if (!process.version.startsWith('v24.'))
  console.log(`note: the goals are measured on Node 24; this run is on ${process.version}`);
console.log(line(headers));
console.log(widths.map((width) => '-'.repeat(width)).join('-|-'));
for (const row of rows) console.log(line(cellsOf(row)));
