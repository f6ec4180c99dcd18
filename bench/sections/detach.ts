/** `jp query --detach` (paired with `node -e 0`) and attaching to the detached run. */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createSandbox, jpBinary, runCapability } from '../../test/support/jp.ts';
import { floorEnvironment, median, medianOf, ms, nodeStartOnce, timeProcess, type Section } from '../support.ts';

function firstLiveEvent(socketPath: string, capability: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.createConnection(socketPath);
    let buffered = '';
    let greeted = false;
    socket.on('error', reject);
    socket.on('connect', () =>
      socket.write(
        JSON.stringify({ type: 'hello', version: 2, capability, can_prompt: false, read_only: true }) + '\n',
      ),
    );
    socket.on('data', (chunk) => {
      buffered += chunk.toString();
      for (;;) {
        const newline = buffered.indexOf('\n');
        if (newline === -1) return;
        const message = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        if (message.type === 'hello') greeted = true;
        else if (greeted && (message.type === 'delta' || message.type === 'event')) {
          resolve(performance.now() - started);
          socket.destroy();
          return;
        }
      }
    });
  });
}

const detach: Section = async (bench) => {
  const sandbox = createSandbox();
  const parts = [
    { text: 'start ' },
    ...Array.from({ length: 400 }, (_, index) => [{ text: `w${index} ` }, { delay_ms: 10 }]).flat(),
  ];
  writeFileSync(path.join(sandbox.workspace, 'slow.json'), JSON.stringify({ steps: [{ parts }] }));
  const settings = ['-m', 'test', '-c', 'providers.test.script=slow.json'];
  const count = Math.min(bench.runs, 10);
  const detachTimes: number[] = [];
  const floors: number[] = [];
  const ratios: number[] = [];
  const attachTimes: number[] = [];
  const protocolTimes: number[] = [];
  for (let index = 0; index < count; index++) {
    const detached = await timeProcess(process.execPath, [jpBinary, 'query', '--new', '--detach', ...settings, 'go'], {
      cwd: sandbox.workspace,
      env: sandbox.env,
    });
    if (detached.code !== 0) throw new Error(`--detach exited ${detached.code}`);
    const floor = await nodeStartOnce();
    detachTimes.push(detached.total);
    floors.push(floor);
    ratios.push(detached.total / floor);
    const conversationId = detached.stdout.trim();
    const socketPath = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.sock`);
    // Protocol level: connect, hello, first live message after the server's hello.
    protocolTimes.push(await firstLiveEvent(socketPath, runCapability(sandbox, conversationId)));
    // Whole command: `jp conversation attach --tail=0` until its first stdout byte.
    attachTimes.push(
      await new Promise<number>((resolve) => {
        const started = performance.now();
        const child = spawn(
          process.execPath,
          [jpBinary, 'conversation', 'attach', '--tail=0', '--read-only', conversationId],
          { cwd: sandbox.workspace, env: sandbox.env, stdio: ['ignore', 'pipe', 'ignore'] },
        );
        child.stdout.once('data', () => {
          resolve(performance.now() - started);
          child.kill();
        });
      }),
    );
    spawnSync(process.execPath, [jpBinary, 'conversation', 'kill', '--force', conversationId], {
      cwd: sandbox.workspace,
      env: sandbox.env,
    });
  }
  // The floor of any design where a Node client returns only once a Node server is ready
  // (DESIGN §8): a bare node process that spawns a detached node child and exits on its first byte.
  const handOffScript = path.join(sandbox.workspace, 'hand-off-floor.mjs');
  writeFileSync(
    handOffScript,
    [
      "import { spawn } from 'node:child_process';",
      "const child = spawn(process.execPath, ['-e', 'process.stdout.write(\"ready\")'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });",
      "child.stdout.once('data', () => { child.unref(); process.exit(0); });",
    ].join('\n'),
  );
  const handOffFloor = await medianOf(
    count,
    async () => (await timeProcess(process.execPath, [handOffScript], { env: floorEnvironment })).total,
  );
  bench.report({
    figure: 'jp query --detach: return time',
    value: `${ms(median(detachTimes))} (${(median(detachTimes) / handOffFloor).toFixed(2)}× the hand-off; ${median(ratios).toFixed(2)}× node -e 0)`,
    floor: `node -e 0: ${ms(median(floors))}; node spawning node until ready: ${ms(handOffFloor)}`,
    goal: '≤ 3× node spawning node until ready',
  });
  bench.report({
    figure: 'attach: connect → first live event (protocol)',
    value: `${median(protocolTimes).toFixed(1)} ms`,
    floor: '',
    goal: '≤ 100 ms',
  });
  bench.report({
    figure: 'jp conversation attach: start → first live byte',
    value: ms(median(attachTimes)),
    floor: `node -e 0: ${ms(median(floors))}`,
    goal: '',
  });
  sandbox.cleanup();
};
export default detach;
