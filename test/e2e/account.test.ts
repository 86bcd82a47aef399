// Account self-service in real headless Chromium against a real listening Signet: the profile and
// userinfo, changing the password, the sessions list, the forgotten-password flow with the e-mail
// delivered by the worker's e-mail runner (run in-process) to a real SMTP server on loopback, e-mail
// verification, self-registration, and branding. Every new page is checked with axe and at 390 px.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import * as clients from '../../src/clients/clients.ts';
import { MINUTE } from '../../src/config/clock.ts';
import { issueAuthorizationCode } from '../../src/oauth/codes.ts';
import { SESSION_COOKIE } from '../../src/web/plugins/session.ts';
import { createLogger } from '../../src/web/logging.ts';
import { startEmailRunner } from '../../src/worker/email-runner.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { parseMail, startSmtp, type TestSmtp } from '../helpers/smtp.ts';

const PASSWORD = 'a long account password';
const PHONE = { width: 390, height: 844 };
const BRAND = { SIGNET_PRODUCT_NAME: 'Acme ID', SIGNET_LOGO_URL: 'https://static.acme.example/logo.png', SIGNET_ACCENT_COLOR: '#7a1fa2' };

type Site = { database: Awaited<ReturnType<typeof sqliteDatabase>>; signet: RunningSignet; runner: { stop(): Promise<void> } };

