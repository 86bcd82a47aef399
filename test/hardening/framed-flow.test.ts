// Hardening 7, "The flow runs inside a hidden frame through redirects": X-Frame-Options only stops a
// frame from showing a page; navigations whose Sec-Fetch-Dest is iframe, frame, embed or object are
// refused on authorize, sign-in and consent before anything is minted (spec: the flow "cannot run in a
// hidden frame").
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { chromiumSkip } from '../helpers/browser.ts';
import { startBrowserFlow, type BrowserFlow } from '../helpers/browser-flow.ts';
import type { CallbackServer } from '../helpers/callback-server.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import type { RunningSignet } from '../helpers/live-server.ts';
import { assertFrameHeaders, csrfOf, flowSetup, TinyBrowser } from '../oauth/authorize-support.ts';

const FRAMES = ['iframe', 'frame', 'embed', 'object'];

forEachDatabase('framed navigations', (open) => {
  test('"cannot run in a hidden frame": /oauth/authorize with Sec-Fetch-Dest iframe, frame, embed or object is refused (403, JSON) — no pending request, and with prompt=none no code', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    // Signed in with a grant: prompt=none would mint a code at once.
    await browser.fullFlow();
    const codesBefore = (await database.db.selectFrom('token_chains').selectAll().execute()).length;
    await database.db.deleteFrom('authorization_requests').execute();
    for (const dest of FRAMES) {
      for (const prompt of [{}, { prompt: 'none' }] as Array<Record<string, string>>) {
        const res = await flow.app.inject({ url: flow.authorizePath({ state: 's', ...prompt }), headers: { host: flow.host, 'sec-fetch-dest': dest, cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
        assert.equal(res.statusCode, 403, `${dest} ${JSON.stringify(prompt)}: ${res.body}`);
        assert.equal(res.headers.location, undefined);
        assert.equal(res.json<{ error: string }>().error, 'access_denied');
        assertFrameHeaders(res.headers);
      }
    }
    assert.equal((await database.db.selectFrom('authorization_requests').selectAll().execute()).length, 0, 'no pending request');
    assert.equal((await database.db.selectFrom('token_chains').selectAll().execute()).length, codesBefore, 'no code minted');
    // A top-level navigation (or a browser without Fetch Metadata) goes on as before.
    for (const dest of ['document', undefined]) {
      const res = await flow.app.inject({ url: flow.authorizePath({ prompt: 'none' }), headers: { host: flow.host, ...(dest ? { 'sec-fetch-dest': dest } : {}) } });
      assert.equal(res.statusCode, 302, String(dest));
    }
  });

  test('"cannot run in a hidden frame": the sign-in and consent pages, GET and POST, refuse a framed navigation before they sign anyone in or mint a code', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    const id = await browser.authorize();
    const signinPage = await browser.get(`/signin?request=${id}`);
    const framed = new TinyBrowser(flow, flow.host, { 'sec-fetch-dest': 'iframe' });
    for (const [k, v] of browser.cookies) framed.cookies.set(k, v);
    for (const dest of FRAMES) {
      framed.headers['sec-fetch-dest'] = dest;
      assert.equal((await framed.get(`/signin?request=${id}`)).statusCode, 403, `GET /signin ${dest}`);
      const post = await framed.post('/signin', { _csrf: csrfOf(signinPage.body), request: id, identifier: 'person@example.com', password: 'correct horse battery' });
      assert.equal(post.statusCode, 403, `POST /signin ${dest}`);
      assertFrameHeaders(post.headers);
    }
    assert.equal((await database.db.selectFrom('sessions').selectAll().execute()).length, 0, 'nobody was signed in');

    await browser.signIn(id);
    const consentPage = await browser.get(`/consent?request=${id}`);
    assert.equal(consentPage.statusCode, 200);
    for (const [k, v] of browser.cookies) framed.cookies.set(k, v);
    for (const dest of FRAMES) {
      framed.headers['sec-fetch-dest'] = dest;
      assert.equal((await framed.get(`/consent?request=${id}`)).statusCode, 403, `GET /consent ${dest}`);
      const post = await framed.post('/consent', { _csrf: csrfOf(consentPage.body), request: id, decision: 'allow', scope: ['profile'] });
      assert.equal(post.statusCode, 403, `POST /consent ${dest}`);
    }
    assert.equal((await database.db.selectFrom('token_chains').selectAll().execute()).length, 0, 'no code minted');
    assert.equal((await browser.consent(id, 'allow')).statusCode, 303, 'the same browser, top level, still finishes the flow');
  });
});

describe('framed navigations in Chromium', { skip: chromiumSkip() }, () => {
  let database: BrowserFlow['database'];
  let signet: RunningSignet;
  let callback: CallbackServer;
  let framer: http.Server;
  let framerUrl: string;
  let browser: Browser;
  let clientId: string;

  let flow: BrowserFlow | undefined;

  before(async () => {
    flow = await startBrowserFlow({ email: 'framed@example.com', password: 'a long framed password' }, 'Framed App');
    ({ database, signet, callback, browser, clientId } = flow);
    // A page on the same site as Signet (127.0.0.1, another port), so SameSite=Lax cookies go along into its frame.
    framer = http.createServer((req, res) => {
      const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Framer</title><iframe src="${src.replace(/"/g, '&quot;')}"></iframe>`);
    });
    await new Promise<void>((resolve) => framer.listen(0, '127.0.0.1', resolve));
    framerUrl = `http://127.0.0.1:${(framer.address() as AddressInfo).port}/`;
  });

  after(async () => {
    await new Promise<void>((resolve) => (framer ? framer.close(() => resolve()) : resolve()));
    await flow?.close();
  });

  test('"cannot run in a hidden frame": a signed-in person with a grant, framed by a same-site page — prompt=none mints no code and nothing reaches the callback', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const authorize = (params: Record<string, string>) => `${signet.baseUrl}/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: callback.url, scope: 'openid profile', ...params })}`;
    // Top level: sign in and allow, so a grant exists.
    const landed = callback.next();
    await page.goto(authorize({ state: 'top' }));
    await page.getByLabel('Email or phone').fill('framed@example.com');
    await page.getByLabel('Password').fill('a long framed password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    assert.equal((await landed).searchParams.get('state'), 'top');
    const codes = (await database.db.selectFrom('token_chains').selectAll().execute()).length;

    const statuses: number[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(`${signet.baseUrl}/oauth/authorize`)) statuses.push(response.status());
    });
    await page.goto(`${framerUrl}?src=${encodeURIComponent(authorize({ prompt: 'none', state: 'framed' }))}`);
    await page.waitForLoadState('load');
    await page.waitForTimeout(500);
    assert.deepEqual(statuses, [403], 'Chromium sent Sec-Fetch-Dest: iframe and the request was refused');
    assert.equal((await database.db.selectFrom('token_chains').selectAll().execute()).length, codes, 'no code was minted');
    assert.ok(!callback.received.some((url) => url.searchParams.get('state') === 'framed'), 'nothing reached the callback');
    await context.close();
  });
});
