// Chromium for the browser tests: Debian's /usr/bin/chromium (or AFFINITY_CHROMIUM) driven by
// playwright-core, one launch per test file. Where it is absent the tests skip with the reason
// and the install command (.ci/run installs it). Screenshots go to screenshots/ (gitignored).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.AFFINITY_CHROMIUM ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'screenshots');

/** Why browser tests cannot run here, or undefined when they can. */
export const chromiumMissing: string | undefined = existsSync(CHROMIUM)
  ? undefined
  : `chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set AFFINITY_CHROMIUM to run the browser tests`;

export async function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Collects uncaught page errors and console errors of a page, for asserting none happened. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  return errors;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
