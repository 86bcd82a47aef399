// The inbox and the notification settings in real headless Chromium against a real listening Signet.
// Notifications are recorded straight into the database, as `signet worker` records them, so they
// reach the page through the live stream (or, with EventSource taken away, through polling).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import * as clients from '../../src/clients/clients.ts';
import { recordConsent } from '../../src/consent/grants.ts';
import type { NotificationEvent } from '../../src/notifications/messages.ts';
import { recordNotification } from '../../src/notifications/notifications.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';

const PASSWORD = 'a long inbox password';

describe('browser: /inbox, the unread badge and /account notification settings in Chromium', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let browser: Browser;
  let people = 0;
  const contexts: BrowserContext[] = [];

  before(async () => {
    database = await sqliteDatabase();
    signet = await startSignet(database);
    browser = await launchChromium();
  });

  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await signet?.close();
    await database?.dispose();
  });

  type Person = { sub: string; email: string; notify(event: NotificationEvent, options?: { link?: string; clientId?: string }): Promise<string> };

  /** A new person per test, so unread counts and the per-person stream cap never cross tests. */
  async function newPerson(): Promise<Person> {
    const email = `inbox-${++people}@example.com`;
    const { sub } = await accounts.createAccount(database.db, signet.clock, { email, name: `Inbox Person ${people}`, password: PASSWORD });
    return {
      sub,
      email,
      notify: (event, options = {}) =>
        database.db.transaction().execute((trx) => recordNotification(trx, database.dialect, Date.now(), { sub, locale: 'en', event, ...options })),
    };
  }

  async function signedInPage(person: Person, path: string, options: { viewport?: { width: number; height: number }; withoutEventSource?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({ locale: 'en-US', ...(options.viewport ? { viewport: options.viewport } : {}) });
    contexts.push(context);
    const page = await context.newPage();
    if (options.withoutEventSource) await page.addInitScript(() => Reflect.deleteProperty(window, 'EventSource'));
    await page.goto(`${signet.baseUrl}${path}`);
    assert.equal(new URL(page.url()).pathname, '/signin', 'not signed in: sent to sign in');
    await page.getByLabel('Email or phone').fill(person.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.pathname === path);
    // Marks this document: a reload or navigation would lose the mark.
    await page.evaluate(() => document.documentElement.setAttribute('data-test-loaded', 'once'));
    return page;
  }

  const notReloaded = (page: Page) => page.evaluate(() => document.documentElement.getAttribute('data-test-loaded') === 'once');
  const finished = (fileName: string): NotificationEvent => ({ category: 'translation', outcome: 'finished', fileName });
  const badge = (page: Page, name: string) => page.getByRole('link', { name, exact: true });

  test('an open /inbox shows a new notification at the top and the header badge changes, without a reload', async () => {
    const person = await newPerson();
    await person.notify(finished('earlier.pdf'));
    const page = await signedInPage(person, '/inbox');
    await badge(page, 'Inbox, 1 unread').waitFor();
    await person.notify(finished('live.pdf'), { link: '/tasks' });
    const live = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Translation of live.pdf finished' }) });
    await live.waitFor({ timeout: 10_000 });
    await badge(page, 'Inbox, 2 unread').waitFor();
    assert.ok(await notReloaded(page), 'no reload');
    const titles = await page.locator('.notification-title').allTextContents();
    assert.deepEqual(titles, ['Translation of live.pdf finished', 'Translation of earlier.pdf finished'], 'newest first');
    assert.equal(await live.getByRole('link', { name: 'Translation of live.pdf finished' }).getAttribute('href'), '/tasks');
    assert.equal(await live.locator('.notification-state').textContent(), 'Unread');
    // The live region is emptied and then filled on the next tick (so a screen reader hears a repeat): wait for it.
    await page.waitForFunction((text) => document.getElementById('inbox-announce')?.textContent === text, 'New notification: Translation of live.pdf finished', { timeout: 10_000 });

    // Mark as read and Mark all as read, through the API, in place.
    await live.getByRole('button', { name: 'Mark as read' }).click();
    await badge(page, 'Inbox, 1 unread').waitFor();
    assert.equal(await live.locator('.notification-state').textContent(), 'Read');
    assert.equal(await live.getByRole('button', { name: 'Mark as read' }).count(), 0);
    await page.getByRole('button', { name: 'Mark all as read' }).click();
    await badge(page, 'Inbox, no unread notifications').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Mark as read' }).count(), 0);
    assert.ok(await page.getByRole('button', { name: 'Mark all as read' }).isDisabled());
    assert.ok(await notReloaded(page), 'still no reload');
    await page.reload();
    assert.deepEqual(await page.locator('.notification-state').allTextContents(), ['Read', 'Read'], 'the server agrees');
  });

  test('"an unread badge in the page header on every signed-in page" follows live on /account too', async () => {
    const person = await newPerson();
    const page = await signedInPage(person, '/account');
    await badge(page, 'Inbox, no unread notifications').waitFor();
    assert.ok(await page.locator('#inbox-badge .badge').isHidden(), 'no number at zero');
    await person.notify(finished('account-page.pdf'));
    await badge(page, 'Inbox, 1 unread').waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#inbox-badge .badge').textContent(), '1');
    assert.ok(await notReloaded(page));
    await badge(page, 'Inbox, 1 unread').click();
    await page.waitForURL((url) => url.pathname === '/inbox');
  });

  test('"an unread badge": the count is the server\'s — when the live stream brings the new count before the answer to Mark as read, the badge is not lowered a second time', async () => {
    const person = await newPerson();
    for (const name of ['one.pdf', 'two.pdf', 'three.pdf']) await person.notify(finished(name));
    const page = await signedInPage(person, '/inbox');
    await badge(page, 'Inbox, 3 unread').waitFor();
    // The answer to Mark as read is held until the stream has delivered the lower count (the order a
    // busy machine produces now and then), then released.
    await page.route('**/api/v1/notifications/*/read', async (route) => {
      const response = await route.fetch();
      await badge(page, 'Inbox, 2 unread').waitFor({ timeout: 10_000 });
      await route.fulfill({ response });
    });
    await page.locator('.notification').first().getByRole('button', { name: 'Mark as read' }).click();
    await page.locator('.notification').first().locator('.notification-state', { hasText: 'Read' }).waitFor();
    await page.waitForFunction(() => document.getElementById('inbox-announce')?.textContent !== '');
    assert.equal(await page.locator('#inbox-badge').getAttribute('aria-label'), 'Inbox, 2 unread');
    assert.equal(await page.locator('#inbox-badge .badge').textContent(), '2');
  });

  test('"with polling as fallback": with EventSource removed from the page, polling shows a new notification and the badge', { timeout: 60_000 }, async () => {
    const person = await newPerson();
    const page = await signedInPage(person, '/inbox', { withoutEventSource: true });
    assert.equal(await page.evaluate(() => 'EventSource' in window), false);
    await person.notify(finished('polled.pdf'));
    await page.getByRole('heading', { name: 'Translation of polled.pdf finished' }).waitFor({ timeout: 25_000 });
    await badge(page, 'Inbox, 1 unread').waitFor({ timeout: 25_000 });
    assert.ok(await notReloaded(page));
  });

  test('/account: Mute, then Unmute, per authorized application; the preference grid saves; axe finds 0 violations on /inbox and /account; screenshots', async () => {
    const person = await newPerson();
    const { client } = await clients.registerClient(database.db, signet.clock, signet.deps.keys.tokenHash, { name: 'Screenshot App', redirectUris: ['https://app.example/cb'], scopes: ['openid', 'profile'] });
    await recordConsent(database.db, signet.clock, person.sub, client.clientId, ['openid', 'profile'], ['openid', 'profile'], { dialect: database.dialect, locale: 'en' });
    await person.notify(finished('quarterly-report.pdf'), { link: '/tasks' });
    await person.notify({ category: 'docparse', outcome: 'failed', fileName: 'scan.pdf', error: 'The PDF has no text layer; run it through OCR first.' }, { link: '/tasks' });
    const page = await signedInPage(person, '/inbox');
    await page.locator('.notification').nth(2).getByRole('button', { name: 'Mark as read' }).click();
    await badge(page, 'Inbox, 2 unread').waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], '/inbox');
    await page.screenshot({ path: '/tmp/inbox.png', fullPage: true });

    await page.goto(`${signet.baseUrl}/account`);
    const app = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Screenshot App' }) });
    await app.getByRole('button', { name: 'Mute', exact: true }).click();
    await page.getByText('Screenshot App is muted.').waitFor();
    assert.equal(await app.getByRole('button', { name: 'Unmute' }).count(), 1);
    assert.equal(await app.getByRole('button', { name: 'Mute', exact: true }).count(), 0);

    const grid = page.getByRole('table', { name: 'Notifications' });
    assert.ok(await grid.getByRole('checkbox', { name: 'Translations In-app' }).isChecked());
    assert.equal(await grid.getByRole('checkbox', { name: 'Translations E-mail' }).isChecked(), false);
    for (const name of ['Security Browser push Not available', 'Security Mobile push Not available']) assert.ok(await grid.getByRole('checkbox', { name }).isDisabled(), name);
    await grid.getByRole('checkbox', { name: 'Security E-mail' }).check();
    await page.getByRole('button', { name: 'Save preferences' }).click();
    await page.getByText('Your notification preferences are saved.').waitFor();
    assert.ok(await page.getByRole('table', { name: 'Notifications' }).getByRole('checkbox', { name: 'Security E-mail' }).isChecked());
    assert.deepEqual(await accessibilityViolations(page), [], '/account');
    await page.screenshot({ path: '/tmp/account.png', fullPage: true });

    await app.getByRole('button', { name: 'Unmute' }).click();
    await page.getByText('Screenshot App is no longer muted.').waitFor();
  });

  test('/account and /inbox at 390 px wide have no horizontal scroll', async () => {
    const person = await newPerson();
    const { client } = await clients.registerClient(database.db, signet.clock, signet.deps.keys.tokenHash, { name: 'An Application With A Rather Long Name', redirectUris: ['https://app.example/cb'], scopes: ['openid'] });
    await recordConsent(database.db, signet.clock, person.sub, client.clientId, ['openid'], ['openid'], { dialect: database.dialect, locale: 'en' });
    await person.notify(finished(`${'very-long-file-name-'.repeat(6)}.pdf`));
    const page = await signedInPage(person, '/account', { viewport: { width: 390, height: 844 } });
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.equal(await overflow(), 0, '/account');
    await page.screenshot({ path: '/tmp/account-390.png', fullPage: true });
    await page.goto(`${signet.baseUrl}/inbox`);
    assert.equal(await overflow(), 0, '/inbox');
  });
});
