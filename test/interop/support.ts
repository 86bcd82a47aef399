// The browser step of the interop tests: real Chromium signs in and consents on Signet's pages,
// found by the operator contract's landmarks; the callback server records where it lands.
import type { Browser } from 'playwright-core';
import type { CallbackServer } from '../helpers/callback-server.ts';

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
    const signIn = page.getByRole('button', { name: 'Sign in', exact: true });
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
