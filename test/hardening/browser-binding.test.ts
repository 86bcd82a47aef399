// Hardening 8, "A pending request is not bound to the browser that started it": /oauth/authorize sets
// a browser-binding cookie and stores the request under a keyed hash of its id together with that
// value; a different browser opening /signin?request=… gets an error page and can finish nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { BROWSER_BINDING_COOKIE, PENDING_REQUEST_LIFETIME_MS } from '../../src/oauth/authorization-requests.ts';
import { chromiumSkip } from '../helpers/browser.ts';
import { startBrowserFlow, type BrowserFlow } from '../helpers/browser-flow.ts';
import type { CallbackServer } from '../helpers/callback-server.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import type { RunningSignet } from '../helpers/live-server.ts';
import { csrfOf, EMAIL, flowSetup, PASSWORD, TinyBrowser } from '../oauth/authorize-support.ts';

forEachDatabase('pending requests bound to the browser', (open) => {
  test('"a different browser opening /signin?request=… gets an error page": it cannot sign in into that request, see its consent page or finish it', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const starter = new TinyBrowser(flow);
    const id = await starter.authorize({ state: 'mine' });

    const other = new TinyBrowser(flow);
    const page = await other.get(`/signin?request=${id}`);
    assert.equal(page.statusCode, 400);
    assert.match(page.body, /start signing in again/);
    // Signed in on its own, the other browser still cannot continue or decide that request.
    const signedIn = await other.submit('/signin', '/signin', { identifier: EMAIL, password: PASSWORD, request: id });
    assert.equal(signedIn.statusCode, 400, 'a sign-in form naming the request is refused');
    await other.signIn();
    assert.equal((await other.get(`/consent?request=${id}`)).statusCode, 400);
    const csrf = csrfOf((await other.get('/account')).body);
    assert.equal((await other.post('/consent', { _csrf: csrf, request: id, decision: 'allow', scope: ['profile'] })).statusCode, 400);
    assert.equal((await database.db.selectFrom('token_chains').selectAll().execute()).length, 0, 'no code');

    // The browser that started it finishes it.
    await starter.signIn(id);
    const allowed = await starter.consent(id, 'allow');
    assert.equal(allowed.statusCode, 303);
    assert.equal(new URL(String(allowed.headers.location)).searchParams.get('state'), 'mine');
  });

  test('the binding cookie: HttpOnly, SameSite=Lax, Path=/, no Domain, outlives the pending request; one value per browser, so two tabs both finish', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const res = await browser.get(flow.authorizePath());
    const cookie = res.cookies.find((c) => c.name === BROWSER_BINDING_COOKIE);
    assert.ok(cookie, 'set at authorize');
    assert.match(cookie.value, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
    assert.equal(cookie.domain, undefined);
    assert.equal(cookie.maxAge, PENDING_REQUEST_LIFETIME_MS / 1000);
    const first = new URL(String(res.headers.location)).searchParams.get('request')!;
    const second = await browser.authorize({ state: 'tab-2' });
    assert.equal(browser.cookies.get(BROWSER_BINDING_COOKIE), cookie.value, 'the second tab keeps the value');
    await browser.signIn(first);
    assert.equal((await browser.consent(second, 'allow')).statusCode, 303, 'tab 2');
    // Tab 1 asked for the same scope, which the grant now covers: straight to the callback with a code.
    const firstDone = await browser.get(`/consent?request=${first}`);
    assert.equal(firstDone.statusCode, 302, 'tab 1');
    assert.equal(new URL(String(firstDone.headers.location)).searchParams.get('code')?.length, 44);
  });

  test('a forged or stolen request id with another binding value finds nothing', async () => {
    const flow = await flowSetup(await open());
    const starter = new TinyBrowser(flow);
    const id = await starter.authorize();
    const forger = new TinyBrowser(flow);
    forger.cookies.set(BROWSER_BINDING_COOKIE, 'A'.repeat(43));
    assert.equal((await forger.get(`/signin?request=${id}`)).statusCode, 400);
    forger.cookies.set(BROWSER_BINDING_COOKIE, 'not a binding value');
    assert.equal((await forger.get(`/signin?request=${id}`)).statusCode, 400);
    assert.equal((await starter.get(`/signin?request=${id}`)).statusCode, 200);
  });
});

describe('pending requests bound to the browser, in Chromium', { skip: chromiumSkip() }, () => {
  let database: BrowserFlow['database'];
  let signet: RunningSignet;
  let callback: CallbackServer;
  let browser: Browser;
  let clientId: string;

  let flow: BrowserFlow | undefined;

  before(async () => {
    flow = await startBrowserFlow({ email: 'bound@example.com', password: 'a long bound password' }, 'Bound App');
    ({ database, signet, callback, browser, clientId } = flow);
  });

  after(() => flow?.close());

  test('"a different browser opening /signin?request=… gets an error page" — while the browser that started it signs in and lands on the callback', async () => {
    const starter = await browser.newContext();
    const stranger = await browser.newContext();
    try {
      const page = await starter.newPage();
      await page.goto(`${signet.baseUrl}/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: callback.url, scope: 'openid profile', state: 'bound-1' })}`);
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
      const signinUrl = page.url();
      assert.match(signinUrl, /\/signin\?request=/);

      const other = await stranger.newPage();
      const response = await other.goto(signinUrl);
      assert.equal(response?.status(), 400);
      assert.ok(await other.getByText('start signing in again').isVisible(), 'an error page that says what to do');
      assert.equal(await other.getByRole('button', { name: 'Sign in', exact: true }).count(), 0);

      await page.getByLabel('Email or phone').fill('bound@example.com');
      await page.getByLabel('Password').fill('a long bound password');
      const landed = callback.next();
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('button', { name: 'Allow' }).click();
      const url = await landed;
      assert.equal(url.searchParams.get('state'), 'bound-1');
      assert.equal(url.searchParams.get('code')?.length, 44);
    } finally {
      await starter.close();
      await stranger.close();
    }
  });
});
