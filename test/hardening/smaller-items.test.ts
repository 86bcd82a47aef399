// Hardening 12, "Smaller": CSRF tokens rotated at sign-in; `__Host-` cookie names on https; log redaction of `code` that keeps
// `err.code`; 405 with `Allow: POST` on GET /oauth/token and /oauth/revoke; and a warning naming the
// application (client_id) for each of the spec's own risky rules.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../src/web/logging.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { csrfOf, flowSetup, TinyBrowser } from '../oauth/authorize-support.ts';
import { HOST, oauthFixture, type TokenJson } from '../oauth/token-fixtures.ts';

type LogLine = { level: number; msg: string; clientId?: string; event?: string; err?: { code?: unknown } };

function parsed(logs: string[]): LogLine[] {
  return logs.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line) as LogLine);
}

function warningFor(logs: string[], event: string): LogLine | undefined {
  return parsed(logs).find((l) => l.level === 40 && l.event === event);
}

test('log redaction of `code` must not hide `err.code`: SQLITE_FULL, ECONNREFUSED, a SQLSTATE and errno stay; an authorization code is still redacted', async () => {
  const lines: string[] = [];
  const log = createLogger('info', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
  const authorizationCode = 'Zm9vYmFyYmF6cXV4cXV1eHF1dXpxdXV6cXV1enF1dXo=';
  log.error({ err: Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }) }, 'a');
  log.error({ err: Object.assign(new Error('refused'), { code: 'ECONNREFUSED', errno: -111 }) }, 'b');
  log.error({ err: Object.assign(new Error('duplicate key'), { code: '23505' }) }, 'c');
  log.error({ err: { code: -28 } }, 'd');
  log.info({ code: authorizationCode, query: { code: authorizationCode }, err: { code: authorizationCode } }, 'e');
  await new Promise((resolve) => setImmediate(resolve));
  const out = lines.map((l) => JSON.parse(l) as Record<string, { code?: unknown }> & { msg: string });
  assert.deepEqual(out.slice(0, 4).map((l) => l.err!.code), ['SQLITE_FULL', 'ECONNREFUSED', '23505', -28]);
  assert.ok(!lines.join('').includes(authorizationCode), 'the authorization code appears nowhere');
  assert.equal((out[4] as unknown as { code: string }).code, '[redacted]');
});

