/**
 * `jp web`: the page's time from a click on a conversation of 10,000 events to its last block
 * painted (Chromium, headless), beside the same for a conversation of 10 events in the same run;
 * and the peak memory of `jp web` serving the list of 20 live runs, beside an idle `node`.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { launchBrowser } from '../../test/support/browser.ts';
import { createSandbox, runJp, type Sandbox, testProvider } from '../../test/support/jp.ts';
import { startWeb } from '../../test/support/web.ts';
import { median, megabytes, ms, peakKilobytes, type Section } from '../support.ts';

/** A conversation of about `count` events: one real turn, then copies of its content events. */
async function conversationOf(sandbox: Sandbox, count: number, title: string): Promise<string> {
  const script = testProvider(
    sandbox,
    {
      steps: [
        {
          parts: [
            { text: 'Here is **some markdown** with `code`:\n\n```ts\nconst x = 1;\n```\n\n' },
            { tool_call: { name: 'fs_list_files', arguments: {} } },
          ],
        },
        { parts: [{ text: 'A closing paragraph.' }] },
      ],
    },
    `${title}.json`,
  );
  const result = await runJp(sandbox, ['query', '--new', ...script, title]);
  if (result.code !== 0) throw new Error(result.stderr);
  const listed = JSON.parse((await runJp(sandbox, ['conversation', 'ls', '--json'])).stdout) as {
    id: string;
    title: string;
  }[];
  const id = listed.find((conversation) => conversation.title === title)!.id;
  const file = path.join(sandbox.workspace, '.jp', 'conversations', id, 'events.ndjson');
  const turn = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line && !line.includes('"system_prompt"') && !line.includes('"config_delta"'));
  let written = turn.length;
  const lines: string[] = [];
  while (written < count) {
    for (const line of turn) lines.push(line);
    written += turn.length;
  }
  appendFileSync(file, lines.length > 0 ? lines.join('\n') + '\n' : '');
  return id;
}

const web: Section = async (bench) => {
  const sandbox = createSandbox();
  const idle = await bench.idleNodeKilobytes();
  await conversationOf(sandbox, 10_000, 'long');
  await conversationOf(sandbox, 10, 'short');
  const running = await startWeb(sandbox);
  const browser = await launchBrowser();
  const page = await browser.context.newPage();
  await page.goto(running.url);
  const paint = async (title: string): Promise<number> => {
    await page.reload();
    await page.locator('.run', { hasText: title }).first().waitFor();
    // A string, not a function: the bench's TypeScript loader would wrap a function's names.
    return page.evaluate(`(async () => {
      const button = [...document.querySelectorAll('.run')].find(
        (candidate) => candidate.querySelector('.title')?.textContent === ${JSON.stringify(title)},
      );
      const started = performance.now();
      button.click();
      // The last block of the conversation is on the page, then painted.
      await new Promise((resolve) => {
        const check = () => {
          const blocks = document.querySelectorAll('#blocks .block.assistant');
          const last = blocks[blocks.length - 1];
          if (last && last.textContent.includes('A closing paragraph.')) resolve();
          else requestAnimationFrame(check);
        };
        check();
      });
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      return performance.now() - started;
    })()`);
  };
  const runs = Math.min(bench.runs, 7);
  const long: number[] = [];
  const short: number[] = [];
  for (let index = 0; index < runs; index++) {
    short.push(await paint('short'));
    long.push(await paint('long'));
  }
  bench.report({
    figure: `jp web: click to the last block painted, 10,000-event conversation (median of ${runs})`,
    value: ms(median(long)),
    floor: `10-event conversation: ${ms(median(short))}`,
    goal: '≤ 1 s',
  });
  await running.stop();

  // 20 live runs, each waiting in a command until the bench ends.
  const live = createSandbox();
  const script = testProvider(live, {
    steps: [
      {
        parts: [
          { tool_call: { name: 'run_command', arguments: { command: 'while [ ! -f release ]; do sleep 0.2; done' } } },
        ],
      },
      { parts: [{ text: 'done' }] },
    ],
  });
  for (let index = 0; index < 20; index++) {
    const started = await runJp(live, [
      'query',
      '--new',
      '--detach',
      ...script,
      '-c',
      'conversation.tools.run_command.run="unattended"',
      `live run ${index}`,
    ]);
    if (started.code !== 0) throw new Error(started.stderr);
  }
  const serving = await startWeb(live);
  const watcher = await browser.context.newPage();
  await watcher.goto(serving.url);
  await watcher.waitForFunction(() => document.querySelectorAll('.run .state.running').length === 20, undefined, {
    timeout: 120_000,
  });
  // One of them opened too, as a person would.
  await watcher.locator('.run').first().click();
  await watcher.locator('.block.user').first().waitFor();
  const peak = peakKilobytes(serving.process.pid!);
  bench.report({
    figure: 'jp web: peak RSS serving the page with 20 live runs (one opened)',
    value: megabytes(peak),
    floor: `idle node: ${megabytes(idle)}`,
    goal: '≤ 120 MB',
  });
  await serving.stop();
  live.write('release', '');
  await browser.close();
  // The runs end once released; their workspaces go after them.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  live.cleanup();
  sandbox.cleanup();
};
export default web;
