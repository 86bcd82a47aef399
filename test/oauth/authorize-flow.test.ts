// The interactive flow over HTTP: sign-in, consent, the callback, prompt=none, and withdrawing.
import { decodeCode } from '../../src/oauth/token-format.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MINUTE } from '../../src/config/clock.ts';
import { forgetExpiredPendingRequests } from '../../src/oauth/authorization-requests.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { assertFrameHeaders, flowSetup, PASSWORD as PASSWORD_TEXT, REDIRECT_URI, TinyBrowser, type Flow } from './authorize-support.ts';

async function redeem(flow: Flow, code: string) {
  return flow.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { host: flow.host, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: flow.clientId, client_secret: flow.clientSecret, redirect_uri: REDIRECT_URI }).toString(),
  });
}

async function signedInBrowser(flow: Flow): Promise<TinyBrowser> {
  const browser = new TinyBrowser(flow);
  const res = await browser.signIn();
  assert.equal(res.statusCode, 303);
  return browser;
}

/** An RFC 7636 S256 challenge (of the RFC's example verifier). */
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

forEachDatabase('authorization flow', (open) => {
  test('"After the user approves, the browser is redirected to the callback with query parameters `code` and `state`" — a 44-character code ending in `=`, nothing usable stored, bound to client, redirect URI, scope and challenge', async () => {
    const database: TestDatabase = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    const callback = await browser.fullFlow({ state: 'af0ifjsldkj', scope: 'openid profile email', code_challenge: CHALLENGE, code_challenge_method: 'S256' });
    assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT_URI);
    const code = callback.searchParams.get('code')!;
    assert.equal(code.length, 44);
    assert.match(code, /^[A-Za-z0-9_-]{43}=$/);
    assert.equal(callback.searchParams.get('state'), 'af0ifjsldkj');
    // The code is its chain's first state (generation 0): the row holds what redeeming it checks; the
    // code names the row under a MAC and is stored nowhere.
    const rows = await database.db.selectFrom('token_chains').selectAll().execute();
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.id, decodeCode(flow.deps.keys.tokenHash, code), 'the code names its chain');
    assert.equal(row.generation, 0, 'not redeemed yet');
    assert.ok(!Object.values(row).some((value) => typeof value === 'string' && (value.includes(code) || value.includes(code.slice(0, 43)))), 'the code itself is not stored');
    assert.deepEqual(
      [row.client_id, row.sub, row.redirect_uri, row.scope, row.code_challenge, row.code_challenge_method, Number(row.code_expires_at) - Number(row.created_at)],
      [flow.clientId, flow.sub, REDIRECT_URI, 'openid profile email', CHALLENGE, 'S256', 10 * MINUTE],
    );
  });

  test('consent: `openid` is fixed, the others can be unticked — "the granted scope, which may be narrower than requested"', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    const id = await browser.authorize({ scope: 'openid profile email' });
    await browser.signIn(id);
    const page = await browser.get(`/consent?request=${id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Demo App/);
    assert.match(page.body, /value="openid" checked disabled/);
    assert.match(page.body, /email, email_verified/, 'each scope shows the claims it releases');
    assert.match(page.body, />Allow</);
    assert.match(page.body, />Deny</);
    // Only profile ticked; openid is granted anyway although a disabled checkbox is not submitted.
    const res = await browser.consent(id, 'allow', ['profile']);
    const code = new URL(String(res.headers.location)).searchParams.get('code')!;
    const row = await database.db.selectFrom('token_chains').select('scope').where('generation', '=', 0).executeTakeFirstOrThrow();
    assert.equal(row.scope, 'openid profile');
    const token = await redeem(flow, code);
    if (token.statusCode === 200) assert.equal(token.json().scope, 'openid profile', 'the token response reports what was granted');
  });

  test('"When the user declines, the callback receives `error=access_denied` and the `state`"; no code is issued', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    const id = await browser.authorize({ state: 'declined-1' });
    await browser.signIn(id);
    const res = await browser.consent(id, 'deny');
    assert.equal(res.statusCode, 303);
    const callback = new URL(String(res.headers.location));
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('state'), 'declined-1');
    assert.equal(callback.searchParams.get('code'), null);
    assert.equal((await database.db.selectFrom('token_chains').selectAll().execute()).length, 0, 'no code');
    assert.equal((await database.db.selectFrom('grants').selectAll().execute()).length, 0);
  });

  test('a pending request is finished once: a second Allow, or one after 10 minutes, gets a page saying to start again', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const id = await browser.authorize();
    await browser.signIn(id);
    const page = await browser.get(`/consent?request=${id}`);
    const form = { _csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!, request: id, decision: 'allow' };
    assert.equal((await browser.post('/consent', form)).statusCode, 303);
    const again = await browser.post('/consent', form);
    assert.equal(again.statusCode, 400);
    assert.match(again.body, /start signing in again/);
    assertFrameHeaders(again.headers);

    const late = await browser.authorize();
    flow.clock.advance(10 * MINUTE + 1);
    const expired = await browser.get(`/consent?request=${late}`);
    assert.equal(expired.statusCode, 400);
    assert.equal(await forgetExpiredPendingRequests(flow.deps), 2, 'expired pending requests are swept');
  });

  test('"state … echoed into the callback URL without escaping" with SIGNET_COMPAT=legacy; form-encoded otherwise; URL-safe values round-trip identically', async () => {
    const database = await open();
    const raw = 'a b&c=d';
    const urlSafe = 'Zm9vYmFy-_0123456789abcdef';
    for (const compat of ['legacy', undefined] as const) {
      await database.db.deleteFrom('users').execute();
      await database.db.deleteFrom('clients').execute();
      const flow = await flowSetup(database, compat ? { SIGNET_COMPAT: compat } : {});
      const answer = async (state: string) => {
        const browser = await signedInBrowser(flow);
        await database.db.deleteFrom('grants').execute();
        const id = await browser.authorize({ state });
        return String((await browser.consent(id, 'allow')).headers.location);
      };
      const first = await answer(raw);
      const second = await answer(urlSafe);
      if (compat === 'legacy') {
        assert.ok(first.endsWith(`&state=${raw}`), `legacy: byte for byte: ${first}`);
        assert.equal(new URL(first).searchParams.get('state'), 'a b', 'unescaped: the & splits the value, as the spec warns');
      } else {
        assert.ok(first.endsWith('&state=a+b%26c%3Dd&iss=http%3A%2F%2Fsignet.test'), first);
        assert.equal(new URL(first).searchParams.get('state'), raw, 'escaped: the value round-trips');
      }
      assert.ok(second.endsWith(compat === 'legacy' ? `&state=${urlSafe}` : `&state=${urlSafe}&iss=http%3A%2F%2Fsignet.test`), `${compat ?? 'default'}: ${second}`);
      assert.equal(new URL(second).searchParams.get('state'), urlSafe);
    }
  });

  test('a redirect URI that already has a query gets the parameters appended with `&`', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const { registerClient } = await import('../../src/clients/clients.ts');
    const { client } = await registerClient(database.db, flow.clock, flow.deps.keys.tokenHash, { name: 'Query App', redirectUris: ['https://q.example/cb?tenant=7'] });
    const browser = new TinyBrowser(flow);
    const res = await browser.get(`/oauth/authorize?client_id=${client.clientId}&redirect_uri=${encodeURIComponent('https://q.example/cb?tenant=7')}&state=s1`);
    const id = new URL(String(res.headers.location)).searchParams.get('request')!;
    await browser.signIn(id);
    const done = await browser.consent(id, 'deny');
    assert.equal(String(done.headers.location), 'https://q.example/cb?tenant=7&error=access_denied&state=s1&iss=http%3A%2F%2Fsignet.test');
  });

  test('"Grants are remembered": a later request whose scopes the grant covers skips the consent page after sign-in; a wider one asks again', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    await browser.fullFlow({ scope: 'openid profile email' });
    // Signed in already: our page goes straight on to the callback with a code.
    const id = await browser.authorize({ scope: 'openid email', state: 's2' });
    const signin = await browser.get(`/signin?request=${id}`);
    assert.equal(signin.statusCode, 302);
    const skipped = await browser.get(String(signin.headers.location));
    assert.equal(skipped.statusCode, 302);
    const callback = new URL(String(skipped.headers.location));
    assert.equal(callback.searchParams.get('code')?.length, 44);
    assert.equal(callback.searchParams.get('state'), 's2');
    // In a new browser, after signing in.
    const other = new TinyBrowser(flow);
    const id2 = await other.authorize({ scope: 'openid profile' });
    const afterSignIn = await other.signIn(id2);
    const next = await other.get(String(afterSignIn.headers.location));
    assert.equal(next.statusCode, 302);
    assert.ok(String(next.headers.location).startsWith(`${REDIRECT_URI}?code=`));
    // Wider than the grant: consent again.
    const id3 = await other.authorize({ scope: 'openid phone' });
    assert.equal((await other.get(`/consent?request=${id3}`)).statusCode, 200);
    const grant = await database.db.selectFrom('grants').selectAll().executeTakeFirstOrThrow();
    assert.equal(grant.scope, 'openid profile email');
  });

  test('prompt=none: "not signed in" → login_required; "no matching grant" → consent_required; "the grant check failed" → interaction_required; "a matching grant" → code; `state` re-appended every time', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const silent = async (browser: TinyBrowser, state: string) => {
      const res = await browser.get(flow.authorizePath({ prompt: 'none', state, scope: 'openid profile' }));
      assert.equal(res.statusCode, 302);
      const url = new URL(String(res.headers.location));
      assert.equal(`${url.origin}${url.pathname}`, REDIRECT_URI);
      assert.equal(url.searchParams.get('state'), state, 'state re-appended');
      return url.searchParams;
    };
    const anonymous = new TinyBrowser(flow);
    assert.equal((await silent(anonymous, 'n1')).get('error'), 'login_required');

    const browser = await signedInBrowser(flow);
    assert.equal((await silent(browser, 'n2')).get('error'), 'consent_required');

    await browser.consent(await browser.authorize({ scope: 'openid' }), 'allow');
    // A grant for openid only does not match openid profile.
    assert.equal((await silent(browser, 'n3')).get('error'), 'consent_required');

    const id = await browser.authorize({ scope: 'openid profile' });
    await browser.consent(id, 'allow');
    const codes = await database.db.selectFrom('token_chains').select('id').execute();
    const granted = await silent(browser, 'n4');
    assert.equal(granted.get('code')?.length, 44, 'a code, with no consent screen');
    assert.equal((await database.db.selectFrom('token_chains').select('id').execute()).length, codes.length + 1);

    await database.db.schema.alterTable('grants').renameTo('grants_away').execute();
    try {
      assert.equal((await silent(browser, 'n5')).get('error'), 'interaction_required');
    } finally {
      await database.db.schema.alterTable('grants_away').renameTo('grants').execute();
    }
  });

  test('prompt=none never shows a page: no pending request is stored', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    await new TinyBrowser(flow).get(flow.authorizePath({ prompt: 'none' }));
    assert.equal((await database.db.selectFrom('authorization_requests').selectAll().execute()).length, 0);
  });

  test('withdraw: "the user withdraws the application in account settings" → grant deleted, every token revoked, "next refresh fails with invalid_grant", then prompt=none answers consent_required', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    const callback = await browser.fullFlow({ scope: 'openid profile' });
    const token = await redeem(flow, callback.searchParams.get('code')!);
    assert.equal(token.statusCode, 200, token.body);
    const { refresh_token: refreshToken, access_token: accessToken } = token.json() as { refresh_token: string; access_token: string };

    const account = await browser.get('/account');
    assert.equal(account.statusCode, 200);
    assert.match(account.body, /Demo App/);
    assert.match(account.body, /<strong>openid<\/strong> — Sign you in with your Signet account<\/li>\s*<li><strong>profile<\/strong> — Your name and picture/, 'the scopes as the consent page words them');
    assert.match(account.body, />Withdraw</);
    assertFrameHeaders(account.headers);

    const withdrawn = await browser.submit('/account', '/account/withdraw', { client_id: flow.clientId });
    assert.equal(withdrawn.statusCode, 303);
    assert.equal((await database.db.selectFrom('grants').selectAll().execute()).length, 0);
    const after = await browser.get(String(withdrawn.headers.location));
    assert.match(after.body, /no longer has access/);
    assert.doesNotMatch(after.body, />Withdraw</);

    const refresh = await flow.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { host: flow.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: flow.clientId, client_secret: flow.clientSecret }).toString(),
    });
    assert.equal(refresh.statusCode, 400);
    assert.equal(refresh.json().error, 'invalid_grant');
    const userinfo = await flow.app.inject({ url: '/oauth/userinfo', headers: { host: flow.host, authorization: `Bearer ${accessToken}` } });
    assert.equal(userinfo.statusCode, 401, 'the access token is revoked too');

    const silent = await browser.get(flow.authorizePath({ prompt: 'none', state: 'w1' }));
    assert.equal(new URL(String(silent.headers.location)).searchParams.get('error'), 'consent_required');
  });

  test('logs at debug level carry no password, code, state, pending-request id or session id', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const state = 'secret-state-7f3a9c';
    const id = await browser.authorize({ state });
    await browser.signIn(id);
    assert.equal((await new TinyBrowser(flow).submit('/signin', '/signin', { identifier: 'person@example.com', password: 'a wrong password' })).statusCode, 401);
    const done = await browser.consent(id, 'allow');
    const code = new URL(String(done.headers.location)).searchParams.get('code')!;
    const logs = flow.logs.join('');
    assert.ok(logs.length > 0);
    for (const secret of [code, state, id, PASSWORD_TEXT, 'a wrong password', browser.cookies.get('signet_session')!]) {
      assert.ok(!logs.includes(secret), `the log does not contain ${secret.slice(0, 6)}…`);
    }
  });
});