forEachDatabase('smaller hardening items', (open) => {
  test('CSRF tokens are rotated at sign-in: a form token from before signing in is refused after it; a token from a page after it works', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const before = csrfOf((await browser.get('/signin')).body);
    const signedIn = await browser.post('/signin', { _csrf: before, identifier: 'person@example.com', password: 'correct horse battery' });
    assert.equal(signedIn.statusCode, 303);
    assert.ok(signedIn.cookies.some((c) => c.name === 'signet_csrf' && c.value !== ''), 'a new CSRF secret comes with the sign-in');
    const stale = await browser.post('/signout', { _csrf: before });
    assert.equal(stale.statusCode, 403, 'the token from before sign-in no longer works');
    const fresh = csrfOf((await browser.get('/account')).body);
    assert.notEqual(fresh, before);
    assert.equal((await browser.post('/signout', { _csrf: fresh })).statusCode, 303);
  });

  test('"`__Host-` cookie names on https": with every host on https, the session, CSRF, browser-binding and language cookies are named __Host-… and are Secure, Path=/, with no Domain; the whole flow works with them; on plain http the names stay bare', async () => {
    const flow = await flowSetup(await open(), { SIGNET_BASE_URL: 'https://signet.test', SIGNET_ALT_BASE_URL: 'https://alt.signet.test' });
    const browser = new TinyBrowser(flow);
    const seen = new Map<string, { secure?: boolean; path?: string; domain?: string }>();
    const keep = <R extends { cookies: Array<{ name: string; value: string; secure?: boolean; path?: string; domain?: string }> }>(res: R): R => {
      for (const c of res.cookies) if (c.value !== '') seen.set(c.name, c);
      return res;
    };
    const authorized = keep(await browser.get(flow.authorizePath({ response_type: 'code', state: 's' })));
    const requestId = new URL(String(authorized.headers.location)).searchParams.get('request')!;
    keep(await browser.get(`/signin?request=${requestId}`));
    keep(await browser.signIn(requestId));
    const decided = keep(await browser.consent(requestId, 'allow'));
    assert.equal(decided.statusCode, 303, decided.body);
    assert.match(String(decided.headers.location), /^https:\/\/app\.example\/callback\?.*code=/, 'the flow completes with the prefixed cookies');
    keep(await browser.post('/language', { _csrf: csrfOf((await browser.get('/account')).body), lang: 'zh-CN', return: '/account' }));
    assert.match((await browser.get('/account')).body, /<html lang="zh-CN"/, 'the language choice is read back');
    for (const name of ['__Host-signet_session', '__Host-signet_csrf', '__Host-signet_flow', '__Host-signet_lang']) {
      const cookie = seen.get(name);
      assert.ok(cookie, `${name} was set (saw ${[...seen.keys()].join(', ')})`);
      assert.equal(cookie.secure, true, `${name} is Secure`);
      assert.equal(cookie.path, '/', `${name} has Path=/`);
      assert.equal(cookie.domain, undefined, `${name} has no Domain`);
    }
    assert.ok(![...seen.keys()].some((name) => name.startsWith('signet_')), 'no bare name on https');

    const plain = new TinyBrowser(await flowSetup(await open()));
    const names = (await plain.get('/signin')).cookies.map((c) => c.name);
    assert.deepEqual(names, ['signet_csrf'], 'on http the names stay bare (a browser would drop a __Host- cookie without Secure)');
  });

  test('CSRF tokens are rotated at sign-out too: a token from the signed-in pages is refused after it', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    const signedInToken = csrfOf((await browser.get('/account')).body);
    assert.equal((await browser.post('/signout', { _csrf: signedInToken })).statusCode, 303);
    const res = await browser.post('/language', { _csrf: signedInToken, lang: 'en', return: '/signin' });
    assert.equal(res.statusCode, 403);
  });

  test('`GET /oauth/token` and `GET /oauth/revoke` → 405 with `Allow: POST`, in the OAuth error shape (PUT, PATCH, DELETE and HEAD too)', async () => {
    const f = await oauthFixture(await open());
    for (const url of ['/oauth/token', '/oauth/revoke']) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const) {
        const res = await f.app.inject({ method, url: `${url}?grant_type=authorization_code`, headers: { host: HOST } });
        assert.equal(res.statusCode, 405, `${method} ${url}`);
        assert.equal(res.headers.allow, 'POST');
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers['x-frame-options'], 'DENY');
        if (method !== 'HEAD') {
          const body = res.json<{ error: string; error_description: string }>();
          assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
          assert.equal(body.error, 'invalid_request');
        }
      }
    }
    assert.equal((await f.token({ grant_type: 'nothing' })).statusCode, 400, 'POST is still served');
    await f.app.close();
  });

  test('risky rule "lower-case `s256` read as `plain`" logs a warning naming the application (client_id); `S256` and `plain` do not', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    await browser.authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    await browser.authorize({ code_challenge: challenge, code_challenge_method: 'plain' });
    await browser.authorize({ code_challenge: challenge });
    assert.equal(warningFor(flow.logs, 'code_challenge_method_read_as_plain'), undefined);
    await browser.authorize({ code_challenge: challenge, code_challenge_method: 's256' });
    const warning = warningFor(flow.logs, 'code_challenge_method_read_as_plain');
    assert.ok(warning, 'a warning');
    assert.equal(warning.clientId, flow.clientId);
    assert.match(warning.msg, /S256/);
  });

  test('risky rule "a refresh token revoked without a hint" logs a warning naming the application (client_id); the token stays valid, the answer stays 200 {}', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const form = { client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: tokens.refresh_token };
    const res = await f.revoke(form);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {});
    const warning = warningFor(f.logs, 'refresh_token_revoked_without_hint');
    assert.ok(warning, 'a warning');
    assert.equal(warning.clientId, f.confidential.client.clientId);
    assert.equal((await f.refresh(tokens.refresh_token)).statusCode, 200, 'spec: nothing is revoked without the hint');
    await f.app.close();
  });

  test('risky rule "a concurrent refresh / replay" logs a warning naming the application (client_id)', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const results = await Promise.all([f.refresh(tokens.refresh_token), f.refresh(tokens.refresh_token)]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [200, 400], 'two refreshes at once: one wins, the other is a replay');
    const warning = warningFor(f.logs, 'refresh_token_replayed');
    assert.ok(warning, 'a warning');
    assert.equal(warning.clientId, f.confidential.client.clientId);
    assert.match(warning.msg, /serialize/);
    // A plain replay later warns as well.
    const fresh = await f.exchange();
    const next = (await f.refresh(fresh.refresh_token)).json<TokenJson>();
    assert.ok(next.refresh_token);
    const before = parsed(f.logs).filter((l) => l.event === 'refresh_token_replayed').length;
    assert.equal((await f.refresh(fresh.refresh_token)).statusCode, 400);
    assert.equal(parsed(f.logs).filter((l) => l.level === 40 && l.event === 'refresh_token_replayed').length, before + 1);
    await f.app.close();
  });
});

