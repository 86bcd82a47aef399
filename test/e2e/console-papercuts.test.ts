// Issue 36, the console's papercuts, in real headless Chromium against a listening Signet and the admin
// listener beside it (same database and clock): an operator whose only factor is a passkey (added on
// /account with a virtual authenticator) signs in to the console with it — and confirms a destructive
// change with it; "End this session" ends one of a person's two browsers; the Tasks page lists workers
// from their heartbeats (an idle one, a busy one, a silent one); "E-mails pending" leads to the e-mail
// outbox; an unknown /admin/… address is a console 404 page. Every page is checked with axe and for
// sideways scroll; screenshots go to /tmp/console-shots/.
//
// Passkeys need a host name (an RP ID cannot be an IP address): the public site is used at
// http://localhost:PORT and the console at http://localhost:ADMINPORT — one RP ID, "localhost".
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import { notifySecurity } from '../../src/accounts/factors/factors.ts';
import { queueAccountMail } from '../../src/accounts/mail/outbox.ts';
import { addRole } from '../../src/accounts/roles.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import { MINUTE } from '../../src/config/clock.ts';
import { startHeartbeat } from '../../src/worker/heartbeats.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { freePort, startSignet, type RunningSignet } from '../helpers/live-server.ts';

const PASSWORD = 'a long operator password';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const SHOTS = '/tmp/console-shots';

