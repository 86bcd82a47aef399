// Real headless Chromium for the browser tests, and a real listening Signet to point it at.
// Without the browser: skipped with a printed reason locally, a failure in CI.
import { existsSync } from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { testApp, type TestApp } from './app.ts';
import type { TestDatabase } from './databases.ts';
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

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export type RunningSignet = TestApp & { baseUrl: string; altBaseUrl: string; close(): Promise<void> };

/** The real app listening on 127.0.0.1 at a free port; the second host is `localhost` on the same port. */
export async function startSignet(database: TestDatabase, env: Record<string, string> = {}): Promise<RunningSignet> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const altBaseUrl = `http://localhost:${port}`;
  const running = await testApp(database, { SIGNET_BASE_URL: baseUrl, SIGNET_ALT_BASE_URL: altBaseUrl, SIGNET_LOG_LEVEL: 'warn', ...env });
  await running.app.listen({ host: '127.0.0.1', port });
  return { ...running, baseUrl, altBaseUrl, close: () => running.app.close() };
}

/** axe-core's violations on the current page (every rule axe runs by default). */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  if (results.passes.length === 0) throw new Error('axe-core checked nothing on this page');
  return results.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
