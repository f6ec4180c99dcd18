/**
 * The provider stream: a hello turn and a 20,000-word answer streamed one token per SSE event
 * (OpenAI Responses wire, the one Codex speaks), through `jp query` with its server and with
 * --no-server, text to a pipe; beside a bare HTTP client draining the same response, and beside
 * Codex (`@openai/codex`, pointed at the same local server) when it is installed: `codex` on PATH,
 * in node_modules/.bin (`npm install --no-save @openai/codex`), or JP_BENCH_CODEX. The responses
 * are recorded once from the fake provider and replayed byte for byte, one SSE event per write (as
 * a provider sends them) or the whole response at once (the clients' cost alone).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeProvider, textStep, type ScriptedStep } from '../../test/support/fake-provider.ts';
import { createSandbox, jpBinary, repositoryRoot } from '../../test/support/jp.ts';
import { recordingOf, startReplayProvider, type ReplayProvider } from '../../test/support/replay-provider.ts';
import { floorEnvironment, median, ms, timeProcess, type Section } from '../support.ts';

const words = 20_000;

/** Records what the fake provider streams for `step`, then replays it to every request. */
async function recordedServer(step: ScriptedStep, writes: 'whole' | 'event'): Promise<ReplayProvider> {
  const fake = await startFakeProvider({ wire: 'openai-responses', steps: [step] });
  const response = await fetch(`${fake.baseUrl}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'bench-model', stream: true, input: [{ role: 'user', content: 'hello' }] }),
  });
  const body = await response.text();
  await fake.close();
  return startReplayProvider({ replies: [{ recording: recordingOf(body) }], writes });
}

function findCodex(): string | undefined {
  const candidates = [process.env.JP_BENCH_CODEX, path.join(repositoryRoot, 'node_modules', '.bin', 'codex')];
  for (const candidate of candidates) if (candidate && existsSync(candidate)) return candidate;
  const onPath = spawnSync('sh', ['-c', 'command -v codex'], { encoding: 'utf8' });
  return onPath.status === 0 && onPath.stdout.trim() ? onPath.stdout.trim() : undefined;
}

const curlAvailable = spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;

/** A bare HTTP client in its own process draining the response: curl, else node:http. */
function drain(baseUrl: string): Promise<number> {
  const url = `${baseUrl}/responses`;
  if (curlAvailable) {
    return timeProcess(
      'curl',
      ['-sSN', '-o', '/dev/null', '-X', 'POST', '-H', 'content-type: application/json', '-d', '{"stream":true}', url],
      { env: floorEnvironment },
    ).then((result) => result.total);
  }
  const script = `const r=require('node:http').request(${JSON.stringify(url)},{method:'POST'},(m)=>m.resume());r.end('{}')`;
  return timeProcess(process.execPath, ['-e', script], { env: floorEnvironment }).then((result) => result.total);
}

const stream: Section = async (bench) => {
  const floor = await bench.nodeStart();
  const hello = await recordedServer(
    textStep('An instant answer from a local provider, in a few chunks.', { chunks: 8 }),
    'whole',
  );
  const answer: ScriptedStep = { parts: Array.from({ length: words }, (_, index) => ({ text: `w${index % 10} ` })) };
  const long = await recordedServer(answer, 'event');
  const burst = await recordedServer(answer, 'whole');
  const sandbox = createSandbox();
  const codex = findCodex();
  const codexHome = mkdtempSync(path.join(os.tmpdir(), 'jp-bench-codex-'));
  const codexWork = path.join(codexHome, 'work');
  mkdirSync(codexWork);

  const jp = (server: ReplayProvider, extra: string[]) =>
    timeProcess(
      process.execPath,
      [
        jpBinary,
        'query',
        '--new',
        ...extra,
        '-m',
        'openai/bench-model',
        '-c',
        `providers.openai.base_url="${server.baseUrl}"`,
        'hello',
      ],
      {
        cwd: sandbox.workspace,
        env: { ...sandbox.env, OPENAI_API_KEY: 'sk-bench-000000000000000000' },
      },
    );
  const codexRun = (server: ReplayProvider) =>
    timeProcess(
      codex!,
      [
        'exec',
        '--skip-git-repo-check',
        '-c',
        'model_provider="bench"',
        '-c',
        `model_providers.bench={ name = "bench", base_url = "${server.baseUrl}", env_key = "BENCH_KEY", wire_api = "responses" }`,
        '-m',
        'bench-model',
        'hello',
      ],
      { cwd: codexWork, env: { ...floorEnvironment, HOME: codexHome, CODEX_HOME: codexHome, BENCH_KEY: 'bench' } },
    );

  // The ways are measured in turn (A B C D A B C D ...), so that drift in the machine's speed weighs
  // on all of them alike.
  const samples: Record<string, number[]> = {};
  const add = (name: string, value: number): void => void (samples[name] ??= []).push(value);
  const checked = async (
    name: string,
    run: Promise<{ total: number; code: number | null; stdout: string }>,
    expectedCharacters: number,
  ) => {
    const result = await run;
    if (result.code !== 0 || result.stdout.length < expectedCharacters)
      throw new Error(`${name}: exit ${result.code}, ${result.stdout.length} characters on stdout`);
    add(name, result.total);
  };
  const longRuns = Math.max(3, Math.min(bench.runs, 7));
  for (let index = 0; index < bench.runs; index++) {
    await checked('jp hello', jp(hello, []), 40);
    if (codex) await checked('codex hello', codexRun(hello), 40);
    if (index >= longRuns) continue;
    await checked('jp long', jp(long, []), words * 3);
    await checked('jp long in-process', jp(long, ['--no-server']), words * 3);
    if (codex) await checked('codex long', codexRun(long), words * 3);
    add('drain long', await drain(long.baseUrl));
    await checked('jp burst', jp(burst, []), words * 3);
    if (codex) await checked('codex burst', codexRun(burst), words * 3);
    add('drain burst', await drain(burst.baseUrl));
  }
  const of = (name: string): number => median(samples[name]!);
  const codexNote = codex ? `Codex ${ms(of('codex hello'))}` : 'Codex not installed';
  bench.report({
    figure: 'hello turn, OpenAI Responses wire (server)',
    value: ms(of('jp hello')),
    floor: `node -e 0: ${ms(floor)}; ${codexNote}`,
    goal: 'faster than Codex',
  });
  const drainText = `raw drain (${curlAvailable ? 'curl' : 'node:http'}): ${ms(of('drain long'))}`;
  const longGoal = `≤ 4× raw drain; no slower than Codex`;
  const count = words.toLocaleString('en');
  bench.report({
    figure: `long answer, ${count} one-token events, one per write, text to a pipe (server)`,
    value: `${ms(of('jp long'))} (${(of('jp long') / of('drain long')).toFixed(1)}× drain)`,
    floor: `${drainText}${codex ? `; Codex ${ms(of('codex long'))}` : ''}`,
    goal: longGoal,
  });
  bench.report({
    figure: `long answer, ${count} one-token events, one per write, text to a pipe (--no-server)`,
    value: `${ms(of('jp long in-process'))} (${(of('jp long in-process') / of('drain long')).toFixed(1)}× drain)`,
    floor: drainText,
    goal: longGoal,
  });
  bench.report({
    figure: `long answer, ${count} one-token events, all at once, text to a pipe (server)`,
    value: `${ms(of('jp burst'))} (${(of('jp burst') / of('drain burst')).toFixed(1)}× drain)`,
    floor: `raw drain: ${ms(of('drain burst'))}${codex ? `; Codex ${ms(of('codex burst'))}` : ''}`,
    goal: 'no slower than Codex',
  });
  if (codex) {
    bench.report({
      figure: 'Codex (codex exec), same servers: hello turn / long answer / all at once',
      value: `${ms(of('codex hello'))} / ${ms(of('codex long'))} / ${ms(of('codex burst'))}`,
      floor: `node -e 0: ${ms(floor)}`,
      goal: '',
    });
  }
  await hello.close();
  await long.close();
  await burst.close();
  sandbox.cleanup();
  rmSync(codexHome, { recursive: true, force: true });
};
export default stream;
