/**
 * Crash safety, a reduced count (bench/crash.ts runs 1,000 by hand): SIGKILL at random instants
 * spread over a whole multi-tool turn, of the in-process run (--no-server) and of the query server;
 * and SIGKILLs in a query's first 300 ms, which must leave no conversation without its log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FakeProvider } from '../support/fake-provider.ts';
import { crashTrial, measureTurn, startCrashProvider, type CrashMode } from '../support/crash.ts';
import { earlyKillTrial, listingProblems } from '../support/early-kill.ts';
import { conversationIds, createSandbox, type Sandbox } from '../support/jp.ts';

const trialsPerMode = Number(process.env.JP_CRASH_TRIALS ?? 12);

for (const mode of ['no-server', 'server'] as CrashMode[]) {
  describe(`SIGKILL at random instants (${mode})`, () => {
    let provider: FakeProvider;
    let sandbox: Sandbox;
    let turnMs = 0;
    before(async () => {
      provider = await startCrashProvider();
      sandbox = createSandbox();
      sandbox.write('input.txt', 'the input');
      turnMs = await measureTurn(sandbox, provider, mode);
    });
    after(async () => {
      await provider.close();
      sandbox.cleanup();
    });

    it(`${trialsPerMode} kills spread over the turn: ls is right and --continue completes each turn`, async (context) => {
      const statuses: string[] = [];
      for (let trial = 0; trial < trialsPerMode; trial++) {
        // Spread evenly over the turn, with jitter inside each slot.
        const killAfter = Math.round(((trial + Math.random()) / trialsPerMode) * turnMs);
        const outcome = await crashTrial(sandbox, provider, mode, killAfter);
        statuses.push(`${killAfter}ms:${outcome.statusAfterKill}`);
        assert.deepEqual(outcome.problems, [], `kill after ${killAfter} ms (status ${outcome.statusAfterKill})`);
      }
      context.diagnostic(`turn takes ${turnMs} ms; ${statuses.join(', ')}`);
    });
  });
}

describe("SIGKILL in a query's first 300 ms", () => {
  const earlyTrials = Number(process.env.JP_EARLY_KILL_TRIALS ?? 30);
  it(`${earlyTrials} kills of the client and its server at random instants: no conversation is left without its log`, async (context) => {
    const sandbox = createSandbox();
    try {
      const problems: string[] = [];
      for (let trial = 0; trial < earlyTrials; trial++) {
        const client = Math.round(Math.random() * 300);
        const server = Math.round(Math.random() * 300);
        for (const problem of await earlyKillTrial(sandbox, client, server))
          problems.push(`client at ${client} ms, server at ${server} ms: ${problem}`);
      }
      problems.push(...(await listingProblems(sandbox)));
      assert.deepEqual([...new Set(problems)], []);
      context.diagnostic(`${earlyTrials} trials; ${conversationIds(sandbox).length} conversations were created`);
    } finally {
      sandbox.cleanup();
    }
  });
});
