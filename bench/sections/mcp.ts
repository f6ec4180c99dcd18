/**
 * What MCP servers add to a query: a hello turn (no tool call) against an instant local provider with
 * no server configured, with one server-everything over stdio, and with three (started together, so
 * three should cost about what one does). The floor is one server's own start-up measured without
 * jp: node, the MCP SDK client, spawn, initialize, tools/list, close.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { createSandbox, fakeModelArguments, jpBinary } from '../../test/support/jp.ts';
import { startFakeProvider, textStep } from '../../test/support/fake-provider.ts';
import { everythingStdio, writeUserConfig } from '../../test/support/mcp.ts';
import { floorEnvironment, median, ms, timeProcess, type Section } from '../support.ts';

const require = createRequire(import.meta.url);

/** One MCP server's start-up with the SDK alone, as a whole process (the floor). */
const sdkAlone = `
const [clientModule, stdioModule, entry] = process.argv.slice(1);
const { Client } = await import(clientModule);
const { StdioClientTransport } = await import(stdioModule);
const client = new Client({ name: 'floor', version: '0' }, { capabilities: { elicitation: { form: {} } } });
await client.connect(new StdioClientTransport({ command: process.execPath, args: [entry, 'stdio'], stderr: 'ignore' }));
await client.listTools();
await client.close();
console.log('ok');
`;

const mcp: Section = async (bench) => {
  const provider = await startFakeProvider({
    wire: 'openai-chat',
    steps: [textStep('An instant answer.', { chunks: 2 })],
  });
  const model = fakeModelArguments('openai-chat', provider.baseUrl);
  const setups = {
    none: createSandbox(),
    one: createSandbox(),
    three: createSandbox(),
  };
  writeUserConfig(setups.one, everythingStdio('everything', setups.one.root));
  writeUserConfig(setups.three, ['a', 'b', 'c'].map((name) => everythingStdio(name, setups.three.root)).join('\n'));
  const floorArguments = [
    '--input-type=module',
    '-e',
    sdkAlone,
    require.resolve('@modelcontextprotocol/sdk/client/index.js'),
    require.resolve('@modelcontextprotocol/sdk/client/stdio.js'),
    path.join(
      path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
      'dist',
      'index.js',
    ),
  ];
  const samples = { none: [] as number[], one: [] as number[], three: [] as number[], floor: [] as number[] };
  // In alternation, so that drift in the machine's speed weighs on every figure alike.
  const runs = Math.min(bench.runs, 9);
  for (let index = 0; index < runs; index++) {
    for (const way of ['none', 'one', 'three'] as const) {
      const sandbox = setups[way];
      const result = await timeProcess(process.execPath, [jpBinary, 'query', '--new', ...model.args, 'hello'], {
        cwd: sandbox.workspace,
        env: { ...sandbox.env, ...model.env },
      });
      if (result.code !== 0) throw new Error(`query (${way}) failed with ${result.code}`);
      samples[way].push(result.total);
    }
    const floor = await timeProcess(process.execPath, floorArguments, { env: floorEnvironment });
    if (floor.stdout.trim() !== 'ok') throw new Error('the SDK-only MCP start-up failed');
    samples.floor.push(floor.total);
  }
  const none = median(samples.none);
  const one = median(samples.one);
  const three = median(samples.three);
  const floorText = `one server alone, SDK client (node, spawn, initialize, tools/list): ${ms(median(samples.floor))}`;
  bench.report({
    figure: 'hello turn, no MCP server configured: total',
    value: ms(none),
    floor: floorText,
    goal: 'no MCP cost',
  });
  bench.report({
    figure: 'hello turn, 1 MCP server (stdio): total',
    value: `${ms(one)} (+${ms(one - none)})`,
    floor: floorText,
    goal: 'added ≤ the floor',
  });
  bench.report({
    figure: 'hello turn, 3 MCP servers (started together): total',
    value: `${ms(three)} (+${ms(three - none)})`,
    floor: floorText,
    goal: 'added ≈ 1 server, not 3',
  });
  await provider.close();
  for (const sandbox of Object.values(setups)) sandbox.cleanup();
};
export default mcp;
