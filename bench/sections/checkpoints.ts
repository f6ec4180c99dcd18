/**
 * The cost of checkpoints (DESIGN §10) in a workspace of 10,000 files (100 directories of 100
 * small files). Two figures: a checkpoint of it (src/checkpoint/store.ts), the first one (an empty
 * store) and one with nothing changed since the last; and a whole turn that writes one file, with
 * checkpoints and with `checkpoints.enabled=false`, measured in alternation. Floors: plain git
 * doing the same work on its own repository (`git add -A && git write-tree`, from an empty index
 * and again with nothing changed), and the turn without checkpoints.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CheckpointStore } from '../../src/checkpoint/store.ts';
import { defaultCheckpointSettings } from '../../src/checkpoint/recorder.ts';
import { findGit } from '../../src/checkpoint/git.ts';
import { createSandbox, jpBinary, testProvider } from '../../test/support/jp.ts';
import { median, ms, timeProcess, type Section } from '../support.ts';

const directories = 100;
const filesPerDirectory = 100;

function fill(root: string): void {
  for (let directory = 0; directory < directories; directory++) {
    const folder = path.join(root, `d${directory}`);
    mkdirSync(folder, { recursive: true });
    for (let file = 0; file < filesPerDirectory; file++)
      writeFileSync(path.join(folder, `f${file}.txt`), `file ${directory}/${file}\n`.repeat(4));
  }
}

async function timed(work: () => unknown): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const checkpointsSection: Section = async (bench) => {
  const sandbox = createSandbox();
  fill(sandbox.workspace);
  const program = findGit(process.env.PATH, sandbox.workspace);
  if (!program) throw new Error('git is not on PATH');
  const coldRuns = Math.max(3, Math.round(bench.runs / 5));
  const samples = { cold: [] as number[], warm: [] as number[], gitCold: [] as number[], gitWarm: [] as number[] };
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'jp-bench-checkpoints-'));
  for (let run = 0; run < coldRuns; run++) {
    const userDirectory = path.join(scratch, `user-${run}`);
    const store = new CheckpointStore({
      userDirectory,
      root: sandbox.workspace,
      program,
      environment: process.env,
      conversationId: 'bench',
    });
    samples.cold.push(await timed(() => store.snapshot(defaultCheckpointSettings)));
    for (let warm = 0; warm < Math.ceil(bench.runs / coldRuns); warm++)
      samples.warm.push(await timed(() => store.snapshot(defaultCheckpointSettings)));
    const gitDirectory = path.join(scratch, `plain-${run}.git`);
    const plain = (): void => {
      for (const args of [['add', '-A'], ['write-tree']])
        execFileSync(program, args, {
          cwd: sandbox.workspace,
          stdio: 'ignore',
          env: { PATH: process.env.PATH, GIT_DIR: gitDirectory, GIT_WORK_TREE: sandbox.workspace },
        });
    };
    execFileSync(program, ['init', '-q', '--bare', gitDirectory]);
    samples.gitCold.push(await timed(plain));
    for (let warm = 0; warm < Math.ceil(bench.runs / coldRuns); warm++) samples.gitWarm.push(await timed(plain));
  }
  rmSync(scratch, { recursive: true, force: true });
  bench.report({
    figure: 'checkpoint of 10,000 files: first / nothing changed',
    value: `${ms(median(samples.cold))} / ${ms(median(samples.warm))}`,
    floor: `git add -A && git write-tree: ${ms(median(samples.gitCold))} / ${ms(median(samples.gitWarm))}`,
    goal: '≤ 2× the floor',
  });

  const write = (index: number): string[] =>
    testProvider(
      sandbox,
      {
        steps: [
          {
            parts: [{ tool_call: { name: 'fs_create_file', arguments: { path: `out/n${index}.txt`, content: 'x' } } }],
          },
          { parts: [{ text: 'ok' }] },
        ],
      },
      `write-${index}.json`,
    );
  const approve = ['-c', 'conversation.tools.fs_create_file.run="unattended"'];
  const turns = { on: [] as number[], off: [] as number[] };
  let file = 0;
  for (let run = 0; run < bench.runs; run++) {
    for (const [mode, extra] of [
      ['on', []],
      ['off', ['-c', 'checkpoints.enabled=false']],
    ] as const) {
      const turn = await timeProcess(
        process.execPath,
        [jpBinary, 'query', '--new', '--json', ...write(file++), ...approve, ...extra, 'go'],
        { cwd: sandbox.workspace, env: sandbox.env },
      );
      if (turn.code !== 0) throw new Error(`the turn failed with ${turn.code}`);
      turns[mode].push(turn.total);
    }
  }
  const on = median(turns.on);
  const off = median(turns.off);
  bench.report({
    figure: 'a turn writing one file in 10,000: checkpoints / checkpoints.enabled=false',
    value: `${ms(on)} / ${ms(off)} (+${ms(on - off)})`,
    floor: `the turn without checkpoints: ${ms(off)}`,
    goal: '≤ +2 warm checkpoints',
  });
  sandbox.cleanup();
};
export default checkpointsSection;
