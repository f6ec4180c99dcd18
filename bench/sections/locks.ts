/** Lock refusals (exit 5), alone and 50 at once, and a graceful kill. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSandbox, jpBinary, runJp } from '../../test/support/jp.ts';
import { floorEnvironment, median, medianOf, ms, timeProcess, type Section } from '../support.ts';

const locks: Section = async (bench) => {
  const floor = await bench.nodeStart();
  const sandbox = createSandbox();
  writeFileSync(
    path.join(sandbox.workspace, 'hold.json'),
    JSON.stringify({ steps: [{ parts: [{ text: 'x' }, { delay_ms: 60_000 }] }] }),
  );
  const settings = ['-m', 'test', '-c', 'providers.test.script=hold.json'];
  const conversationId = (await runJp(sandbox, ['query', '--detach', ...settings, 'hold'])).stdout.trim();
  const refuse = (): Promise<number> =>
    timeProcess(process.execPath, [jpBinary, 'query', `--id=${conversationId}`, ...settings, 'again'], {
      cwd: sandbox.workspace,
      env: sandbox.env,
    }).then((result) => {
      if (result.code !== 5) throw new Error(`expected exit 5, got ${result.code}`);
      return result.total;
    });
  const alone = await medianOf(bench.runs, refuse);
  const started = performance.now();
  const contended = await Promise.all(
    Array.from({ length: 50 }, () => refuse().then(() => performance.now() - started)),
  );
  // The floor of 50 refusals at once: 50 bare node processes started together on this machine's cores.
  const floorStarted = performance.now();
  const bare = await Promise.all(
    Array.from({ length: 50 }, () =>
      timeProcess(process.execPath, ['-e', '0'], { env: floorEnvironment }).then(
        () => performance.now() - floorStarted,
      ),
    ),
  );
  bench.report({
    figure: 'lock refusal (exit 5), one process',
    value: ms(alone),
    floor: `node -e 0: ${ms(floor)}`,
    goal: '≤ 1 s',
  });
  bench.report({
    figure: 'lock refusal, 50 at once: slowest / median',
    value: `${ms(Math.max(...contended))} / ${ms(median(contended))}`,
    floor: `50 × node -e 0 at once: ${ms(Math.max(...bare))} / ${ms(median(bare))}`,
    goal: '',
  });
  const killStarted = performance.now();
  await runJp(sandbox, ['conversation', 'kill', conversationId]);
  bench.report({
    figure: 'jp conversation kill (graceful): until the run has stopped',
    value: ms(performance.now() - killStarted),
    floor: `node -e 0: ${ms(floor)}`,
    goal: '≤ 2 s',
  });
  sandbox.cleanup();
};
export default locks;
