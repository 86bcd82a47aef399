// Real headless Chromium for the browser tests (point it at startSignet from live-server.ts).
// Without the browser: skipped with a printed reason locally, a failure in CI.
import { existsSync } from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { skipUnlessAvailable } from './services.ts';

export const CHROMIUM_PATH = process.env.SIGNET_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** node:test `skip` value for browser suites. */
export function chromiumSkip(): string | false {
  return skipUnlessAvailable('Chromium', existsSync(CHROMIUM_PATH) ? undefined : `no browser at ${CHROMIUM_PATH} (apt-get install chromium)`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** axe-core's violations on the current page (every rule axe runs by default). */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  if (results.passes.length === 0) throw new Error('axe-core checked nothing on this page');
  return results.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
