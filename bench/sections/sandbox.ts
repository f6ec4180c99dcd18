/**
 * The command sandbox's cost (DESIGN §10): `run_command "true"` sandboxed (workspace-write, no
 * network, bubblewrap) and with `--sandbox off`, measured in alternation. Two figures: one call,
 * from its tool_call_start to its tool_call_response in the log (ten calls per turn, averaged),
 * and a whole turn making one call. Floors: bwrap with the arguments jp gives a call, around `true`
 * (its mounts, namespaces and private TMPDIR included, in a workspace that is a git repository,
 * so that .git's rules count), and `sh -c true`. Goals: a call costs at most the unsandboxed call
 * plus 1.5× that bwrap floor; a turn with one sandboxed call at most 1.1× the same turn unsandboxed.
 */
import { spawnSync } from 'node:child_process';
import { createSandbox, jpBinary, readEvents, testProvider } from '../../test/support/jp.ts';
import { loadConfig } from '../../src/config/load.ts';
import { runSandboxes } from '../../src/sandbox/engine.ts';
import { median, ms, timeProcess, type Section } from '../support.ts';

const callsPerTurn = 10;

function spawnMilliseconds(file: string, args: string[]): number {
  const started = performance.now();
  spawnSync(file, args, { stdio: 'ignore' });
  return performance.now() - started;
}

const sandboxSection: Section = async (bench) => {
  const sandbox = createSandbox();
  spawnSync('git', ['init', '-q'], { cwd: sandbox.workspace });
  const trueCall = { tool_call: { name: 'run_command', arguments: { command: 'true' } } };
  const many = testProvider(
    sandbox,
    { steps: [{ parts: Array.from({ length: callsPerTurn }, () => trueCall) }, { parts: [{ text: 'ok' }] }] },
    'many.json',
  );
  const one = testProvider(sandbox, { steps: [{ parts: [trueCall] }, { parts: [{ text: 'ok' }] }] }, 'one.json');
  const approve = ['-c', 'conversation.tools.run_command.run="unattended"'];
  const samples = {
    call: { on: [] as number[], off: [] as number[] },
    turn: { on: [] as number[], off: [] as number[] },
    floor: { bwrap: [] as number[], sh: [] as number[] },
  };
  const modes = [
    ['on', []],
    ['off', ['--sandbox', 'off']],
  ] as const;
  const config = loadConfig({
    userFile: undefined,
    workspaceFile: undefined,
    environment: sandbox.env,
    cfgArguments: [],
    flags: [],
  });
  const confined = runSandboxes({
    config: config.value,
    workspaceRoot: sandbox.workspace,
    toolRoot: sandbox.workspace,
    environment: sandbox.env,
  }).confined;
  if (!(await confined.availability()).ok) throw new Error('the sandbox cannot start here: see `jp sandbox check`');
  for (let index = 0; index < bench.runs; index++) {
    for (const [mode, extra] of modes) {
      const turn = await timeProcess(
        process.execPath,
        [jpBinary, 'query', '--new', '--json', ...one, ...approve, ...extra, 'go'],
        { cwd: sandbox.workspace, env: sandbox.env },
      );
      if (turn.code !== 0) throw new Error(`the turn failed with ${turn.code}`);
      samples.turn[mode].push(turn.total);
      const calls = await timeProcess(
        process.execPath,
        [jpBinary, 'query', '--new', '--json', ...many, ...approve, ...extra, 'go'],
        { cwd: sandbox.workspace, env: sandbox.env },
      );
      if (calls.code !== 0) throw new Error(`the turn failed with ${calls.code}`);
      const conversationId = JSON.parse(calls.stdout.trim().split('\n').at(-1)!).conversation_id as string;
      const events = readEvents(sandbox, conversationId);
      const starts = new Map(
        events
          .filter((event) => event.type === 'tool_call_start')
          .map((event) => [event.id, Date.parse(event.timestamp)]),
      );
      const durations = events
        .filter((event) => event.type === 'tool_call_response')
        .map((event) => Date.parse(event.timestamp) - starts.get(event.id)!);
      if (durations.length !== callsPerTurn) throw new Error(`expected ${callsPerTurn} calls, got ${durations.length}`);
      samples.call[mode].push(durations.reduce((sum, value) => sum + value, 0) / callsPerTurn);
    }
    const prepared = confined.prepare({ file: '/bin/sh', arguments: ['-c', 'true'], cwd: sandbox.workspace });
    samples.floor.bwrap.push(spawnMilliseconds(prepared.file, prepared.arguments));
    prepared.cleanup();
    samples.floor.sh.push(spawnMilliseconds('/bin/sh', ['-c', 'true']));
  }
  const call = { on: median(samples.call.on), off: median(samples.call.off) };
  const turn = { on: median(samples.turn.on), off: median(samples.turn.off) };
  const bwrapFloor = median(samples.floor.bwrap);
  const floor = `bwrap … true ${ms(bwrapFloor)}; sh -c true ${ms(median(samples.floor.sh))}`;
  // A sandboxed call costs at most the unsandboxed call plus 1.5× bwrap around `true` (its mounts included).
  const callGoal = call.off + 1.5 * bwrapFloor;
  bench.report({
    figure: 'run_command "true", one call: sandboxed / --sandbox off',
    value: `${call.on.toFixed(1)} / ${call.off.toFixed(1)} ms (${(call.on / call.off).toFixed(2)}×)`,
    floor,
    goal: `≤ off + 1.5 × bwrap … true = ${callGoal.toFixed(1)} ms: ${call.on <= callGoal ? 'met' : '**not met**'}`,
  });
  bench.report({
    figure: 'a turn with one run_command "true": sandboxed / --sandbox off',
    value: `${ms(turn.on)} / ${ms(turn.off)} (${(turn.on / turn.off).toFixed(2)}×)`,
    floor,
    goal: `≤ 1.1×: ${turn.on <= 1.1 * turn.off ? 'met' : '**not met**'}`,
  });
  sandbox.cleanup();
};
export default sandboxSection;
