// The server-rendered pages: sessions and their cookies, CSRF, sign-out, languages, escaping, headers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY } from '../../src/config/clock.ts';
import * as clients from '../../src/clients/clients.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertFrameHeaders, csrfOf, EMAIL, flowSetup, PASSWORD, TinyBrowser } from '../oauth/authorize-support.ts';
import { HOST } from '../oauth/token-fixtures.ts';

forEachDatabase('pages', (open) => {
  test('the session cookie is HttpOnly, SameSite=Lax, Path=/, has no Domain, and its id is rotated at sign-in', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    const first = await browser.signIn();
    const cookie = first.cookies.find((c) => c.name === 'signet_session')!;
    assert.ok(cookie, 'a session cookie is set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/');
    assert.equal(cookie.domain, undefined, 'no Domain: each host keeps its own');
    assert.equal(cookie.secure, undefined, 'not Secure on http');
    const second = await browser.post('/signin', { _csrf: csrfOf((await new TinyBrowser(flow).get('/signin')).body), identifier: EMAIL, password: PASSWORD });
    // The CSRF secret above belongs to another browser: refused, session unchanged.
    assert.equal(second.statusCode, 403);
    // Signing in again from a signed-in browser: a new id, the old session ended.
    const page = await browser.get('/account');
    assert.equal(page.statusCode, 200);
    const again = await browser.post('/signin', { _csrf: csrfOf(page.body), identifier: EMAIL, password: PASSWORD });
    assert.equal(again.statusCode, 303);
    const rotated = again.cookies.find((c) => c.name === 'signet_session')!;
    assert.notEqual(rotated.value, cookie.value, 'a new session id at sign-in');
    const sessions = await database.db.selectFrom('sessions').selectAll().execute();
    assert.equal(sessions.length, 1, 'the previous session was ended');
    assert.ok(!JSON.stringify(sessions).includes(rotated.value), 'the id is stored only as a keyed hash');
  });

  test('"Sign-in by e-mail or phone plus password": the phone number may be written with spaces', async () => {
    const flow = await flowSetup(await open());
    const res = await new TinyBrowser(flow).signIn(undefined, '+49 151 12345678');
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/account');
  });

  test('the session cookie is Secure when the served origin is https', async () => {
    const flow = await flowSetup(await open(), { SIGNET_BASE_URL: 'https://secure.signet.test' });
    const browser = new TinyBrowser(flow);
    const page = await browser.get('/signin');
    assert.equal(page.cookies.find((c) => c.name === 'signet_csrf')?.secure, true);
    const res = await browser.post('/signin', { _csrf: csrfOf(page.body), identifier: EMAIL, password: PASSWORD });
    assert.equal(res.statusCode, 303);
    assert.equal(res.cookies.find((c) => c.name === 'signet_session')?.secure, true);
  });

  test('"each host keeps its own session cookie": a session from one host is not signed in on the other', async () => {
    const flow = await flowSetup(await open());
    const main = new TinyBrowser(flow);
    await main.signIn();
    assert.equal((await main.get('/account')).statusCode, 200);
    const alt = new TinyBrowser(flow, 'alt.signet.test');
    for (const [k, v] of main.cookies) alt.cookies.set(k, v);
    const res = await alt.get('/account');
    assert.equal(res.statusCode, 302, 'the cookie value means nothing on the other host');
    assert.equal(res.headers.location, '/signin?return=%2Faccount');
  });

  test('a wrong address typed in a browser gets an HTML 404 page in the person\'s language (title, lang, a way back, the security headers); programs and the OAuth and API paths get JSON; GET /signout sends a person to the page with the Sign out button, or to sign-in', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const page = await flow.app.inject({ method: 'GET', url: '/no/such/page', headers: { host: HOST, accept: 'text/html,application/xhtml+xml', 'accept-language': 'zh-CN' } });
    assert.equal(page.statusCode, 404);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<html lang="zh-CN"/);
    assert.match(page.body, /<title>[^<]+<\/title>/);
    assert.match(page.body, /href="\/account"/);
    assertFrameHeaders(page.headers);
    for (const [url, accept] of [['/no/such/page', 'application/json'], ['/no/such/page', '*/*'], ['/oauth/nothing', 'text/html'], ['/api/v1/nothing', 'text/html']] as const) {
      const res = await flow.app.inject({ method: 'GET', url, headers: { host: HOST, accept } });
      assert.equal(res.statusCode, 404, url);
      assert.equal(res.json<{ error: string }>().error, 'not_found', `${url} with Accept ${accept}`);
    }
    const anonymous = await browser.get('/signout');
    assert.equal(anonymous.statusCode, 303);
    assert.equal(anonymous.headers.location, '/signin');
    await browser.signIn();
    const signedIn = await browser.get('/signout');
    assert.equal(signedIn.statusCode, 303);
    assert.equal(signedIn.headers.location, '/account');
    assert.equal((await browser.get('/account')).statusCode, 200, 'a GET signs nobody out');
  });

  test('"GET / sends a person to /account or /signin"; a favicon.ico is served', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const anonymous = await browser.get('/');
    assert.equal(anonymous.statusCode, 302);
    assert.equal(anonymous.headers.location, '/signin?return=%2Faccount');
    await browser.signIn();
    const signedIn = await browser.get('/');
    assert.equal(signedIn.statusCode, 302);
    assert.equal(signedIn.headers.location, '/account');
    const icon = await browser.get('/favicon.ico');
    assert.equal(icon.statusCode, 200);
    assert.equal(icon.headers['content-type'], 'image/x-icon');
    assertFrameHeaders(icon.headers);
  });

  test('sessions expire after 14 days', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    flow.clock.advance(14 * DAY + 1);
    assert.equal((await browser.get('/account')).statusCode, 302);
  });

  test('CSRF: "every form carries a CSRF token"; a POST without a valid token is a 403 page and changes nothing', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    await browser.get('/signin');
    for (const [path, form] of [
      ['/signin', { identifier: EMAIL, password: PASSWORD }],
      ['/signin', { identifier: EMAIL, password: PASSWORD, _csrf: 'forged' }],
      ['/consent', { request: 'x', decision: 'allow' }],
      ['/account/withdraw', { client_id: flow.clientId }],
      ['/signout', {}],
      ['/language', { lang: 'zh-CN' }],
    ] as const) {
      const res = await browser.post(path, form);
      assert.equal(res.statusCode, 403, `${path} without a valid token`);
      assert.match(String(res.headers['content-type']), /text\/html/);
      assert.match(res.body, /reload the page and try again/);
      assertFrameHeaders(res.headers);
    }
    assert.equal((await database.db.selectFrom('sessions').selectAll().execute()).length, 0);
    // Every form on every page carries the token.
    await browser.signIn();
    for (const path of ['/account', '/signin']) {
      const page = await browser.get(path === '/signin' ? '/signin' : path);
      if (page.statusCode !== 200) continue;
      const forms = page.body.match(/<form /g)?.length ?? 0;
      const tokens = page.body.match(/name="_csrf"/g)?.length ?? 0;
      assert.ok(forms > 0 && forms === tokens, `${path}: ${forms} forms, ${tokens} tokens`);
    }
  });

  test('sign-out ends the session', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    const out = await browser.submit('/account', '/signout', {});
    assert.equal(out.statusCode, 303);
    assert.equal((await database.db.selectFrom('sessions').selectAll().execute()).length, 0);
    assert.equal((await browser.get('/account')).statusCode, 302);
    assert.match((await browser.get(String(out.headers.location))).body, /You are signed out/);
  });

  test('languages: English by default and for unmatched Accept-Language (the landmark names); Simplified Chinese for zh, zh-CN, zh-Hans; the switch sticks', async () => {
    const flow = await flowSetup(await open());
    const landmarks = (body: string) => ['Email or phone', 'Password', 'Sign in'].every((name) => body.includes(`>${name}<`));
    assert.ok(landmarks((await new TinyBrowser(flow).get('/signin')).body));
    assert.ok(landmarks((await new TinyBrowser(flow, flow.host, { 'accept-language': 'fr-FR, de;q=0.8' }).get('/signin')).body));
    for (const header of ['zh', 'zh-CN', 'zh-Hans-CN', 'fr;q=0.9, zh-CN;q=0.8']) {
      const page = await new TinyBrowser(flow, flow.host, { 'accept-language': header }).get('/signin');
      assert.match(page.body, /<html lang="zh-CN">/, header);
      assert.match(page.body, />邮箱或手机号</);
    }
    assert.match((await new TinyBrowser(flow, flow.host, { 'accept-language': 'en;q=0.9, zh;q=0.5' }).get('/signin')).body, /<html lang="en">/);

    const browser = new TinyBrowser(flow, flow.host, { 'accept-language': 'zh-CN' });
    const switched = await browser.submit('/signin', '/language', { lang: 'en', return: '/signin' });
    assert.equal(switched.statusCode, 303);
    assert.equal(switched.headers.location, '/signin');
    assert.ok(landmarks((await browser.get('/signin')).body), 'the choice sticks over Accept-Language');
    // After a failed attempt (a POST), the switch still returns to the same flow.
    const id = await browser.authorize();
    const failed = await browser.submit(`/signin?request=${id}`, '/signin', { identifier: EMAIL, password: 'wrong password', request: id });
    assert.match(failed.body, new RegExp(`name="return" value="/signin\\?request=${id}"`));
    const offsite = await browser.submit('/signin', '/language', { lang: 'zh-CN', return: '//evil.example/' });
    assert.equal(offsite.headers.location, '/account', 'the way back is local only');
    assert.match((await browser.get('/signin')).body, /<html lang="zh-CN">/);
  });

  test('pages escape what they show: an application name with markup is text', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const { client } = await clients.registerClient(database.db, flow.clock, flow.deps.keys.tokenHash, { name: '<script>alert(1)</script>', redirectUris: ['https://x.example/cb'] });
    const browser = new TinyBrowser(flow);
    const res = await browser.get(`/oauth/authorize?client_id=${client.clientId}&redirect_uri=${encodeURIComponent('https://x.example/cb')}`);
    const page = await browser.get(new URL(String(res.headers.location)).pathname + new URL(String(res.headers.location)).search);
    assert.ok(!page.body.includes('<script>'));
    assert.match(page.body, /&lt;script&gt;/);
  });

  test('every page carries the frame-blocking headers and a strict CSP with no inline script; the stylesheet is served', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const id = await browser.authorize();
    for (const path of ['/signin', `/signin?request=${id}`, '/signin?request=unknown', '/static/signet.css']) {
      const res = await browser.get(path);
      assertFrameHeaders(res.headers);
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
      if (path.endsWith('.css')) assert.equal(res.statusCode, 200);
      // Scripts only from files (the sign-in page loads static/passkeys.js for its passkey button).
      else assert.doesNotMatch(res.body, /<script(?![^>]*\ssrc="\/static\/[\w.-]+\.js")|style=/);
    }
    await browser.signIn(id);
    for (const path of [`/consent?request=${id}`, '/account']) {
      const res = await browser.get(path);
      assert.equal(res.statusCode, 200, path);
      assertFrameHeaders(res.headers);
      // Scripts only from files (signed-in pages load static/inbox.js for the live unread badge).
      assert.doesNotMatch(res.body, /<script(?![^>]*\ssrc="\/static\/[\w.-]+\.js")|style=/);
    }
    const consent = await browser.get(`/consent?request=${id}`);
    assert.match(String(consent.headers['content-security-policy']), /form-action 'self' https:\/\/app\.example/, 'the form may end at the callback');
  });
});
