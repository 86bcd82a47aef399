// Two-step verification in real headless Chromium against a real listening Signet (issue 19): set up
// an authenticator app reading the key from data-setup-key, see ten recovery codes, sign out, sign in
// with the password and a code — in English and in Chinese, at 390 px, axe clean, with screenshots of
// the set-up page, the recovery codes and the second step written to /tmp/mfa-shots/.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import * as clients from '../../src/clients/clients.ts';
import { totpCode } from '../../src/accounts/factors/totp.ts';
import { SECOND } from '../../src/config/clock.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { startCallbackServer, type CallbackServer } from '../helpers/callback-server.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';

const PASSWORD = 'a long account password';
const PHONE = { width: 390, height: 844 };
const SHOTS = '/tmp/mfa-shots';

/** The words a person sees, per language (en.ts / zh-CN.ts). */
const WORDS = {
  en: { locale: 'en-US', setUp: 'Set up authenticator app', code: 'Code', turnOn: 'Turn on', back: 'Back to your account', signOut: 'Sign out', identifier: 'Email or phone', password: 'Password', signIn: 'Sign in', verify: 'Verify', download: 'Download', copy: 'Copy', newCodes: 'Make new recovery codes', confirm: 'Confirm', makeCodes: 'Make new codes' },
  zh: { locale: 'zh-CN', setUp: '设置身份验证器应用', code: '验证码', turnOn: '开启', back: '返回我的账户', signOut: '退出登录', identifier: '邮箱或手机号', password: '密码', signIn: '登录', verify: '验证', download: '下载', copy: '复制', newCodes: '生成新的恢复码', confirm: '确认', makeCodes: '生成新的恢复码' },
} as const;

