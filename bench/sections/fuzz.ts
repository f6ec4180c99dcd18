/** A running server under a flood of malformed frames: time, memory growth, descriptors. */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fuzzServer, openFileDescriptors, residentMemoryKilobytes } from '../../test/support/fuzz.ts';
import { createSandbox, eventually, runCapability, runJp, sleep } from '../../test/support/jp.ts';
import { megabytes, type Section } from '../support.ts';

const fuzz: Section = async (bench) => {
  const sandbox = createSandbox();
  writeFileSync(
    path.join(sandbox.workspace, 'wait.json'),
    JSON.stringify({
      steps: [
        {
          parts: [
            {
              tool_call: { name: 'run_command', arguments: { command: 'while [ ! -f release ]; do sleep 0.05; done' } },
            },
          ],
        },
        { parts: [{ text: 'ok' }] },
      ],
    }),
  );
  const conversationId = (
    await runJp(sandbox, [
      'query',
      '--detach',
      '-m',
      'test',
      '-c',
      'providers.test.script=wait.json',
      '-c',
      'conversation.tools.run_command.run="unattended"',
      'x',
    ])
  ).stdout.trim();
  const entryFile = path.join(sandbox.userDirectory(), 'processes', `${conversationId}.json`);
  const entry = await eventually('the tool is running', () => {
    try {
      const current = JSON.parse(readFileSync(entryFile, 'utf8')) as {
        pid: number;
        socket_path: string;
        tool_process_groups: unknown[];
      };
      return current.tool_process_groups.length === 1 ? current : undefined;
    } catch {
      return undefined;
    }
  });
  await sleep(300);
  const baseline = residentMemoryKilobytes(entry.pid);
  const descriptors = openFileDescriptors(entry.pid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, residentMemoryKilobytes(entry.pid))), 25);
  const started = performance.now();
  await fuzzServer(entry.socket_path, runCapability(sandbox, conversationId), { frames: 10_000, concurrency: 20 });
  const elapsed = performance.now() - started;
  clearInterval(sampler);
  await eventually('fds back to baseline', () => openFileDescriptors(entry.pid) === descriptors);
  bench.report({
    figure: 'fuzz: 10,000 malformed frames / 20 connections',
    value: `${(elapsed / 1000).toFixed(1)} s, RSS +${megabytes(peak - baseline)}, fds back to ${descriptors}`,
    floor: `baseline RSS ${megabytes(baseline)}`,
    goal: 'RSS +< 20 MB, fds back to baseline',
  });
  writeFileSync(path.join(sandbox.workspace, 'release'), '');
  await runJp(sandbox, ['conversation', 'wait', conversationId]);
  sandbox.cleanup();
};
export default fuzz;
