/** A hello turn against an instant local provider, through the query server and with --no-server. */
import { createSandbox, fakeModelArguments, jpBinary } from '../../test/support/jp.ts';
import { startFakeProvider, textStep } from '../../test/support/fake-provider.ts';
import { drainOnce } from '../drain.ts';
import { median, ms, timeProcess, type Section } from '../support.ts';

const query: Section = async (bench) => {
  const floor = await bench.nodeStart();
  const provider = await startFakeProvider({
    wire: 'openai-chat',
    steps: [textStep('An instant answer from a local provider, in a few chunks.', { chunks: 8 })],
  });
  const sandbox = createSandbox();
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  const environment = { ...sandbox.env, ...model.env };
  // The two ways are measured in alternation, so that drift in the machine's speed during the run
  // weighs on both alike and their difference (the server's overhead) stays meaningful.
  const samples = {
    inProcess: { firstByte: [] as number[], total: [] as number[] },
    viaServer: { firstByte: [] as number[], total: [] as number[] },
  };
  for (let index = 0; index < bench.runs; index++) {
    for (const [way, extra] of [
      ['inProcess', ['--no-server']],
      ['viaServer', []],
    ] as const) {
      const result = await timeProcess(
        process.execPath,
        [jpBinary, 'query', '--new', ...extra, ...model.args, 'hello'],
        { cwd: sandbox.workspace, env: environment },
      );
      if (result.code !== 0) throw new Error(`query failed with ${result.code}`);
      samples[way].firstByte.push(result.firstByte);
      samples[way].total.push(result.total);
    }
  }
  const inProcess = { firstByte: median(samples.inProcess.firstByte), total: median(samples.inProcess.total) };
  const viaServer = { firstByte: median(samples.viaServer.firstByte), total: median(samples.viaServer.total) };
  const bare: number[] = [];
  for (let index = 0; index < bench.runs; index++) bare.push((await drainOnce(provider)).total);
  const floorText = `node -e 0 ${ms(floor)} + bare HTTP drain ${ms(median(bare))}`;
  bench.report({
    figure: 'hello turn, instant local provider: first stdout byte (server)',
    value: ms(viaServer.firstByte),
    floor: floorText,
    goal: '',
  });
  bench.report({
    figure: 'hello turn, instant local provider: total (server)',
    value: ms(viaServer.total),
    floor: floorText,
    goal: '≤ 300 ms median',
  });
  bench.report({
    figure: 'hello turn, instant local provider: first stdout byte (--no-server)',
    value: ms(inProcess.firstByte),
    floor: floorText,
    goal: '',
  });
  bench.report({
    figure: 'hello turn, instant local provider: total (--no-server)',
    value: ms(inProcess.total),
    floor: floorText,
    goal: '≤ 300 ms median',
  });
  bench.report({
    figure: 'foreground overhead of the server over --no-server',
    value: ms(viaServer.total - inProcess.total),
    floor: `node -e 0: ${ms(floor)}`,
    goal: '≤ 60 ms',
  });
  await provider.close();
  sandbox.cleanup();
};
export default query;