describe('browser: account self-service in Chromium', { skip: chromiumSkip() }, () => {
  let smtp: TestSmtp;
  let plain: Site;
  /** SIGNET_SIGNUP=open with the Acme branding */
  let branded: Site;
  let browser: Browser;
  let people = 0;
  const contexts: BrowserContext[] = [];

  async function startSite(env: Record<string, string>): Promise<Site> {
    const database = await sqliteDatabase();
    const signet = await startSignet(database, env);
    const runner = startEmailRunner(
      {
        db: database.db,
        dialect: database.dialect,
        clock: signet.clock,
        logger: createLogger('silent'),
        smtp: { url: smtp.url, from: 'Signet <signet@signet.test>' },
        baseUrl: new URL(signet.baseUrl),
        unsubscribeKey: signet.deps.keys.unsubscribe,
        accountMail: { tokenKey: signet.deps.keys.accountToken, productName: signet.deps.settings.brand.productName },
      },
      { pollMs: 20 },
    );
    return { database, signet, runner };
  }

  before(async () => {
    smtp = await startSmtp();
    plain = await startSite({});
    branded = await startSite({ SIGNET_SIGNUP: 'open', ...BRAND });
    browser = await launchChromium();
  });

  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    for (const site of [plain, branded]) {
      await site?.runner.stop();
      await site?.signet.close();
      await site?.database.dispose();
    }
    await smtp?.close();
  });

  async function newPerson(site: Site = plain, extra: { emailVerified?: boolean } = {}): Promise<{ sub: string; email: string }> {
    const email = `account-${++people}@example.com`;
    const { sub } = await accounts.createAccount(site.database.db, site.signet.clock, { email, name: `Person ${people}`, password: PASSWORD, emailVerified: extra.emailVerified ?? true });
    return { sub, email };
  }

  async function newPage(options: { viewport?: { width: number; height: number } } = {}): Promise<Page> {
    const context = await browser.newContext({ locale: 'en-US', ...(options.viewport ? { viewport: options.viewport } : {}) });
    contexts.push(context);
    return context.newPage();
  }

  async function signIn(page: Page, email: string, password = PASSWORD, site: Site = plain): Promise<void> {
    await page.goto(`${site.signet.baseUrl}/signin`);
    await page.getByLabel('Email or phone').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${site.signet.baseUrl}/account`);
  }

  async function noSidewaysScroll(page: Page, what: string): Promise<void> {
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${what}: no horizontal scroll at 390 px`);
  }

  /** The newest message to `to` whose text matches `pattern`, waiting for the worker to send it. */
  async function mailTo(to: string, pattern: RegExp, after = 0): Promise<{ text: string; subject: string; link: string }> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      for (const mail of smtp.received.slice(after).reverse()) {
        if (!mail.to.includes(to)) continue;
        const parsed = await parseMail(mail);
        const link = pattern.exec(parsed.text ?? '')?.[0];
        if (link) return { text: parsed.text ?? '', subject: parsed.subject ?? '', link };
      }
      if (Date.now() > deadline) throw new Error(`no e-mail to ${to} matching ${pattern}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** GET /oauth/userinfo with a token minted now through the token endpoint. */
  async function userinfo(site: Site, sub: string): Promise<Record<string, unknown>> {
    const { db, clock, keys } = site.signet.deps;
    const redirectUri = 'https://app.example/callback';
    const { client, clientSecret } = await clients.registerClient(db, clock, keys.tokenHash, { name: `Profile App ${sub}`, redirectUris: [redirectUri], scopes: ['openid', 'profile', 'email'] });
    const code = await issueAuthorizationCode(db, keys.tokenHash, clock, { clientId: client.clientId, sub, redirectUri, scope: 'openid profile email', codeChallenge: null, codeChallengeMethod: null });
    const token = await fetch(`${site.signet.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: client.clientId, client_secret: clientSecret! }),
    });
    assert.equal(token.status, 200);
    const { access_token: accessToken } = (await token.json()) as { access_token: string };
    const res = await fetch(`${site.signet.baseUrl}/oauth/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(res.status, 200);
    return (await res.json()) as Record<string, unknown>;
  }

  test('Profile: "change display name and picture URL (https only, or empty); userinfo reflects it at once"; /account has no axe violations and no sideways scroll at 390 px', async () => {
    const person = await newPerson();
    const page = await newPage({ viewport: PHONE });
    await signIn(page, person.email);
    assert.deepEqual(await accessibilityViolations(page), [], '/account');
    await noSidewaysScroll(page, '/account');
    assert.equal((await userinfo(plain, person.sub)).name, `Person ${people}`);

    await page.getByLabel('Display name').fill('Grace Hopper');
    await page.getByLabel('Picture URL').fill('http://pictures.example/grace.png');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('The picture URL must be an https:// address, or empty.').waitFor();
    assert.equal(await page.getByLabel('Display name').inputValue(), 'Grace Hopper', 'what was typed stays');
    assert.equal(await page.getByLabel('Picture URL').getAttribute('aria-invalid'), 'true');
    assert.equal((await userinfo(plain, person.sub)).name, `Person ${people}`, 'nothing saved');

    await page.getByLabel('Picture URL').fill('https://pictures.example/grace.png');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Your profile is saved.').waitFor();
    const claims = await userinfo(plain, person.sub);
    assert.equal(claims.name, 'Grace Hopper');
    assert.equal(claims.picture, 'https://pictures.example/grace.png');

    await page.getByLabel('Picture URL').fill('');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByText('Your profile is saved.').waitFor();
    assert.equal((await userinfo(plain, person.sub)).picture, '', 'an empty picture URL removes the picture');
  });

  test('API keys (issue 40): "Create API key shows the key once" (name, created, last used, expiry listed), the key works at the document APIs, Revoke stops it; axe clean, in en and zh-CN', async () => {
    const person = await newPerson();
    const page = await newPage({ viewport: PHONE });
    await signIn(page, person.email);
    const section = page.getByRole('region', { name: 'API keys' });
    await section.getByText('You have no API keys.').waitFor();
    await section.getByLabel('Key name', { exact: true }).fill('Open WebUI');
    await section.getByLabel('Expires after').selectOption('90');
    await section.getByRole('button', { name: 'Create API key' }).click();
    const shown = page.locator('[data-api-key]');
    await shown.waitFor();
    const key = (await shown.textContent())!.trim();
    assert.match(key, /^sgk_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(await accessibilityViolations(page), [], '/account with a new API key shown');
    await section.screenshot({ path: '/tmp/account-api-keys.png' });
    await noSidewaysScroll(page, '/account with a new API key');
    const listed = section.getByRole('listitem').filter({ hasText: 'Open WebUI' });
    for (const term of ['Created', 'Last used', 'Expires']) await listed.getByText(term, { exact: true }).waitFor();
    await listed.getByText('Not used yet').waitFor();

    const tasks = () => fetch(`${plain.signet.baseUrl}/api/v1/docparse/tasks`, { headers: { 'x-api-key': key } });
    assert.equal((await tasks()).status, 200, 'the key works at the task API');
    await page.goto(`${plain.signet.baseUrl}/account`);
    assert.equal(await page.locator('[data-api-key]').count(), 0, 'shown once: not when the page is opened again');
    assert.equal(await section.getByRole('listitem').count(), 1);
    assert.equal(await section.getByRole('listitem').getByText('Not used yet').count(), 0, 'last used is set once the key was used');

    await section.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('The API key “Open WebUI” is revoked.').waitFor();
    assert.equal((await tasks()).status, 401, 'revoked: refused at once');
    assert.deepEqual(await accessibilityViolations(page), [], '/account after a revocation');

    // The same session in a browser that asks for Chinese.
    const zhContext = await browser.newContext({ locale: 'zh-CN' });
    contexts.push(zhContext);
    await zhContext.addCookies(await page.context().cookies());
    const zh = await zhContext.newPage();
    await zh.goto(`${plain.signet.baseUrl}/account`);
    await zh.getByRole('heading', { name: 'API 密钥' }).waitFor();
    await zh.getByRole('button', { name: '创建 API 密钥' }).waitFor();
    assert.deepEqual(await accessibilityViolations(zh), [], '/account in zh-CN');
  });

  test('Change password: "current password required"; "every other session of that person ends" — another browser\'s session is gone, this one stays with a new id', async () => {
    const person = await newPerson();
    const here = await newPage();
    const elsewhere = await newPage();
    await signIn(here, person.email);
    await signIn(elsewhere, person.email);
    const cookieBefore = (await here.context().cookies()).find((c) => c.name === SESSION_COOKIE)?.value;

    await here.getByLabel('Current password').fill('not my password');
    await here.getByLabel('New password').fill('a brand new password');
    await here.getByRole('button', { name: 'Change password' }).click();
    await here.getByText('That is not your current password.').waitFor();
    await elsewhere.reload();
    assert.equal(new URL(elsewhere.url()).pathname, '/account', 'a wrong current password changes nothing');

    await here.getByLabel('Current password').fill(PASSWORD);
    await here.getByLabel('New password').fill('a brand new password');
    await here.getByRole('button', { name: 'Change password' }).click();
    await here.getByText('Your password is changed, and every other session is signed out.').waitFor();
    const cookieAfter = (await here.context().cookies()).find((c) => c.name === SESSION_COOKIE)?.value;
    assert.ok(cookieAfter && cookieAfter !== cookieBefore, 'this browser keeps a session, with a new id');
    await here.reload();
    assert.equal(new URL(here.url()).pathname, '/account', 'still signed in here');

    await elsewhere.reload();
    assert.equal(new URL(elsewhere.url()).pathname, '/signin', "the other browser's session is gone");
    const fresh = await newPage();
    await signIn(fresh, person.email, 'a brand new password');
  });

  test('Sessions: "where and when each session signed in"; Sign out one other session, then all others', async () => {
    const person = await newPerson();
    const here = await newPage();
    const second = await newPage();
    const third = await newPage();
    for (const page of [third, second, here]) await signIn(page, person.email);
    await here.reload();
    const sessions = here.getByRole('region', { name: 'Where you are signed in' }).getByRole('listitem');
    assert.equal(await sessions.count(), 3);
    const first = sessions.first();
    assert.match((await first.textContent()) ?? '', /This browser/);
    assert.equal(await first.getByRole('button', { name: 'Sign out' }).count(), 0, 'no Sign out for this very session');
    for (const item of await sessions.all()) {
      const text = (await item.textContent()) ?? '';
      assert.match(text, /Chrome on Linux/, 'the browser and system');
      assert.match(text, /127\.0\.0\.1/, 'where it signed in from');
      assert.match(text, /Signed in.*UTC/s, 'when, with the zone named');
    }
    await sessions.nth(1).getByRole('button', { name: 'Sign out' }).click();
    await here.getByText('That session is signed out.').waitFor();
    await second.reload();
    await third.reload();
    const stillIn = [second, third].filter((p) => new URL(p.url()).pathname === '/account');
    assert.equal(stillIn.length, 1, 'exactly one of the other two was signed out');

    await here.getByRole('button', { name: 'Sign out all other sessions' }).click();
    await here.getByText('1 other session is signed out.').waitFor();
    await stillIn[0]!.reload();
    assert.equal(new URL(stillIn[0]!.url()).pathname, '/signin');
    assert.ok(await here.getByText('You are signed in only in this browser.').isVisible());
  });

  test('Forgotten password: "Forgot password?" on /signin → Email → Send reset link → the e-mail reaches a real SMTP server → its link → Set password → sign in with it; "a reset ends every session"; a used link is refused', async () => {
    const person = await newPerson();
    const other = await newPage();
    await signIn(other, person.email);
    const page = await newPage({ viewport: PHONE });
    await page.goto(`${plain.signet.baseUrl}/signin`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('button', { name: 'Send reset link' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], '/forgot-password');
    await noSidewaysScroll(page, '/forgot-password');
    const before = smtp.received.length;
    await page.getByLabel('Email').fill(person.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'the answer page');

    const mail = await mailTo(person.email, /http:\/\/\S+\/reset-password\?token=[A-Za-z0-9_-]{43}/, before);
    assert.ok(mail.link.startsWith(`${plain.signet.baseUrl}/reset-password?token=`), 'a link to {base_url}/reset-password?token=…');
    assert.match(mail.subject, /Set a new Signet password/);
    const token = new URL(mail.link).searchParams.get('token')!;
    const stored = await plain.database.db.selectFrom('account_tokens').selectAll().where('sub', '=', person.sub).execute();
    assert.equal(stored.length, 1);
    assert.notEqual(stored[0]!.token_hash, token, 'the token is stored only as a keyed hash');
    assert.equal(stored[0]!.expires_at - (await plain.database.db.selectFrom('mail_outbox').select('created_at').where('sub', '=', person.sub).executeTakeFirstOrThrow()).created_at, 30 * MINUTE, 'valid 30 minutes');

    await page.goto(mail.link);
    await page.getByRole('button', { name: 'Set password' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], '/reset-password');
    await noSidewaysScroll(page, '/reset-password');
    await page.getByLabel('New password').fill('short');
    await page.evaluate(() => document.querySelector('form[action="/reset-password"]')?.setAttribute('novalidate', ''));
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('The password needs at least 8 characters.').waitFor();
    await page.getByLabel('New password').fill('my reset password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Your new password is set').waitFor();

    await other.reload();
    assert.equal(new URL(other.url()).pathname, '/signin', 'the session in the other browser ended');
    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Email or phone').fill(person.email);
    await page.getByLabel('Password', { exact: true }).fill('my reset password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${plain.signet.baseUrl}/account`);

    // spec (issue): "a used … reset link is refused".
    const again = await newPage();
    const response = await again.goto(mail.link);
    assert.equal(response?.status(), 400);
    await again.getByText('This reset link has expired or was already used.').waitFor();
    assert.deepEqual(await accessibilityViolations(again), [], 'the refusal page');
  });

  test('Forgotten password: "the same answer whether or not the account exists" — and no e-mail for an unknown address', async () => {
    const person = await newPerson();
    const answer = async (email: string) => {
      const page = await newPage();
      await page.goto(`${plain.signet.baseUrl}/forgot-password`);
      await page.getByLabel('Email').fill(email);
      const response = page.waitForResponse((r) => r.url().endsWith('/forgot-password') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Send reset link' }).click();
      const status = (await response).status();
      const main = (await page.locator('main').innerText()).replaceAll(email, '<address>');
      return { status, main };
    };
    const before = smtp.received.length;
    const known = await answer(person.email);
    const unknown = await answer('nobody-here@example.com');
    assert.deepEqual(unknown, known);
    await mailTo(person.email, /reset-password\?token=/, before);
    const unknownRows = await plain.database.db.selectFrom('mail_outbox').select(['status', 'to_address', 'reason']).where('sub', 'is', null).execute();
    assert.deepEqual(unknownRows, [{ status: 'suppressed', to_address: null, reason: 'no account' }], 'recorded for the unknown address too, with nothing to send');
    assert.ok(!smtp.received.some((m) => m.to.includes('nobody-here@example.com')));
  });

  test('a reset link is refused after 30 minutes', async () => {
    const person = await newPerson();
    const page = await newPage();
    const before = smtp.received.length;
    await page.goto(`${plain.signet.baseUrl}/forgot-password`);
    await page.getByLabel('Email').fill(person.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    const mail = await mailTo(person.email, /http:\/\/\S+\/reset-password\?token=[A-Za-z0-9_-]{43}/, before);
    await page.goto(mail.link);
    await page.getByRole('button', { name: 'Set password' }).waitFor();
    plain.signet.clock.advance(30 * MINUTE + 1);
    await page.getByLabel('New password').fill('too late a password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('This reset link has expired or was already used.').waitFor();
    assert.equal((await accounts.checkCredentials(plain.database.db, person.email, PASSWORD))?.sub, person.sub, 'the old password still works');
    const response = await page.goto(mail.link);
    assert.equal(response?.status(), 400);
  });

  test('E-mail verification: "a verification link sets email_verified"', async () => {
    const person = await newPerson(plain, { emailVerified: false });
    const page = await newPage();
    await signIn(page, person.email);
    assert.ok(await page.getByText('not verified').isVisible());
    const before = smtp.received.length;
    await page.getByRole('button', { name: 'Send verification link' }).click();
    await page.getByText(`A verification link is on its way to ${person.email}`).waitFor();
    const mail = await mailTo(person.email, /http:\/\/\S+\/verify-email\?token=[A-Za-z0-9_-]{43}/, before);
    await page.goto(mail.link);
    await page.getByText(`${person.email} is verified. Thank you.`).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'the verification page');
    assert.equal((await accounts.findAccount(plain.database.db, person.sub))?.email_verified, true);
    await page.goto(mail.link);
    await page.getByText(`${person.email} is verified already.`).waitFor();
    await page.goto(`${plain.signet.baseUrl}/account`);
    assert.equal(await page.getByRole('button', { name: 'Send verification link' }).count(), 0);
  });

  test('Sign-up: closed (the default) → /signup is 404 and /signin has no Create account link', async () => {
    const page = await newPage();
    const response = await page.goto(`${plain.signet.baseUrl}/signup`);
    assert.equal(response?.status(), 404);
    await page.goto(`${plain.signet.baseUrl}/signin`);
    assert.equal(await page.getByRole('link', { name: 'Create account' }).count(), 0);
  });

  test('Sign-up: SIGNET_SIGNUP=open → Create account → the account starts with email_verified=false and gets a verification e-mail; the link verifies it', async () => {
    const page = await newPage({ viewport: PHONE });
    await page.goto(`${branded.signet.baseUrl}/signin`);
    await page.getByRole('link', { name: 'Create account' }).click();
    await page.getByRole('button', { name: 'Create account' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], '/signup');
    await noSidewaysScroll(page, '/signup');
    const before = smtp.received.length;
    await page.getByLabel('Email').fill('new-person@example.com');
    await page.getByLabel('Password', { exact: true }).fill('a new person password');
    await page.getByLabel('Display name').fill('New Person');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    const created = await accounts.findAccountByEmail(branded.database.db, 'new-person@example.com');
    assert.ok(created, 'the account exists');
    assert.equal(created.email_verified, false);
    assert.equal(created.name, 'New Person');
    const mail = await mailTo('new-person@example.com', /http:\/\/\S+\/verify-email\?token=[A-Za-z0-9_-]{43}/, before);
    assert.match(mail.subject, /Acme ID/, 'the product name');
    await page.goto(mail.link);
    await page.getByText('new-person@example.com is verified. Thank you.').waitFor();
    assert.equal((await accounts.findAccount(branded.database.db, created.sub))?.email_verified, true);

    // The same page for an address that has an account already; its owner is told by e-mail instead.
    await page.goto(`${branded.signet.baseUrl}/signup`);
    await page.getByLabel('Email').fill('new-person@example.com');
    await page.getByLabel('Password', { exact: true }).fill('someone else entirely');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    await mailTo('new-person@example.com', /http:\/\/\S+\/signin/, before + 1);
    assert.equal((await accounts.checkCredentials(branded.database.db, 'new-person@example.com', 'a new person password'))?.sub, created.sub, 'the existing account is untouched');
  });

  test('Branding: product name, logo and accent colour on every page\'s header', async () => {
    const person = await newPerson(branded);
    const page = await newPage();
    for (const path of ['/signin', '/forgot-password', '/signup']) {
      await page.goto(`${branded.signet.baseUrl}${path}`);
      const brand = page.locator('header.site .brand');
      assert.equal((await brand.innerText()).trim(), 'Acme ID', `${path}: the product name in the header`);
      assert.equal(await brand.locator('img').getAttribute('src'), BRAND.SIGNET_LOGO_URL, `${path}: the logo`);
      assert.match(await page.title(), / · Acme ID$/, `${path}: the title`);
      const stripe = await page.locator('header.site').evaluate((el) => getComputedStyle(el).borderTopColor);
      assert.equal(stripe, 'rgb(122, 31, 162)', `${path}: the accent colour`);
    }
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Create your Acme ID account');
    await signIn(page, person.email, PASSWORD, branded);
    const save = page.getByRole('button', { name: 'Save profile' });
    assert.equal(await save.evaluate((el) => getComputedStyle(el).backgroundColor), 'rgb(122, 31, 162)', 'primary buttons in the accent colour');
    assert.equal((await page.locator('header.site .brand').innerText()).trim(), 'Acme ID');
    assert.deepEqual(await accessibilityViolations(page), [], '/account with the brand');
  });
});
