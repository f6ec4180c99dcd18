/**
 * A 20,000-word answer rendered at a terminal (text-pretty in a pseudo-terminal, 100×30): wall time
 * and bytes written to the terminal, beside `-F text` to a file in the same run. Goals (DESIGN §13):
 * bytes at most 3× the answer, time at most 1.5× the text mode.
 */
import { openSync, closeSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createSandbox, jpBinary } from '../../test/support/jp.ts';
import { median, ms, type Section } from '../support.ts';

const require = createRequire(import.meta.url);
const pty = require('@lydell/node-pty') as typeof import('@lydell/node-pty');

/** Paragraphs of words with a little markdown, a code block, streamed a word or two at a time. */
function answerParts(words: number): { parts: { text: string }[]; text: string } {
  const pieces: string[] = [];
  for (let index = 0; index < words; index++) {
    const word = index % 50 === 7 ? `**word${index}**` : index % 70 === 3 ? `\`word${index}\`` : `word${index}`;
    pieces.push(index % 120 === 119 ? `${word}.\n\n` : `${word} `);
    if (index % 2000 === 1999)
      pieces.push('```ts\nconst answer = compute(42); // a line of code\nreturn answer;\n```\n\n');
  }
  return { parts: pieces.map((text) => ({ text })), text: pieces.join('') };
}

async function atTerminal(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ milliseconds: number; bytes: number }> {
  const started = performance.now();
  const terminal = pty.spawn(process.execPath, [jpBinary, ...args], {
    cwd,
    env: env as Record<string, string>,
    cols: 100,
    rows: 30,
    name: 'xterm-256color',
  });
  let bytes = 0;
  terminal.onData((data) => (bytes += Buffer.byteLength(data)));
  const exit = await new Promise<number>((resolve) => terminal.onExit((event) => resolve(event.exitCode)));
  if (exit !== 0) throw new Error(`jp ${args.join(' ')} exited ${exit} at the terminal`);
  return { milliseconds: performance.now() - started, bytes };
}

async function toFile(args: string[], cwd: string, env: NodeJS.ProcessEnv, file: string): Promise<number> {
  const started = performance.now();
  const fd = openSync(file, 'w');
  const child = spawn(process.execPath, [jpBinary, ...args], {
    cwd,
    env,
    stdio: ['ignore', fd, 'ignore'],
    detached: true,
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  closeSync(fd);
  if (code !== 0) throw new Error(`jp ${args.join(' ')} exited ${code}`);
  return performance.now() - started;
}

const terminal: Section = async (bench) => {
  const sandbox = createSandbox();
  const { parts, text } = answerParts(20_000);
  sandbox.write('long.json', JSON.stringify({ steps: [{ parts }] }));
  const model = ['-m', 'test', '-c', 'providers.test.script=long.json'];
  const env = { ...sandbox.env };
  delete env.CI;
  const answerBytes = Buffer.byteLength(text);
  const count = Math.min(bench.runs, 5);
  const pretty: { milliseconds: number; bytes: number }[] = [];
  const plain: number[] = [];
  const file = path.join(sandbox.root, 'answer.txt');
  for (let index = 0; index < count; index++) {
    pretty.push(await atTerminal(['query', '--new', ...model, 'long answer'], sandbox.workspace, env));
    plain.push(await toFile(['query', '--new', '-F', 'text', ...model, 'long answer'], sandbox.workspace, env, file));
  }
  const plainBytes = statSync(file).size;
  const time = median(pretty.map((run) => run.milliseconds));
  const bytes = median(pretty.map((run) => run.bytes));
  bench.report({
    figure: `20,000-word answer at a 100×30 terminal: total (median of ${count})`,
    value: `${ms(time)} (${(time / median(plain)).toFixed(2)}× text mode)`,
    floor: `-F text to a file: ${ms(median(plain))}`,
    goal: '≤ 1.5× text mode',
  });
  bench.report({
    figure: '20,000-word answer at a terminal: bytes written',
    value: `${(bytes / 1024).toFixed(0)} KiB (${(bytes / answerBytes).toFixed(2)}× the answer)`,
    floor: `the answer: ${(answerBytes / 1024).toFixed(0)} KiB; -F text wrote ${(plainBytes / 1024).toFixed(0)} KiB`,
    goal: '≤ 3× the answer',
  });
  sandbox.cleanup();
};
export default terminal;
