/**
 * A real browser for the tests and the bench of `jp web`: Debian's Chromium (/usr/bin/chromium,
 * which CI installs with apt-get) driven through playwright-core, headless, with a fresh profile each
 * launch; never a downloaded browser. Whoever launches one closes it (`close()` removes the profile).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

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

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A browser context with its own fresh user-data directory. */
export async function launchBrowser(
  options: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } } = {},
): Promise<TestBrowser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'jp-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: flags,
    colorScheme: options.colorScheme ?? 'light',
    viewport: options.viewport ?? { width: 1200, height: 800 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