describe('browser: the console papercuts of issue 36 in Chromium', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let adminApp: FastifyInstance;
  let admin: string;
  let site: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const heartbeats: Array<{ stop(): Promise<void> }> = [];
  let operatorSub: string;
  let graceSub: string;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    database = await sqliteDatabase();
    signet = await startSignet(database);
    site = signet.altBaseUrl;
    const { db, clock, keys, objects, logger } = signet.deps;
    adminApp = await buildAdminApp({ db, clock, keys, objects, logger, trustProxy: false, productName: 'Signet', passkeyHosts: ['localhost'] });
    const port = await freePort();
    await adminApp.listen({ host: '127.0.0.1', port });
    admin = `http://localhost:${port}`;
    browser = await launchChromium();
    // The operator has no authenticator app: a passkey will be their only second factor.
    operatorSub = (await accounts.createAccount(db, clock, { email: 'operator@example.com', name: 'Olga Operator', password: PASSWORD, emailVerified: true })).sub;
    await addRole(db, clock, operatorSub, 'operator');
    graceSub = (await accounts.createAccount(db, clock, { email: 'grace@example.com', name: 'Grace Hopper', password: PASSWORD, emailVerified: true })).sub;
  });

  after(async () => {
    for (const beat of heartbeats) await beat.stop().catch(() => {});
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await adminApp?.close();
    await signet?.close();
    await database?.dispose();
  });

  async function newContext(viewport = DESKTOP): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport, locale: 'en-US' });
    contexts.push(context);
    return context;
  }

  async function check(page: Page, name: string): Promise<void> {
    assert.deepEqual(await accessibilityViolations(page), [], name);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name}: no sideways scroll`);
    await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  }

  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

  async function signInAtSite(page: Page, email: string): Promise<void> {
    await page.goto(`${site}/signin`);
    await page.getByLabel('Email or phone').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${site}/account`);
  }

  let operatorPage: Page;

  test('"an operator whose only factor is a passkey gets in": the passkey added on /account signs in to the console (no TOTP set-up), audited as passkey.signin at the console', async () => {
    const context = await newContext();
    operatorPage = await context.newPage();
    await context.addInitScript(() => {
      Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: async () => false });
    });
    const cdp = await context.newCDPSession(operatorPage);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    const page = operatorPage;
    await signInAtSite(page, 'operator@example.com');
    await page.getByLabel('Passkey name').fill('Operator laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(`${site}/account?saved=passkey#passkeys-heading`);

    // The password alone leads to the second step, which takes the passkey (never the TOTP set-up).
    await page.goto(`${admin}/admin`);
    await page.getByLabel('Email or phone').fill('operator@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
    assert.equal(await page.getByLabel('Code').count(), 0, 'no code field: this operator has no authenticator app');
    assert.ok(!page.url().includes('/setup'), 'not sent to set up an authenticator app');
    await check(page, 'console-second-step-passkey');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();

    // Signed out, the passkey on its own (the sign-in page's button) signs in too.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    await check(page, 'console-signin-passkey');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    for (const name of ['Overview', 'Applications', 'People', 'Audit', 'Tasks', 'E-mail', 'Admin keys']) assert.ok(await nav(page, name).isVisible(), name);
    const events = await database.db.selectFrom('audit_events').select(['type', 'detail']).where('sub', '=', operatorSub).where('type', 'in', ['passkey.signin', 'signin.succeeded']).execute();
    assert.ok(events.some((e) => e.type === 'signin.succeeded' && String(e.detail).includes('"factor":"passkey"') && String(e.detail).includes('"stage":"console"')), JSON.stringify(events));
  });

  test('"End this session" on a person\'s page ends that browser\'s session; her other browser stays signed in; the step-up of a destructive change takes the passkey', async () => {
    const first = await (await newContext(PHONE)).newPage();
    await signInAtSite(first, 'grace@example.com');
    signet.clock.advance(MINUTE);
    const second = await (await newContext(PHONE)).newPage();
    await signInAtSite(second, 'grace@example.com');

    const page = operatorPage;
    await nav(page, 'People').click();
    await page.getByLabel('Search').fill('grace@example.com');
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'grace@example.com' }).click();
    const ends = page.getByRole('button', { name: /^End this session/ });
    assert.equal(await ends.count(), 2, 'one button per session');
    await check(page, 'console-person-sessions');
    // Newest first: the first row is the second browser's session.
    await ends.first().click();
    await page.getByText('The session ended: that browser must sign in again.').waitFor();
    assert.equal(await page.getByRole('button', { name: /^End this session/ }).count(), 1);
    await second.goto(`${site}/account`);
    await second.waitForURL((u) => u.pathname === '/signin');
    await first.goto(`${site}/account`);
    assert.equal(new URL(first.url()).pathname, '/account', 'the other browser is still signed in');
    const ended = await database.db.selectFrom('audit_events').select(['actor', 'outcome']).where('type', '=', 'account.session_ended').execute();
    assert.deepEqual(ended, [{ actor: `operator:${operatorSub}`, outcome: 'success' }]);

    // Past the step-up window, Disable asks for the second factor again: the passkey answers it.
    signet.clock.advance(11 * MINUTE);
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await check(page, 'console-confirm-passkey');
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByText('Confirmed. Press the button again').waitFor();
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('Disabled: they cannot sign in').waitFor();
    await page.getByRole('button', { name: 'Enable' }).click();
  });

  test('Tasks lists every worker from its heartbeat: an idle one, one running a task, and one silent for minutes', async () => {
    const { db, clock } = signet.deps;
    const logger = signet.deps.logger;
    const idle = randomUUID();
    const busy = randomUUID();
    heartbeats.push(startHeartbeat({ db, clock, logger }, { id: idle, work: ['translate', 'docparse', 'email'], slots: 1, version: '0.1.0' }));
    heartbeats.push(startHeartbeat({ db, clock, logger }, { id: busy, work: ['translate'], slots: 4, version: '0.1.0' }));
    const now = clock();
    await db
      .insertInto('worker_heartbeats')
      .values({ id: randomUUID(), host: 'old-host', pid: 4242, work: '["docparse"]', slots: 1, version: '0.0.9', started_at: now - 60 * MINUTE, last_seen_at: now - 5 * MINUTE })
      .execute();
    await db
      .insertInto('tasks')
      .values({ id: randomUUID(), sub: graceSub, kind: 'translate', status: 'running', locale: 'en', source_name: 'annual-report.pdf', source_size: 1000, source_pages: 3, source_lang: 'en', target_lang: 'de', glossary: null, progress_done: 1, progress_total: 3, error: null, files: '[]', notes: null, attempts: 1, lease_owner: busy, lease_expires_at: now + MINUTE, created_at: now, updated_at: now, started_at: now, finished_at: null })
      .execute();

    const page = operatorPage;
    await nav(page, 'Overview').click();
    await page.getByRole('link', { name: /Workers seen in the last minute/ }).click();
    const workers = page.getByRole('region', { name: 'Workers' });
    await workers.getByRole('cell', { name: 'translate, docparse, email' }).waitFor();
    assert.equal(await workers.getByRole('cell', { name: 'Idle', exact: true }).count(), 2, 'the idle worker (and the silent one) are listed, running nothing');
    assert.ok(await workers.getByRole('link', { name: 'annual-report.pdf' }).isVisible(), 'the busy one shows what it runs');
    assert.ok(await workers.getByText('4 at once').isVisible());
    assert.ok(await workers.getByText(/no heartbeat for over a minute/).isVisible(), 'the silent one says so');
    await check(page, 'console-tasks-workers');
  });

  test('"E-mails pending" on the overview leads to the e-mail outbox: queued, sent, failed and retried messages of both kinds', async () => {
    const { db, clock } = signet.deps;
    await queueAccountMail(db, clock(), { kind: 'password_reset', sub: graceSub, to: 'grace@example.com', locale: 'en', linkExpiresAt: clock() + 60 * MINUTE });
    const failed = await queueAccountMail(db, clock(), { kind: 'email_verification', sub: graceSub, to: 'grace@example.com', locale: 'en', linkExpiresAt: clock() + 60 * MINUTE });
    await db.updateTable('mail_outbox').set({ status: 'failed', attempts: 5, reason: 'smtp 550 mailbox unavailable', next_attempt_at: null }).where('id', '=', failed).execute();
    const retrying = await queueAccountMail(db, clock(), { kind: 'password_reset', sub: operatorSub, to: 'operator@example.com', locale: 'en', linkExpiresAt: clock() + 60 * MINUTE });
    await db.updateTable('mail_outbox').set({ attempts: 1, reason: 'smtp connection refused', next_attempt_at: clock() + MINUTE }).where('id', '=', retrying).execute();
    const sent = await queueAccountMail(db, clock(), { kind: 'email_verification', sub: operatorSub, to: 'operator@example.com', locale: 'en', linkExpiresAt: clock() + 60 * MINUTE });
    await db.updateTable('mail_outbox').set({ status: 'sent', attempts: 1, next_attempt_at: null }).where('id', '=', sent).execute();
    await notifySecurity(db, clock, graceSub, 'en', { category: 'security', outcome: 'recovery_code_used', remaining: 9 });

    const page = operatorPage;
    await nav(page, 'Overview').click();
    const tile = page.getByRole('link', { name: /E-mails pending/ });
    const pending = Number((await tile.locator('.tile-value').textContent())?.trim());
    assert.ok(pending >= 2, `the tile counts queued account mail and e-mail notifications (${pending})`);
    await tile.click();
    await page.getByRole('heading', { name: 'E-mail outbox' }).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('status'), 'pending');
    const rows = page.locator('tbody tr');
    assert.equal(await rows.count(), pending, 'the page lists what the tile counted');
    assert.ok(await page.getByText(/next attempt/).isVisible(), 'a message waiting for its retry says when');
    await check(page, 'console-mail-pending');
    await page.getByRole('link', { name: /All/ }).click();
    await page.getByRole('cell', { name: /security \(notification\)/ }).first().waitFor();
    await page.getByRole('link', { name: /Sent/ }).click();
    assert.equal(await page.locator('tbody tr').count(), 1, 'the one sent message');
    await page.getByRole('link', { name: /Failed/ }).click();
    await page.getByRole('cell', { name: 'smtp 550 mailbox unavailable' }).waitFor();
    await page.getByRole('link', { name: /Retried/ }).click();
    assert.ok(await page.getByRole('cell', { name: 'smtp connection refused' }).isVisible());
    assert.ok(await page.getByRole('cell', { name: 'smtp 550 mailbox unavailable' }).isVisible(), 'tried five times: retried');
    await page.setViewportSize(PHONE);
    await check(page, 'console-mail-retried-phone');
    await page.setViewportSize(DESKTOP);
  });

  test('an unknown /admin/… address is a console page (404) with the navigation; /admin/v1/… stays the API\'s JSON 404', async () => {
    const page = operatorPage;
    const res = await page.goto(`${admin}/admin/no-such-page`);
    assert.equal(res?.status(), 404);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    assert.ok(await nav(page, 'Overview').isVisible());
    await check(page, 'console-404');
    const api = await fetch(`${admin}/admin/v1/no-such-call`);
    assert.equal(api.status, 404);
    assert.match(api.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(((await api.json()) as { error: string }).error, 'not_found');
  });
});
