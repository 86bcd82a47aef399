// The admin console (issue 27) in real headless Chromium: Signet listening on its public address and
// the admin listener beside it (same database, same clock), an operator going through each list —
// password and TOTP, a new application whose secret then serves a real authorization-code flow, a
// locked-out person found and unlocked, factors reset (after the step-up), sessions ended, the audit
// log filtered and exported — and the refusals: a non-operator's 403 page, an operator without a
// second factor sent to set one up, a form without its CSRF token, the console in a frame, a console
// session on the public listener. Screenshots of the overview, a person's page and the audit list at
// desktop and phone width go to /tmp/console-shots/ (the README's are copied from there into docs/).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import { addRole } from '../../src/accounts/roles.ts';
import { beginTotpSetup, confirmTotpSetup, totpCode } from '../../src/accounts/factors/totp.ts';
import { newRecoveryCodes } from '../../src/accounts/factors/recovery-codes.ts';
import { recordFailedAttempt } from '../../src/accounts/throttle.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import { MINUTE } from '../../src/config/clock.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { startCallbackServer, type CallbackServer } from '../helpers/callback-server.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { freePort, startSignet, type RunningSignet } from '../helpers/live-server.ts';

const PASSWORD = 'a long operator password';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const SHOTS = '/tmp/console-shots';

