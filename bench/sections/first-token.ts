/**
 * Time to first token against a local server that streams (issue 36): llama-server's recorded
 * stream of a short story (test/fixtures/provider-streams/llama-server/086), replayed from 127.0.0.1
 * one event per write, 2 ms apart as the server generated them. The floor is `curl -N` posting the same request body jp sent to the same
 * server: the time until its output holds the first token of the answer. jp's figure is the time to
 * its first stdout byte (the first token), through the query server and with --no-server; the three
 * are measured in alternation so that drift weighs on all alike.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSandbox, jpBinary } from '../../test/support/jp.ts';
import { loadRecording, replayModelArguments, startReplayProvider } from '../../test/support/replay-provider.ts';
import { floorEnvironment, median, ms, timeProcess, type Section } from '../support.ts';

/** Wall time from spawning `curl -N` until its output holds the answer's first token. */
function curlFirstToken(url: string, bodyFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let output = '';
    let firstToken = Number.NaN;
    const child = spawn(
      'curl',
      [
        '-N',
        '-s',
        '-H',
        'content-type: application/json',
        '-H',
        'authorization: Bearer x',
        '--data-binary',
        `@${bodyFile}`,
        url,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'], env: floorEnvironment },
    );
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (Number.isNaN(firstToken) && /"content":"[^"]/.test(output)) firstToken = performance.now() - started;
    });
    child.on('error', reject);
    child.on('close', () => (Number.isNaN(firstToken) ? reject(new Error('curl saw no token')) : resolve(firstToken)));
  });
}

const firstToken: Section = async (bench) => {
  const recording = loadRecording('llama-server/086-resp.sse')[0]!;
  // llama-server wrote these 100 tokens over 206 ms (meta: first byte 49 ms, end 255 ms): 2 ms apart.
  const provider = await startReplayProvider({ replies: () => ({ recording }), writes: 'event', paceMilliseconds: 2 });
  const sandbox = createSandbox();
  const model = replayModelArguments('compatible:llamacpp', provider.baseUrl, 'stories260k');
  const environment = { ...sandbox.env, ...model.env };
  const args = (extra: string[]): string[] => [
    jpBinary,
    'query',
    '--new',
    ...extra,
    '--no-tools',
    ...model.args,
    'Tell me a story.',
  ];
  // jp's own request body, posted as is by curl: the same request to the same server.
  const first = await timeProcess(process.execPath, args([]), { cwd: sandbox.workspace, env: environment });
  if (first.code !== 0) throw new Error(`query failed with ${first.code}`);
  const bodyFile = path.join(sandbox.root, 'request.json');
  writeFileSync(bodyFile, JSON.stringify(provider.requests[0]!.body));
  const url = `${provider.baseUrl}/chat/completions`;
  const samples = { curl: [] as number[], server: [] as number[], inProcess: [] as number[] };
  for (let index = 0; index < bench.runs; index++) {
    samples.curl.push(await curlFirstToken(url, bodyFile));
    for (const [way, extra] of [
      ['server', []],
      ['inProcess', ['--no-server']],
    ] as const) {
      const result = await timeProcess(process.execPath, args([...extra]), {
        cwd: sandbox.workspace,
        env: environment,
      });
      if (result.code !== 0) throw new Error(`query failed with ${result.code}`);
      samples[way].push(result.firstByte);
    }
  }
  const curl = median(samples.curl);
  const server = median(samples.server);
  const inProcess = median(samples.inProcess);
  const floor = `curl -N, same request and server: ${ms(curl)}; node -e 0: ${ms(await bench.nodeStart())}`;
  bench.report({
    figure: 'time to first token, local server streaming (server)',
    value: `${ms(server)} (+${ms(server - curl)})`,
    floor,
    goal: '≤ curl + 150 ms',
  });
  bench.report({
    figure: 'time to first token, local server streaming (--no-server)',
    value: `${ms(inProcess)} (+${ms(inProcess - curl)})`,
    floor,
    goal: '≤ curl + 100 ms',
  });
  await provider.close();
  sandbox.cleanup();
};
export default firstToken;
