/** Streaming throughput: 20,000 one-token events through the whole pipeline to stdout. */
import { createSandbox, fakeModelArguments, jpBinary } from '../../test/support/jp.ts';
import { startFakeProvider, type ScriptedPart } from '../../test/support/fake-provider.ts';
import { drainOnce } from '../drain.ts';
import { median, timeProcess, type Section } from '../support.ts';

const throughput: Section = async (bench) => {
  const tokens = 20_000;
  const parts: ScriptedPart[] = Array.from({ length: tokens }, (_, index) => ({ text: `t${index % 10} ` }));
  const provider = await startFakeProvider({ wire: 'openai-chat', steps: [{ parts }] });
  const sandbox = createSandbox();
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  const environment = { ...sandbox.env, ...model.env };
  const jpRates: number[] = [];
  const bareRates: number[] = [];
  for (let index = 0; index < 3; index++) {
    const result = await timeProcess(process.execPath, [jpBinary, 'query', '--new', ...model.args, 'stream'], {
      cwd: sandbox.workspace,
      env: environment,
    });
    if (result.code !== 0 || result.stdout.length < tokens * 3) throw new Error('throughput query failed');
    jpRates.push(tokens / ((result.total - result.firstByte) / 1000));
    const drained = await drainOnce(provider);
    bareRates.push(tokens / ((drained.total - drained.firstByte) / 1000));
  }
  bench.report({
    figure: 'streaming throughput to stdout (tokens/s, median of 3)',
    value: median(jpRates).toFixed(0),
    floor: `bare HTTP drain: ${median(bareRates).toFixed(0)} tokens/s`,
    goal: '',
  });
  await provider.close();
  sandbox.cleanup();
};
export default throughput;
