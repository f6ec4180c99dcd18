// Makes the screenshots of `jp web` in docs/web/ (README "In a browser"): a few runs of the test
// provider in a throwaway workspace, the page in Chromium at desktop and phone width, light and dark.
// Run: node --import tsx scripts/web-screenshots.ts
import path from 'node:path';
import { launchBrowser } from '../test/support/browser.ts';
import { createSandbox, repositoryRoot, runJp, testProvider } from '../test/support/jp.ts';
import { startWeb } from '../test/support/web.ts';

const sandbox = createSandbox();
const output = path.join(repositoryRoot, 'docs', 'web');
const run = async (script: unknown, message: string, extra: string[] = []): Promise<void> => {
  const result = await runJp(sandbox, [
    'query',
    '--new',
    ...testProvider(sandbox, script, `${message.length}.json`),
    ...extra,
    message,
  ]);
  if (result.code !== 0 && result.code !== 4) throw new Error(result.stderr);
};
sandbox.write('src/parse.ts', 'export function parse(text: string) {\n  return JSON.parse(text);\n}\n');
await run(
  {
    steps: [
      {
        parts: [
          { reasoning: 'The parser throws on empty input; a guard fixes it.' },
          { text: 'The parser throws on **empty input**. I will add a guard:\n\n' },
          {
            tool_call: {
              name: 'fs_modify_file',
              arguments: {
                path: 'src/parse.ts',
                old_string: '  return JSON.parse(text);',
                new_string: "  if (text.trim() === '') return undefined;\n  return JSON.parse(text);",
              },
            },
          },
        ],
      },
      {
        parts: [
          {
            text: 'Done: `parse("")` now returns `undefined`.\n\n| input | before | after |\n|---|---|---|\n| `""` | throws | `undefined` |',
          },
        ],
      },
    ],
  },
  'Why does parse() throw on an empty file?',
  ['-c', 'conversation.tools.fs_modify_file.run="unattended"'],
);
await run(
  {
    steps: [
      {
        parts: [
          { text: 'I need to run the test suite.\n\n' },
          { tool_call: { name: 'run_command', arguments: { command: 'npm test -- --grep parse' } } },
        ],
      },
      { parts: [{ text: 'All green.' }] },
    ],
  },
  'Run the parser tests',
  ['--detach'],
);
await run(
  { steps: [{ parts: [{ text: 'Here is a summary of the changes since v1.2:\n\n- faster start-up\n- `jp web`\n' }] }] },
  'Summarise the changelog',
);
await new Promise((resolve) => setTimeout(resolve, 3000));
const web = await startWeb(sandbox);
for (const [name, options] of [
  ['desktop-light', { colorScheme: 'light', viewport: { width: 1280, height: 760 } }],
  ['desktop-dark', { colorScheme: 'dark', viewport: { width: 1280, height: 760 } }],
  ['phone', { colorScheme: 'light', viewport: { width: 390, height: 780 } }],
] as const) {
  const browser = await launchBrowser(options);
  const page = await browser.context.newPage();
  await page.goto(web.url);
  await page
    .locator('.run', { hasText: 'Run the parser tests' })
    .locator('.state.waiting-for-input')
    .waitFor({ timeout: 30_000 });
  if (name === 'phone') await page.screenshot({ path: path.join(output, 'phone-list.png') });
  const target = name === 'desktop-dark' ? 'Why does parse()' : 'Run the parser tests';
  await page.locator('.run', { hasText: target }).click();
  await page.locator('#blocks .block').last().waitFor();
  if (name === 'desktop-dark') await page.locator('details.tool').first().click();
  await page.waitForTimeout(500);
  await page.screenshot({ path: path.join(output, `${name}.png`) });
  await browser.close();
}
await web.stop();
sandbox.cleanup();
