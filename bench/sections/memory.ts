/**
 * Peak memory of a query: the client's and its server's peak resident sets added together, for a
 * hello turn and for a 20,000-word answer, beside an idle `node` in the same run.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startFakeProvider, textStep, type ScriptedStep } from '../../test/support/fake-provider.ts';
import { createSandbox, fakeModelArguments, jpBinary, processesMatching, type Sandbox } from '../../test/support/jp.ts';
import { median, megabytes, peakKilobytes, type Section } from '../support.ts';

function serversOf(sandbox: Sandbox): number[] {
  return processesMatching(jpBinary, '__serve').filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`XDG_DATA_HOME=${sandbox.dataHome}`);
    } catch {
      return false;
    }
  });
}

/** Runs one query and samples both processes' peak (VmHWM only grows, so sampling misses little). */
async function peaksOfOneQuery(
  sandbox: Sandbox,
  args: string[],
  environment: NodeJS.ProcessEnv,
): Promise<{ client: number; server: number }> {
  const client = spawn(process.execPath, [jpBinary, ...args], {
    cwd: sandbox.workspace,
    env: environment,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const peaks = { client: 0, server: 0 };
  const serverPeaks = new Map<number, number>();
  const sample = (): void => {
    peaks.client = Math.max(peaks.client, peakKilobytes(client.pid!));
    for (const pid of serversOf(sandbox)) serverPeaks.set(pid, Math.max(serverPeaks.get(pid) ?? 0, peakKilobytes(pid)));
  };
  const sampler = setInterval(sample, 5);
  const code = await new Promise<number | null>((resolve) => client.on('close', resolve));
  clearInterval(sampler);
  // The server outlives its client by a little: sample it until it is gone.
  while (serversOf(sandbox).length > 0) {
    sample();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  if (code !== 0) throw new Error(`memory query exited ${code}`);
  peaks.server = Math.max(0, ...serverPeaks.values());
  return peaks;
}

const memory: Section = async (bench) => {
  const idle = await bench.idleNodeKilobytes();
  const words = 20_000;
  const cases: { name: string; step: ScriptedStep }[] = [
    { name: 'hello turn', step: textStep('Hello! How can I help?', { chunks: 4 }) },
    {
      name: `${words.toLocaleString('en')}-word answer`,
      step: { parts: Array.from({ length: words }, (_, index) => ({ text: `word${index % 100} ` })) },
    },
  ];
  for (const { name, step } of cases) {
    const provider = await startFakeProvider({ wire: 'openai-chat', steps: [step] });
    const sandbox = createSandbox();
    const model = fakeModelArguments('openai-chat', provider.baseUrl);
    const samples: { client: number; server: number }[] = [];
    for (let index = 0; index < 3; index++)
      samples.push(
        await peaksOfOneQuery(sandbox, ['query', '--new', ...model.args, 'hello'], { ...sandbox.env, ...model.env }),
      );
    const together = median(samples.map((sample) => sample.client + sample.server));
    const client = median(samples.map((sample) => sample.client));
    const server = median(samples.map((sample) => sample.server));
    bench.report({
      figure: `peak RSS, client + server, ${name} (median of 3)`,
      value: `${megabytes(together)} (client ${megabytes(client)}, server ${megabytes(server)})`,
      floor: `idle node: ${megabytes(idle)}`,
      goal: '≤ 120 MB together',
    });
    await provider.close();
    sandbox.cleanup();
  }
};
export default memory;
