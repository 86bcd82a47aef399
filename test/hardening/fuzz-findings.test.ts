// What the fuzz test (fuzz.test.ts) found, each kept as a plain example on both databases (the token
// endpoint's, a client_id with a NUL, is in rate-limits-token.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findAccount, findAccountByEmail } from '../../src/accounts/accounts.ts';
import { createAdminKey } from '../../src/admin/admin-keys.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { csrfOf, flowSetup, TinyBrowser } from '../oauth/authorize-support.ts';
import { HOST, oauthFixture } from '../oauth/token-fixtures.ts';

forEachDatabase('fuzz findings', (open) => {
  test('a foreign Host on an OAuth path is refused 421 in the OAuth error shape ({error, error_description}); elsewhere {error, message}', async () => {
    const f = await oauthFixture(await open());
    const oauth = await f.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: 'evil.example' } });
    assert.equal(oauth.statusCode, 421);
    assert.deepEqual(Object.keys(oauth.json()).sort(), ['error', 'error_description']);
    const page = await f.app.inject({ method: 'GET', url: '/signin', headers: { host: 'evil.example' } });
    assert.equal(page.statusCode, 421);
    assert.deepEqual(Object.keys(page.json()).sort(), ['error', 'message']);
    assert.equal((await f.app.inject({ method: 'GET', url: '/oauth/userinfo', headers: { host: HOST } })).statusCode, 401, 'the right host still works');
    await f.app.close();
  });

  test('admin API: a path segment over 200 characters (a URL Fastify cannot route) is answered in the admin shape with nosniff and no-store, not Fastify\'s own body', async () => {
    const f = await oauthFixture(await open());
    const { db, clock, keys, logger, objects } = f.deps;
    const admin = await buildAdminApp({ db, clock, keys, objects, logger, trustProxy: false });
    for (const url of [`/admin/v1/accounts/${'a'.repeat(300)}`, '/admin/v1/accounts/%zz']) {
      const res = await admin.inject({ method: 'GET', url });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url.slice(0, 40)} → ${res.statusCode}`);
      assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    await admin.close();
    await f.app.close();
  });

  test('admin API: a NUL character in a path parameter, the query or a JSON body is a 400 naming where it was — never a 500 (PostgreSQL text cannot hold one); without a key it is still 401', async () => {
    const f = await oauthFixture(await open());
    const { db, clock, keys, logger, objects } = f.deps;
    const admin = await buildAdminApp({ db, clock, keys, objects, logger, trustProxy: false });
    const { key } = await createAdminKey(db, clock, keys.tokenHash, 'fuzz findings');
    const calls: Array<{ method: 'GET' | 'POST' | 'PATCH'; url: string; payload?: unknown; where: string }> = [
      { method: 'GET', url: '/admin/v1/clients/%00', where: 'path' },
      { method: 'GET', url: `/admin/v1/accounts/${f.sub}%00`, where: 'path' },
      { method: 'GET', url: '/admin/v1/accounts?email=a%00@example.com', where: 'query string' },
      { method: 'GET', url: '/admin/v1/audit-events?type=account.%00', where: 'query string' },
      { method: 'POST', url: '/admin/v1/accounts', payload: { email: 'nul\u0000@example.com', password: 'a long password' }, where: 'body' },
      { method: 'PATCH', url: `/admin/v1/accounts/${f.sub}`, payload: { name: 'Ada\u0000' }, where: 'body' },
      { method: 'POST', url: '/admin/v1/clients', payload: { name: 'x', redirect_uris: ['https://a.example/\u0000'] }, where: 'body' },
    ];
    for (const call of calls) {
      const withKey = await admin.inject({ method: call.method, url: call.url, headers: { authorization: `Bearer ${key}` }, ...(call.payload === undefined ? {} : { payload: call.payload as object }) });
      assert.equal(withKey.statusCode, 400, `${call.method} ${call.url}: ${withKey.body}`);
      assert.match(withKey.json<{ message: string }>().message, new RegExp(`^The ${call.where} contains a NUL`));
      const withoutKey = await admin.inject({ method: call.method, url: call.url, ...(call.payload === undefined ? {} : { payload: call.payload as object }) });
      assert.equal(withoutKey.statusCode, 401);
    }
    await admin.close();
    await f.app.close();
  });

  test('/inbox/read (the no-script form) with an id that is no notification id — a NUL character included — goes back to the list: never a 500 (PostgreSQL cannot compare a NUL)', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    assert.equal((await browser.signIn()).statusCode, 303);
    const page = await browser.get('/account');
    for (const id of ['a\u0000b', 'not-a-uuid', '']) {
      const res = await browser.post('/inbox/read', { _csrf: csrfOf(page.body), id });
      assert.equal(res.statusCode, 303, `${JSON.stringify(id)}: ${res.body.slice(0, 200)}`);
      assert.equal(res.headers.location, '/inbox');
    }
    await flow.app.close();
  });

  test('/account: a client_id with a NUL character (Withdraw, Mute, Unmute, the ?withdrawn= and ?muted= notices) names no application — never a 500', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    assert.equal((await browser.signIn()).statusCode, 303);
    const page = await browser.get('/account');
    for (const action of ['/account/withdraw', '/account/mute', '/account/unmute']) {
      const res = await browser.post(action, { _csrf: csrfOf(page.body), client_id: `${flow.clientId}\u0000` });
      assert.equal(res.statusCode, 303, `${action}: ${res.body.slice(0, 200)}`);
    }
    for (const notice of ['withdrawn', 'muted', 'unmuted']) assert.equal((await browser.get(`/account?${notice}=a%00b`)).statusCode, 200, notice);
    await flow.app.close();
  });

  test('profile and sign-up: control characters (a NUL included) are dropped from a display name; a picture URL with a space or a control character is refused (400) — never a 500', async () => {
    const flow = await flowSetup(await open(), { SIGNET_SIGNUP: 'open' });
    const browser = new TinyBrowser(flow);
    assert.equal((await browser.signIn()).statusCode, 303);
    const page = await browser.get('/account');
    const saved = await browser.post('/account/profile', { _csrf: csrfOf(page.body), name: 'Pat\u0000 \u0007Smith', picture: '' });
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 200));
    assert.equal((await findAccount(flow.deps.db, flow.sub))?.name, 'Pat Smith');
    for (const picture of ['https://img.example/a\u0000b.png', 'https://img.example/a b.png']) {
      const refused = await browser.post('/account/profile', { _csrf: csrfOf(page.body), name: 'Pat', picture });
      assert.equal(refused.statusCode, 400, JSON.stringify(picture));
    }
    const stranger = new TinyBrowser(flow);
    const signup = await stranger.submit('/signup', '/signup', { email: 'new@example.com', password: 'a long enough password', name: 'New\u0000comer' });
    assert.equal(signup.statusCode, 200, signup.body.slice(0, 200));
    assert.equal((await findAccountByEmail(flow.deps.db, 'new@example.com'))?.name, 'Newcomer');
    await flow.app.close();
  });
});
