// issue 35: an operator starts an import from the admin console in real headless Chromium — chooses a
// CSV file, starts, the progress bar fills as the server reads it, and the summary shows the counts and
// each refused line. A screenshot goes to /tmp/console-shots/import.png.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import { addRole } from '../../src/accounts/roles.ts';
import { beginTotpSetup, confirmTotpSetup, totpCode } from '../../src/accounts/factors/totp.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { freePort, startSignet, type RunningSignet } from '../helpers/live-server.ts';

const PASSWORD = 'a long operator password';
const SHOTS = '/tmp/console-shots';

describe('browser: starting an import from the admin console', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let adminApp: FastifyInstance;
  let admin: string;
  let browser: Browser;
  let secret: string;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    database = await sqliteDatabase();
    signet = await startSignet(database);
    const { db, clock, keys, objects, logger } = signet.deps;
    adminApp = await buildAdminApp({ db, clock, keys, objects, logger, trustProxy: false, productName: 'Signet' });
    const port = await freePort();
    await adminApp.listen({ host: '127.0.0.1', port });
    admin = `http://127.0.0.1:${port}`;
    browser = await launchChromium();
    const operator = await accounts.createAccount(db, clock, { email: 'operator@example.com', password: PASSWORD, emailVerified: true });
    await addRole(db, clock, operator.sub, 'operator');
    const setup = await beginTotpSetup(db, keys.factorSecret, clock, { sub: operator.sub, issuer: 'Signet', label: 'operator@example.com' });
    await confirmTotpSetup(db, keys.factorSecret, clock, operator.sub, totpCode(setup.secretBase32, clock()));
    secret = setup.secretBase32;
  });

  after(async () => {
    await browser?.close();
    await adminApp?.close();
    await signet?.close();
    await database?.dispose();
  });

  test('choose a CSV, start the import, watch the progress bar reach 100 %, read the counts and the refused line', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${admin}/admin`);
    await page.getByLabel('Email or phone').fill('operator@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    signet.clock.advance(30_000);
    await page.getByLabel('Code').fill(totpCode(secret, signet.clock()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Import', exact: true }).click();
    await page.getByRole('heading', { name: 'Import people' }).waitFor();

    const rows = ['email,name,email_verified'];
    for (let i = 0; i < 3000; i++) rows.push(`browser${i}@example.com,Browser Person ${i},true`);
    rows.splice(1500, 0, 'no-at-sign,Bad,true');
    await page.getByLabel('File').setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n') + '\n') });
    await page.getByLabel('Format').selectOption('csv');
    await page.getByRole('button', { name: 'Start import' }).click();
    await page.getByText('Import finished.').waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('#import-progress').evaluate((el) => (el as HTMLProgressElement).value), 100);
    assert.equal(await page.locator('#import-created').textContent(), '3000');
    assert.equal(await page.locator('#import-refused').textContent(), '1');
    const refused = page.getByRole('table', { name: 'Refused' });
    assert.match((await refused.locator('tbody tr').first().textContent()) ?? '', /^1501.*not an e-mail address/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/import.png`, fullPage: true });
    await context.close();
  });
});
