/**
 * The crash trial, many times, by hand: `node --import tsx bench/crash.ts --count 1000 [--mode server|no-server|both]`.
 * Each trial SIGKILLs a scripted multi-tool turn at a random instant spread over the whole turn, then
 * checks that the conversation opens, `ls` is right and `--continue` completes it with every tool
 * call answered exactly once (test/support/crash.ts). Prints progress and a summary.
 *
 * `--early`: instead, each trial SIGKILLs a new query's client and its server, each at a random
 * instant of the query's first 300 ms, and checks that no conversation is left without its log
 * (test/support/early-kill.ts).
 */
import { parseArgs } from 'node:util';
import { crashTrial, measureTurn, startCrashProvider, type CrashMode } from '../test/support/crash.ts';
import { earlyKillTrial, listingProblems } from '../test/support/early-kill.ts';
import { createSandbox } from '../test/support/jp.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '1000' },
    mode: { type: 'string', default: 'both' },
    early: { type: 'boolean', default: false },
  },
});
const count = Number(values.count);

if (values.early) {
  let failed = 0;
  let sandbox = createSandbox();
  const started = Date.now();
  for (let trial = 0; trial < count; trial++) {
    if (trial > 0 && trial % 100 === 0) {
      const listing = await listingProblems(sandbox);
      for (const problem of listing) console.log(`FAIL ${problem}`);
      failed += listing.length;
      sandbox.cleanup();
      sandbox = createSandbox();
    }
    const client = Math.round(Math.random() * 300);
    const server = Math.round(Math.random() * 300);
    const problems = await earlyKillTrial(sandbox, client, server);
    if (problems.length > 0) {
      failed++;
      console.log(`FAIL trial ${trial}, client killed at ${client} ms, server at ${server} ms: ${problems.join('; ')}`);
    }
    if ((trial + 1) % 50 === 0)
      console.log(
        `early: ${trial + 1}/${count} trials, ${failed} failures, ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );
  }
  for (const problem of await listingProblems(sandbox)) {
    failed++;
    console.log(`FAIL ${problem}`);
  }
  sandbox.cleanup();
  console.log(`${count} early trials, ${failed} failures`);
  process.exit(failed === 0 ? 0 : 1);
}

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
    const killAfter = Math.round((((trial % 50) + Math.random()) / 50) * turnMs);
    const outcome = await crashTrial(sandbox, provider, mode, killAfter);
    const status = outcome.statusAfterKill.replace(/\(pid \d+\)/, '(pid)');
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (outcome.problems.length > 0) {
      failures++;
      console.log(`FAIL ${mode} trial ${trial} killed after ${killAfter} ms: ${outcome.problems.join('; ')}`);
    }
    if ((trial + 1) % 50 === 0)
      console.log(
        `${mode}: ${trial + 1}/${count} trials, ${failures} failures, ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );
  }
  console.log(
    `${mode}: turn ${turnMs} ms; status after kill: ${[...statuses].map(([status, n]) => `${status} ×${n}`).join(', ')}`,
  );
  await provider.close();
  sandbox.cleanup();
}
console.log(`${count * modes.length} trials, ${failures} failures`);
process.exit(failures === 0 ? 0 : 1);
