/**
 * The crash trial, many times, by hand: `node --import tsx bench/crash.ts --count 1000 [--mode server|no-server|both]`.
 * Each trial SIGKILLs a scripted multi-tool turn at a random instant spread over the whole turn, then
 * checks that the conversation opens, `ls` is right and `--continue` completes it with every tool
 * call answered exactly once (test/support/crash.ts). Prints progress and a summary.
 */
import { parseArgs } from 'node:util';
import { crashTrial, measureTurn, startCrashProvider, type CrashMode } from '../test/support/crash.ts';
import { createSandbox } from '../test/support/jp.ts';

const { values } = parseArgs({ options: { count: { type: 'string', default: '1000' }, mode: { type: 'string', default: 'both' } } });
const count = Number(values.count);
const modes: CrashMode[] = values.mode === 'both' ? ['no-server', 'server'] : [values.mode as CrashMode];

let failures = 0;
for (const mode of modes) {
  const provider = await startCrashProvider();
  let sandbox = createSandbox();
  sandbox.write('input.txt', 'the input');
  const turnMs = await measureTurn(sandbox, provider, mode);
  const statuses = new Map<string, number>();
  const started = Date.now();
  for (let trial = 0; trial < count; trial++) {
    if (trial > 0 && trial % 100 === 0) {
      // A fresh workspace now and then keeps `ls` and the directories small.
      sandbox.cleanup();
      sandbox = createSandbox();
      sandbox.write('input.txt', 'the input');
    }
    const killAfter = Math.round(((trial % 50) + Math.random()) / 50 * turnMs);
    const outcome = await crashTrial(sandbox, provider, mode, killAfter);
    const status = outcome.statusAfterKill.replace(/\(pid \d+\)/, '(pid)');
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (outcome.problems.length > 0) {
      failures++;
      console.log(`FAIL ${mode} trial ${trial} killed after ${killAfter} ms: ${outcome.problems.join('; ')}`);
    }
    if ((trial + 1) % 50 === 0) console.log(`${mode}: ${trial + 1}/${count} trials, ${failures} failures, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  console.log(`${mode}: turn ${turnMs} ms; status after kill: ${[...statuses].map(([status, n]) => `${status} ×${n}`).join(', ')}`);
  await provider.close();
  sandbox.cleanup();
}
console.log(`${count * modes.length} trials, ${failures} failures`);
process.exit(failures === 0 ? 0 : 1);
