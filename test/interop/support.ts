// The browser step of the interop tests: real Chromium signs in and consents on Signet's pages,
// found by the operator contract's landmarks; a local callback server records where it lands.
import http from 'node:http';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { skipUnlessAvailable } from '../helpers/services.ts';

export const CHROMIUM = process.env.SIGNET_TEST_CHROMIUM ?? '/usr/bin/chromium';

export const chromiumSkip = () => skipUnlessAvailable('Chromium', existsSync(CHROMIUM) ? undefined : `no browser at ${CHROMIUM} (apt-get install chromium)`);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export type CallbackServer = { url: string; next(): Promise<URL>; close(): Promise<void> };

/** A client's redirect URI: answers 200 and hands each callback URL it receives to the waiting test. */
export async function callbackServer(): Promise<CallbackServer> {
  const waiting: Array<(url: URL) => void> = [];
  const received: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    // The browser also asks for /favicon.ico; only the callback path is a callback.
    if (url.pathname !== '/callback') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('callback received');
    const waiter = waiting.shift();
    if (waiter) waiter(url);
    else received.push(url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => {
      const ready = received.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Opens the authorization URL in a fresh browser context, signs in if asked, allows if asked, and
 * returns the callback URL the browser landed on.
 */
export async function authorizeInBrowser(browser: Browser, authorizationUrl: URL, callback: CallbackServer, person: { login: string; password: string }): Promise<URL> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const landed = callback.next();
    await page.goto(authorizationUrl.href);
    const signIn = page.getByRole('button', { name: 'Sign in' });
    const allow = page.getByRole('button', { name: 'Allow' });
    await signIn.or(allow).first().waitFor({ timeout: 15000 });
    if (await signIn.isVisible()) {
      await page.getByLabel('Email or phone').fill(person.login);
      await page.getByLabel('Password').fill(person.password);
      await signIn.click();
    }
    const outcome = await Promise.race([landed.then(() => 'landed' as const), allow.waitFor({ timeout: 15000 }).then(() => 'consent' as const)]);
    if (outcome === 'consent') await allow.click();
    return await landed;
  } finally {
    await context.close();
  }
}