describe('browser: the admin console in Chromium', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let startedAt: number;
  let adminApp: FastifyInstance;
  let admin: string;
  let callback: CallbackServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let operatorSecret: string;
  let personSub: string;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    database = await sqliteDatabase();
    signet = await startSignet(database);
    // The suite's first instant: later tests move the clock (lock-outs), which may cross midnight.
    startedAt = signet.clock();
    const { db, clock, keys, objects, logger } = signet.deps;
    adminApp = await buildAdminApp({ db, clock, keys, objects, logger, trustProxy: false, productName: 'Signet' });
    const port = await freePort();
    await adminApp.listen({ host: '127.0.0.1', port });
    admin = `http://127.0.0.1:${port}`;
    callback = await startCallbackServer();
    browser = await launchChromium();

    const operator = await accounts.createAccount(db, clock, { email: 'operator@example.com', name: 'Olga Operator', password: PASSWORD, emailVerified: true });
    await addRole(db, clock, operator.sub, 'operator');
    const setup = await beginTotpSetup(db, keys.factorSecret, clock, { sub: operator.sub, issuer: 'Signet', label: 'operator@example.com' });
    await confirmTotpSetup(db, keys.factorSecret, clock, operator.sub, totpCode(setup.secretBase32, clock()));
    operatorSecret = setup.secretBase32;

    // A person who lost their phone and then locked themselves out.
    const person = await accounts.createAccount(db, clock, { email: 'grace@example.com', name: 'Grace Hopper', phone: '+4915112345678', password: PASSWORD, emailVerified: true });
    personSub = person.sub;
    const personSetup = await beginTotpSetup(db, keys.factorSecret, clock, { sub: person.sub, issuer: 'Signet', label: 'grace@example.com' });
    await confirmTotpSetup(db, keys.factorSecret, clock, person.sub, totpCode(personSetup.secretBase32, clock()));
    await newRecoveryCodes(db, keys.tokenHash, clock, person.sub);
    for (let i = 0; i < 10; i++) await recordFailedAttempt(db, clock, { account: person.sub, address: '203.0.113.9' });
  });

  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await adminApp?.close();
    await signet?.close();
    await callback?.close();
    await database?.dispose();
  });

  async function newPage(viewport = DESKTOP, locale = 'en-US'): Promise<Page> {
    const context = await browser.newContext({ viewport, locale, acceptDownloads: true });
    contexts.push(context);
    return context.newPage();
  }

  /** The next code of the operator's app: the clock moves to the next 30-second step (each is taken once). */
  function nextCode(): string {
    signet.clock.advance(30_000);
    return totpCode(operatorSecret, signet.clock());
  }

  async function signInAsOperator(page: Page): Promise<void> {
    await page.goto(`${admin}/admin`);
    await page.getByLabel('Email or phone').fill('operator@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Code').fill(nextCode());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }

  /** A link of the console's navigation. */
  function nav(page: Page, name: string) {
    return page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });
  }

  async function shoot(page: Page, name: string): Promise<void> {
    assert.deepEqual(await accessibilityViolations(page), [], name);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name}: no sideways scroll`);
    await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  }

  let operatorPage: Page;

  test('an operator signs in with the password and a TOTP code; the overview has the six navigation links and counts that link to their lists', async () => {
    operatorPage = await newPage();
    await signInAsOperator(operatorPage);
    for (const name of ['Overview', 'Applications', 'People', 'Audit', 'Tasks', 'Admin keys']) assert.ok(await nav(operatorPage, name).isVisible(), name);
    await operatorPage.getByRole('link', { name: /People locked out/ }).click();
    await operatorPage.getByRole('link', { name: 'grace@example.com' }).waitFor();
    await nav(operatorPage, 'Overview').click();
    await shoot(operatorPage, 'overview-desktop');
  });

  test('New application: the secret shown once in data-client-secret serves a real authorization-code flow', async () => {
    const page = operatorPage;
    await nav(page, 'Applications').click();
    await page.getByRole('heading', { name: 'New application' }).waitFor();
    await page.getByLabel('Name').fill('Console-made App');
    await page.getByLabel('Redirect URIs').fill(callback.url);
    await page.getByLabel('Scopes').fill('openid profile email');
    await page.getByRole('button', { name: 'Create application' }).click();
    const secret = await page.locator('[data-client-secret]').getAttribute('data-client-secret');
    const clientId = await page.locator('[data-client-id]').getAttribute('data-client-id');
    assert.ok(secret && clientId);

    // A person signs in at the public listener for this application; the application exchanges the code with the secret.
    const user = await newPage();
    const landed = callback.next();
    await user.goto(`${signet.baseUrl}/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: callback.url, response_type: 'code', scope: 'openid profile', state: 'st' })}`);
    await user.getByLabel('Email or phone').fill('operator@example.com');
    await user.getByLabel('Password').fill(PASSWORD);
    await user.getByRole('button', { name: 'Sign in', exact: true }).click();
    await user.getByLabel('Code').fill(nextCode());
    await user.getByRole('button', { name: 'Verify' }).click();
    await user.getByRole('button', { name: 'Allow' }).click();
    const code = (await landed).searchParams.get('code');
    assert.ok(code);
    const token = await fetch(`${signet.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback.url, client_id: clientId, client_secret: secret }),
    });
    assert.equal(token.status, 200, await token.clone().text());
    assert.ok(((await token.json()) as { access_token?: string }).access_token);
  });

  test('People: find the locked-out person by e-mail, see the lock-out, Unlock; Reset second factors after the step-up; End all sessions', async () => {
    const page = operatorPage;
    await nav(page, 'People').click();
    await page.getByLabel('Search').fill('grace@example.com');
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'grace@example.com' }).click();
    await page.getByRole('heading', { name: 'grace@example.com' }).waitFor();
    assert.ok(await page.getByRole('cell', { name: '203.0.113.9' }).isVisible(), 'the lock-out shows the address');
    await shoot(page, 'person-desktop');
    await page.setViewportSize(PHONE);
    await shoot(page, 'person-phone');
    await page.setViewportSize(DESKTOP);
    await page.getByRole('button', { name: 'Unlock' }).click();
    await page.getByText('Unlocked: they can sign in again.').waitFor();
    assert.ok(await page.getByText('Not locked out.').isVisible());

    // More than ten minutes after the last check: the destructive change asks for a code first.
    signet.clock.advance(11 * MINUTE);
    await page.getByRole('button', { name: 'Reset second factors' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await page.getByLabel('Code').fill(nextCode());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('Confirmed. Press the button again').waitFor();
    await page.getByRole('button', { name: 'Reset second factors' }).click();
    await page.getByText('Second factors removed (1)').waitFor();
    assert.equal((await database.db.selectFrom('second_factors').select('id').where('sub', '=', personSub).execute()).length, 0);

    // She signs in at the public listener (password alone now), then the operator ends her sessions.
    const grace = await newPage();
    await grace.goto(`${signet.baseUrl}/signin`);
    await grace.getByLabel('Email or phone').fill('grace@example.com');
    await grace.getByLabel('Password').fill(PASSWORD);
    await grace.getByRole('button', { name: 'Sign in', exact: true }).click();
    await grace.waitForURL(`${signet.baseUrl}/account`);
    await page.reload();
    await page.getByRole('button', { name: 'End all sessions' }).click();
    await page.getByText('Sessions ended: 1.').waitFor();
    await grace.goto(`${signet.baseUrl}/account`);
    await grace.waitForURL((u) => u.pathname === '/signin');
  });

  test('Audit: filter by type, person and date, open an event, export the filtered list as CSV and JSON Lines', async () => {
    const page = operatorPage;
    await nav(page, 'Audit').click();
    await page.getByLabel('Type').fill('account.*');
    await page.getByLabel('Person').fill(personSub);
    // From the day the suite began: the events above were written from then on, even when the clock
    // has since crossed midnight (a run near 24:00 UTC).
    await page.getByLabel('From').fill(new Date(startedAt).toISOString().slice(0, 10));
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('account.sessions_ended').waitFor();
    assert.ok(await page.getByText('account.factors_reset').isVisible());
    assert.ok(await page.getByText('account.unlocked').isVisible());
    assert.equal(await page.getByText('signin.succeeded').count(), 0);
    await shoot(page, 'audit-desktop');
    await page.setViewportSize(PHONE);
    await shoot(page, 'audit-phone');
    await page.setViewportSize(DESKTOP);

    await page.getByLabel('Format').selectOption('csv');
    const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export' }).click()]);
    const csvText = readFileSync((await csv.path())!, 'utf8');
    assert.match(csvText, /^id,type,at,sub,client_id,ip,outcome,actor,detail\n/);
    assert.equal(csvText.trim().split('\n').length, 4, 'header and three events');
    assert.ok(csvText.includes('operator:'), "the operator's sub is the actor");
    await page.getByLabel('Format').selectOption('jsonl');
    const [jsonl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export' }).click()]);
    const events = readFileSync((await jsonl.path())!, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string });
    assert.deepEqual(events.map((e) => e.type), ['account.sessions_ended', 'account.factors_reset', 'account.unlocked']);

    await page.locator('table.audit a').first().click();
    await page.getByRole('heading', { name: /^Event \d+$/ }).waitFor();
    await page.setViewportSize(PHONE);
    await page.goto(`${admin}/admin`);
    await shoot(page, 'overview-phone');
    await page.setViewportSize(DESKTOP);
  });

  test('"a console session cannot be used on the public listener and vice versa"', async () => {
    const cookies = await operatorPage.context().cookies(`${admin}/admin`);
    const consoleCookie = cookies.find((c) => c.name === 'signet_console');
    assert.ok(consoleCookie, 'the console has its own cookie');
    assert.equal(consoleCookie.path, '/admin');
    assert.ok(consoleCookie.httpOnly);
    const other = await newPage();
    await other.context().addCookies([{ name: 'signet_session', value: consoleCookie.value, url: signet.baseUrl }]);
    await other.goto(`${signet.baseUrl}/account`);
    await other.waitForURL((u) => u.pathname === '/signin');
    // A public session (Grace's browser signs in again) means nothing on the admin listener.
    await other.getByLabel('Email or phone').fill('grace@example.com');
    await other.getByLabel('Password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Sign in', exact: true }).click();
    await other.waitForURL(`${signet.baseUrl}/account`);
    await other.goto(`${admin}/admin`);
    await other.waitForURL(`${admin}/admin/signin`);
  });

  test('"requests without the CSRF token are refused" and "the console is refused in a frame"', async () => {
    const refused = await operatorPage.request.post(`${admin}/admin/people/${personSub}/end-sessions`, { form: {}, maxRedirects: 0 });
    assert.equal(refused.status(), 403);
    const framing = await newPage();
    await framing.goto(callback.url);
    const loaded = framing.waitForEvent('framenavigated', (f) => f !== framing.mainFrame());
    await framing.evaluate((src) => {
      const iframe = document.createElement('iframe');
      iframe.src = src;
      document.body.append(iframe);
    }, `${admin}/admin/signin`);
    const frame = await loaded;
    await frame.waitForLoadState();
    const response = await operatorPage.request.get(`${admin}/admin/signin`);
    assert.equal(response.headers()['x-frame-options'], 'DENY');
    assert.match(response.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
    const inside = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
    assert.ok(!inside.includes('Email or phone') && !inside.includes('Password'), `nothing of the console renders inside the frame (it shows: ${JSON.stringify(inside.slice(0, 80))})`);
  });

  test('as a non-operator: /admin answers a 403 page with nothing listed', async () => {
    const page = await newPage();
    await page.goto(`${admin}/admin`);
    await page.getByLabel('Email or phone').fill('grace@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    const [response] = await Promise.all([page.waitForResponse((r) => r.url() === `${admin}/admin`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
    assert.equal(response.status(), 403);
    await page.getByRole('heading', { name: 'Not an operator' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'People', exact: true }).count(), 0);
    assert.ok(!(await page.content()).includes('operator@example.com'));
    assert.deepEqual(await accessibilityViolations(page), []);
  });

  test('an operator without a second factor is sent to set one up first (in Chinese as well)', async () => {
    // Grace is made an operator; her factors were reset above.
    await addRole(database.db, signet.clock, personSub, 'operator');
    const page = await newPage(PHONE, 'zh-CN');
    await page.goto(`${admin}/admin`);
    await page.getByLabel('邮箱或手机号').fill('grace@example.com');
    await page.getByLabel('密码').fill(PASSWORD);
    await page.getByRole('button', { name: '登录', exact: true }).click();
    await page.waitForURL(`${admin}/admin/signin/two-step/setup`);
    const key = await page.locator('[data-setup-key]').getAttribute('data-setup-key');
    assert.ok(key);
    await page.getByLabel('验证码').fill(totpCode(key, signet.clock()));
    await page.getByRole('button', { name: '开启' }).click();
    assert.equal(await page.locator('[data-recovery-code]').count(), 10);
    await page.getByRole('link', { name: '进入控制台' }).click();
    await page.getByRole('heading', { name: '概览' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), []);
  });
  test('issue 33: "Identity providers" in the navigation; an operator adds GitHub, sees the redirect URI to register, and disables it', async () => {
    const page = await newPage();
    await signInAsOperator(page);
    await nav(page, 'Identity providers').click();
    await page.getByRole('heading', { name: 'Identity providers', level: 1 }).waitFor();
    await page.getByLabel('Slug').fill('github');
    await page.getByLabel('Preset').selectOption('github');
    await page.getByLabel('Client ID').fill('Iv1.console');
    await page.getByLabel('Client secret').fill('console-secret-never-shown');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByText('Provider added.').waitFor();
    const html = await page.content();
    // buildAdminApp was given no base URL here: the default one's callback.
    assert.ok(html.includes('http://localhost:8080/signin/idp/github/callback'), 'the redirect URI is shown');
    assert.ok(!html.includes('console-secret-never-shown'), 'the secret is not shown again');
    await shoot(page, 'identity-providers');
    await page.getByRole('button', { name: 'Disable: GitHub' }).click();
    await page.getByText('Provider changed.').waitFor();
    assert.ok(await page.getByRole('button', { name: 'Enable: GitHub' }).isVisible());
  });
});