describe('browser: two-step verification in Chromium', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  /** SIGNET_MFA=required */
  let strict: RunningSignet;
  let strictDatabase: Awaited<ReturnType<typeof sqliteDatabase>>;
  let callback: CallbackServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    database = await sqliteDatabase();
    signet = await startSignet(database);
    strictDatabase = await sqliteDatabase();
    strict = await startSignet(strictDatabase, { SIGNET_MFA: 'required' });
    callback = await startCallbackServer();
    browser = await launchChromium();
  });

  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await signet?.close();
    await database?.dispose();
    await strict?.close();
    await strictDatabase?.dispose();
    await callback?.close();
  });

  async function noSidewaysScroll(page: Page, what: string): Promise<void> {
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${what}: no horizontal scroll at 390 px`);
  }

  async function checkPage(page: Page, name: string): Promise<void> {
    assert.deepEqual(await accessibilityViolations(page), [], name);
    await noSidewaysScroll(page, name);
    await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  }

  for (const lang of ['en', 'zh'] as const) {
    test(`[${lang}] set up TOTP reading data-setup-key, sign out, sign in with the password and a code (screenshots of set-up, recovery codes and the second step)`, async () => {
      const w = WORDS[lang];
      const email = `two-step-${lang}@example.com`;
      await accounts.createAccount(database.db, signet.clock, { email, name: `Person ${lang}`, password: PASSWORD, emailVerified: true });
      const context = await browser.newContext({ locale: w.locale, viewport: PHONE });
      contexts.push(context);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: signet.baseUrl });
      const page = await context.newPage();

      const signInWithPassword = async () => {
        await page.goto(`${signet.baseUrl}/signin`);
        await page.getByLabel(w.identifier).fill(email);
        await page.getByLabel(w.password, { exact: true }).fill(PASSWORD);
        await page.getByRole('button', { name: w.signIn, exact: true }).click();
      };

      await signInWithPassword();
      await page.waitForURL(`${signet.baseUrl}/account`);
      await page.getByRole('link', { name: w.setUp }).click();
      await page.waitForURL(`${signet.baseUrl}/account/two-step/setup`);
      const key = await page.locator('[data-setup-key]').getAttribute('data-setup-key');
      assert.match(key ?? '', /^[A-Z2-7]{32}$/);
      assert.equal((await page.locator('[data-setup-key]').textContent())?.replace(/\s/g, ''), key, 'the grouped text is the same key');
      assert.equal(await page.locator('.qr svg').count(), 1, 'the QR code is drawn on the server as SVG');
      await checkPage(page, `setup-${lang}`);

      await page.getByLabel(w.code, { exact: true }).fill(totpCode(key!, signet.clock()));
      await page.getByRole('button', { name: w.turnOn }).click();
      const codes = page.locator('[data-recovery-code]');
      await codes.first().waitFor();
      assert.equal(await codes.count(), 10);
      const download = page.getByRole('link', { name: w.download });
      assert.match((await download.getAttribute('href')) ?? '', /^data:text\/plain/);
      const copy = page.getByRole('button', { name: w.copy });
      await copy.click();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied.trim().split('\n').length, 10, 'Copy puts the ten codes on the clipboard');
      await checkPage(page, `recovery-codes-${lang}`);
      await page.getByRole('link', { name: w.back }).click();
      await page.waitForURL(/\/account/);

      await page.getByRole('button', { name: w.signOut }).click();
      await page.waitForURL(/\/signin/);
      await signInWithPassword();
      await page.waitForURL(`${signet.baseUrl}/signin/two-step`);
      await checkPage(page, `second-step-${lang}`);
      signet.clock.advance(30 * SECOND);
      await page.getByLabel(w.code, { exact: true }).fill(totpCode(key!, signet.clock()));
      await page.getByRole('button', { name: w.verify }).click();
      await page.waitForURL(`${signet.baseUrl}/account`);
      assert.equal(await page.locator('#two-step-heading').count(), 1);
      await checkPage(page, `account-${lang}`);

      // Step-up: 11 minutes later, new recovery codes ask for the password first, then come back to the action.
      signet.clock.advance(11 * 60 * SECOND);
      await page.getByRole('link', { name: w.newCodes }).click();
      await page.waitForURL(/\/account\/confirm\?return=/);
      await checkPage(page, `confirm-${lang}`);
      await page.getByLabel(w.password, { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: w.confirm }).first().click();
      await page.waitForURL(`${signet.baseUrl}/account/two-step/recovery-codes`);
      assert.deepEqual(await accessibilityViolations(page), [], 'new codes page');
      await page.getByRole('button', { name: w.makeCodes }).click();
      await page.locator('[data-recovery-code]').first().waitFor();
      assert.equal(await page.locator('[data-recovery-code]').count(), 10);
    });
  }

  test('SIGNET_MFA=required: after the password, set-up comes before consent; then Allow lands on the application\'s callback with a code', async () => {
    const { client } = await clients.registerClient(strictDatabase.db, strict.clock, strict.deps.keys.tokenHash, { name: 'Strict App', redirectUris: [callback.url], scopes: ['openid', 'email'] });
    await accounts.createAccount(strictDatabase.db, strict.clock, { email: 'strict@example.com', password: PASSWORD, emailVerified: true });
    const context = await browser.newContext({ locale: 'en-US', viewport: PHONE });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${strict.baseUrl}/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: callback.url, response_type: 'code', scope: 'openid email', state: 'mfa-state' })}`);
    await page.getByLabel('Email or phone').fill('strict@example.com');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${strict.baseUrl}/signin/two-step/setup`);
    await page.getByText('This service requires two-step verification.').waitFor();
    await checkPage(page, 'enrol-required-en');
    const key = await page.locator('[data-setup-key]').getAttribute('data-setup-key');
    await page.getByLabel('Code', { exact: true }).fill(totpCode(key!, strict.clock()));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.locator('[data-recovery-code]').first().waitFor();
    await page.getByRole('link', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    const landed = callback.next();
    await page.getByRole('button', { name: 'Allow' }).click();
    const url = await landed;
    assert.equal(url.searchParams.get('state'), 'mfa-state');
    assert.match(url.searchParams.get('code') ?? '', /^.{20,}$/);
  });
});
