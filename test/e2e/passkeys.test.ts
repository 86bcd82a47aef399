// Passkeys in real headless Chromium (issue 19: "Passkeys in a real browser"), against a real
// listening Signet, with a virtual authenticator from the DevTools protocol (ctap2, internal transport,
// resident keys, user verification): add a passkey on /account, sign out, sign in with "Sign in with a
// passkey" without typing an e-mail, finish an authorization flow through to the application's
// callback; remove the passkey and see sign-in refuse it. The pages are checked with axe at 390 px,
// and screenshots in English and Chinese go to /tmp/passkey-shots/.
//
// WebAuthn needs a host name for the RP ID (an IP address cannot be one), so the browser uses the
// second served host, http://localhost:PORT (a secure context like https).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import { listPasskeys } from '../../src/accounts/factors/passkeys.ts';
import * as clients from '../../src/clients/clients.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { startCallbackServer, type CallbackServer } from '../helpers/callback-server.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';

const PASSWORD = 'a long passkey person password';
const PHONE = { width: 390, height: 844 };
const SHOTS = process.env.SIGNET_PASSKEY_SHOTS ?? '/tmp/passkey-shots';

describe('browser: passkeys in Chromium with a virtual authenticator', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let callback: CallbackServer;
  let browser: Browser;
  let clientId: string;
  let base: string;
  let people = 0;
  const contexts: BrowserContext[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    database = await sqliteDatabase();
    signet = await startSignet(database);
    base = signet.altBaseUrl;
    callback = await startCallbackServer();
    ({
      client: { clientId },
    } = await clients.registerClient(database.db, signet.clock, signet.deps.keys.tokenHash, { name: 'Passkey App', redirectUris: [callback.url], scopes: ['openid', 'profile', 'email'] }));
    browser = await launchChromium();
  });

  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await signet?.close();
    await callback?.close();
    await database?.dispose();
  });

  async function newPerson(): Promise<{ sub: string; email: string }> {
    const email = `passkey-${++people}@example.com`;
    const { sub } = await accounts.createAccount(database.db, signet.clock, { email, name: `Passkey Person ${people}`, password: PASSWORD, emailVerified: true });
    return { sub, email };
  }

  /**
   * A phone-sized page whose browser has a platform authenticator: resident keys, user verification,
   * always approved. The virtual authenticator answers an autofill offer (conditional mediation) at
   * once, so unless `autofill` is asked for, the page is told the browser has none — then only the
   * button starts a passkey sign-in, as in a browser without passkey autofill.
   */
  async function pageWithAuthenticator(locale = 'en-US', options: { autofill?: boolean } = {}): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
    const context = await browser.newContext({ locale, viewport: PHONE });
    contexts.push(context);
    if (!options.autofill) {
      await context.addInitScript(() => {
        Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: async () => false });
      });
    }
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return { page, cdp, authenticatorId };
  }

  async function signInWithPassword(page: Page, email: string): Promise<void> {
    await page.goto(`${base}/signin`);
    await page.getByLabel('Email or phone').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${base}/account`);
  }

  async function signOut(page: Page): Promise<void> {
    await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/signin?signed_out=1`);
  }

  async function addPasskey(page: Page, name: string, labels = { name: 'Passkey name', add: 'Add a passkey' }): Promise<void> {
    await page.getByLabel(labels.name).fill(name);
    await page.getByRole('button', { name: labels.add }).click();
    await page.waitForURL(`${base}/account?saved=passkey#passkeys-heading`);
  }

  async function noSidewaysScroll(page: Page, what: string): Promise<void> {
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${what}: no horizontal scroll at 390 px`);
  }

  function authorizeUrl(state: string): string {
    return `${base}/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: callback.url, response_type: 'code', scope: 'openid profile email', state })}`;
  }

  async function passkeySection(page: Page): Promise<ReturnType<Page['locator']>> {
    const section = page.locator('section[aria-labelledby="passkeys-heading"]');
    await section.scrollIntoViewIfNeeded();
    return section;
  }

  test('add a passkey on /account, sign out, "Sign in with a passkey" without typing an e-mail, and finish an authorization flow through to the callback; then remove it and sign-in refuses it', async () => {
    const person = await newPerson();
    const { page, cdp, authenticatorId } = await pageWithAuthenticator();
    await signInWithPassword(page, person.email);

    // Add: named by the person; the list shows it with its dates.
    await addPasskey(page, 'Work laptop');
    await page.getByText('Your passkey is added. You can sign in with it from now on.').waitFor();
    const section = await passkeySection(page);
    const item = section.getByRole('listitem').filter({ hasText: 'Work laptop' });
    assert.equal(await item.count(), 1, 'the new passkey is listed under its name');
    assert.ok(await item.getByText('Not used yet').isVisible(), 'not used yet');
    const stored = await listPasskeys(database.db, person.sub);
    assert.deepEqual(stored.map((p) => [p.name, p.rpId, p.lastUsedAt]), [['Work laptop', 'localhost', null]]);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1);
    assert.equal(credentials[0]!.isResidentCredential, true, 'a discoverable credential (residentKey required)');
    assert.deepEqual(await accessibilityViolations(page), [], '/account with a passkey');
    await noSidewaysScroll(page, '/account');
    await section.screenshot({ path: `${SHOTS}/account-passkeys-en.png` });

    // Sign out; an application sends the person to sign in; the passkey alone signs in.
    await signOut(page);
    await page.goto(authorizeUrl('passkey-state-1'));
    await page.waitForURL((url) => url.pathname === '/signin' && url.searchParams.has('request'));
    const identifier = page.getByLabel('Email or phone');
    assert.equal(await identifier.getAttribute('autocomplete'), 'username webauthn', 'the identifier field offers passkey autofill (conditional mediation)');
    const passkeyButton = page.getByRole('button', { name: 'Sign in with a passkey' });
    await passkeyButton.waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], '/signin with the passkey button');
    await noSidewaysScroll(page, '/signin');
    await page.screenshot({ path: `${SHOTS}/signin-en.png`, fullPage: true });
    await passkeyButton.click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.equal(await page.getByLabel('Email or phone').count(), 0, 'consent, not the sign-in form');
    const landed = callback.next();
    await page.getByRole('button', { name: 'Allow' }).click();
    const url = await landed;
    assert.equal(url.searchParams.get('state'), 'passkey-state-1');
    assert.equal(url.searchParams.get('code')?.length, 44, 'an authorization code at the callback');

    // The sign-in counted: last used recorded, the audit trail has passkey.signin for this application.
    const [used] = await listPasskeys(database.db, person.sub);
    assert.ok(used?.lastUsedAt !== null && used?.lastUsedAt !== undefined, 'last used is recorded');
    const events = await database.db.selectFrom('audit_events').select(['type', 'outcome', 'client_id']).where('sub', '=', person.sub).orderBy('id').execute();
    assert.deepEqual(
      events.filter((e) => e.type.startsWith('passkey.')).map((e) => [e.type, e.outcome, e.client_id]),
      [
        ['passkey.added', 'success', null],
        ['passkey.signin', 'success', clientId],
      ],
    );

    // Remove (after the confirmation), then the same authenticator is refused at sign-in.
    await page.goto(`${base}/account`);
    const listed = (await passkeySection(page)).getByRole('listitem').filter({ hasText: 'Work laptop' });
    assert.equal(await listed.getByText('Not used yet').count(), 0, 'the list shows when it was last used');
    await listed.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('button', { name: 'Remove passkey' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'the removal confirmation');
    await page.screenshot({ path: `${SHOTS}/account-remove-confirm-en.png` });
    await page.getByRole('button', { name: 'Remove passkey' }).click();
    await page.getByText('The passkey is removed. It can no longer sign in to your account.').waitFor();
    assert.deepEqual(await listPasskeys(database.db, person.sub), []);
    await signOut(page);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('That passkey is not registered for an account here').waitFor();
    await page.screenshot({ path: `${SHOTS}/signin-refused-en.png`, fullPage: true });
    // The page tells the browser the passkey is gone (signalUnknownCredential); Chromium drops it.
    for (let tries = 0; (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length > 0; tries++) {
      assert.ok(tries < 50, 'the authenticator no longer holds the removed passkey');
      await page.waitForTimeout(100);
    }
    assert.equal(new URL(page.url()).pathname, '/signin', 'still on the sign-in page');
    assert.equal(await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).count(), 0, 'not signed in');
    await page.goto(`${base}/account`);
    await page.waitForURL((u) => u.pathname === '/signin', { timeout: 5000 });
    const refused = await database.db.selectFrom('audit_events').select(['outcome', 'detail']).where('type', '=', 'passkey.signin').where('outcome', '=', 'failure').execute();
    assert.ok(refused.length >= 1, 'the refusal is in the audit trail');
    assert.deepEqual(new Set(refused.map((e) => JSON.parse(e.detail ?? '{}').reason)), new Set(['unknown_credential']));
    const notices = await database.db.selectFrom('notifications').select(['category', 'title']).where('sub', '=', person.sub).orderBy('created_at').execute();
    assert.deepEqual(notices.map((n) => [n.category, n.title]), [
      ['security', 'A passkey was added to your account'],
      ['security', 'Passkey App can now sign you in'],
      ['security', 'A passkey was removed from your account'],
    ]);
  });

  test('passkey autofill on the identifier field (conditional mediation): choosing the passkey there signs in, nothing typed', async () => {
    const person = await newPerson();
    const { page } = await pageWithAuthenticator('en-US', { autofill: true });
    await signInWithPassword(page, person.email);
    await addPasskey(page, 'Autofill phone');
    await signOut(page);
    // The virtual authenticator picks its passkey from the autofill offer as soon as the page makes it.
    await page.waitForURL(`${base}/account`);
    assert.equal(await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).count(), 1, 'signed in');
    const [used] = await listPasskeys(database.db, person.sub);
    assert.ok(used?.lastUsedAt !== null, 'last used is recorded');
  });

  test('a passkey prompt that ends without a passkey (cancelled: this browser holds none) is said in words on the sign-in page, not an error page', async () => {
    const { page } = await pageWithAuthenticator();
    await page.goto(`${base}/signin`);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('The passkey request was cancelled or timed out. Try again when you are ready.').waitFor();
    assert.equal(new URL(page.url()).pathname, '/signin');
    assert.ok(await page.getByLabel('Email or phone').isVisible(), 'password sign-in is still there');
  });

  test('Chinese pages: the passkey list and the sign-in page in zh-CN, axe clean at 390 px', async () => {
    const person = await newPerson();
    const { page } = await pageWithAuthenticator('zh-CN');
    await page.goto(`${base}/signin`);
    await page.getByLabel('邮箱或手机号').fill(person.email);
    await page.getByLabel('密码', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: '登录', exact: true }).click();
    await page.waitForURL(`${base}/account`);
    await addPasskey(page, '我的手机', { name: '通行密钥名称', add: '添加通行密钥' });
    await page.getByText('你的通行密钥已添加').waitFor();
    const section = await passkeySection(page);
    assert.equal(await section.getByRole('heading', { name: '通行密钥' }).count(), 1);
    assert.ok(await section.getByRole('heading', { name: '我的手机' }).isVisible());
    assert.deepEqual(await accessibilityViolations(page), [], '/account in Chinese');
    await noSidewaysScroll(page, '/account (zh)');
    await section.screenshot({ path: `${SHOTS}/account-passkeys-zh.png` });
    await page.getByRole('banner').getByRole('button', { name: '退出登录' }).click();
    await page.getByRole('button', { name: '使用通行密钥登录' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], '/signin in Chinese');
    await noSidewaysScroll(page, '/signin (zh)');
    await page.screenshot({ path: `${SHOTS}/signin-zh.png`, fullPage: true });
    await page.getByRole('button', { name: '使用通行密钥登录' }).click();
    await page.waitForURL(`${base}/account`);
  });

  test('issue 19: "a passkey may also be used as the second step after a password" — password, then "Use a passkey" on the second step, signed in; axe clean at 390 px', async () => {
    const person = await newPerson();
    const { page } = await pageWithAuthenticator();
    await signInWithPassword(page, person.email);
    await addPasskey(page, 'Phone');
    await signOut(page);
    await page.getByLabel('Email or phone').fill(person.email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${base}/signin/two-step`);
    const use = page.getByRole('button', { name: 'Use a passkey' });
    await use.waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], '/signin/two-step with a passkey');
    await noSidewaysScroll(page, '/signin/two-step');
    await page.screenshot({ path: `${SHOTS}/second-step-passkey-en.png`, fullPage: true });
    await use.click();
    await page.waitForURL(`${base}/account`);
    assert.ok(await page.getByRole('heading', { name: 'Passkeys' }).isVisible());
  });
});
