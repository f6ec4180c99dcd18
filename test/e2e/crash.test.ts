/**
 * Crash safety, a reduced count (bench/crash.ts runs 1,000 by hand): SIGKILL at random instants
 * spread over a whole multi-tool turn, of the in-process run (--no-server) and of the query server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FakeProvider } from '../support/fake-provider.ts';
import { crashTrial, measureTurn, startCrashProvider, type CrashMode } from '../support/crash.ts';
import { createSandbox, type Sandbox } from '../support/jp.ts';

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
