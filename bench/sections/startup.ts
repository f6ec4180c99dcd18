/** Start-up: `jp --version` and `jp conversation ls` on 1,000 conversations, each paired with `node -e 0`. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createSandbox, jpBinary } from '../../test/support/jp.ts';
import { ms, pairedWithNodeStart, timeProcess, type Section } from '../support.ts';

const startup: Section = async (bench) => {
  const sandbox = createSandbox();
  const version = await pairedWithNodeStart(bench.runs, async () => {
    const result = await timeProcess(process.execPath, [jpBinary, '--version'], { env: sandbox.env });
    if (result.code !== 0) throw new Error(`jp --version exited ${result.code}`);
    return result.total;
  });
  bench.report({
    figure: 'jp --version',
    value: `${ms(version.value)} (${version.ratio.toFixed(2)}×)`,
    floor: `node -e 0: ${ms(version.floor)}`,
    goal: '≤ 2× node -e 0',
  });

  // 1,000 conversations, a realistic mix: mostly idle, a few incomplete.
  const conversations = path.join(sandbox.workspace, '.jp', 'conversations');
  const timestamp = new Date().toISOString();
  for (let index = 0; index < 1000; index++) {
    const id = `jp-c${(1_700_000_000_000 + index).toString()}${String(index % 1000).padStart(3, '0')}`;
    mkdirSync(path.join(conversations, id), { recursive: true });
    writeFileSync(
      path.join(conversations, id, 'metadata.json'),
      JSON.stringify({ id, title: `conversation ${index}`, created_at: timestamp, updated_at: timestamp }),
    );
    const events = [
      { type: 'turn_start', timestamp },
      { type: 'chat_request', timestamp, content: `question ${index}` },
      { type: 'chat_response', timestamp, message: 'an answer '.repeat(50) },
      ...(index % 50 === 0 ? [] : [{ type: 'turn_end', timestamp, status: 'completed' }]),
    ];
    writeFileSync(
      path.join(conversations, id, 'events.ndjson'),
      events.map((event) => JSON.stringify(event) + '\n').join(''),
    );
  }
  const list = await pairedWithNodeStart(bench.runs, async () => {
    const result = await timeProcess(process.execPath, [jpBinary, 'conversation', 'ls'], {
      cwd: sandbox.workspace,
      env: sandbox.env,
    });
    if (result.code !== 0 || result.stdout.split('\n').length < 1000) throw new Error('ls failed');
    return result.total;
  });
  bench.report({
    figure: 'jp conversation ls (1,000 conversations)',
    value: `${ms(list.value)} (${list.ratio.toFixed(2)}×)`,
    floor: `node -e 0: ${ms(list.floor)}`,
    goal: '≤ 5× node -e 0',
  });
  sandbox.cleanup();
};
export default startup;
