/**
 * A real browser for the tests of `jp web`: Debian's Chromium (/usr/bin/chromium, which CI installs
 * with apt-get) driven through playwright-core, headless, with a fresh profile each launch; never a
 * downloaded browser. Closed after the test file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const chromiumPath = process.env.JP_TEST_CHROMIUM ?? '/usr/bin/chromium';

const flags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser context with its own fresh user-data directory; closed (and removed) after the file. */
export async function launchBrowser(
  options: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'jp-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: flags,
    colorScheme: options.colorScheme ?? 'light',
    viewport: options.viewport ?? { width: 1200, height: 800 },
  });
  after(async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

export type { Browser, BrowserContext };
