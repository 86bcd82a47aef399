// Token endpoint rules beyond the two tables: body and client-authentication rules, what is stored,
// what is logged, and browser-only applications (allowlisted origins, CORS).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertOAuthError, BROWSER_ORIGIN, HOST, oauthFixture, REDIRECT_URI, s256Challenge, VERIFIER, type TokenJson } from './token-fixtures.ts';

forEachDatabase('token endpoint rules', (open) => {
  test('response 200: {access_token, token_type "Bearer", expires_in 7200, refresh_token, scope} as JSON with Cache-Control: no-store and Pragma: no-cache', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode({ scope: 'openid email' });
    const res = await f.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json; charset=utf-8/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.pragma, 'no-cache');
    const body = res.json<TokenJson>();
    assert.equal(typeof body.scope, 'string');
    assert.equal(body.scope, 'openid email', 'spec: "scope — the granted scope"');
    assert.match(body.access_token, /^[A-Za-z0-9_-]{43}=$/);
    assert.notEqual(body.refresh_token, body.access_token);
    await f.app.close();
  });

  test('HTTP Basic client authentication is not supported: credentials are read only from the body', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode();
    const basic = `Basic ${Buffer.from(`${f.confidential.client.clientId}:${f.confidential.secret}`).toString('base64')}`;
    const withoutSecret = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId };
    assertOAuthError(await f.token(withoutSecret, { authorization: basic }), 401, 'invalid_client');
    const bodyOnly = await f.token({ ...withoutSecret, client_secret: f.confidential.secret }, { authorization: 'Basic bm9ib2R5Ondyb25n' });
    assert.equal(bodyOnly.statusCode, 200, 'a Basic header is ignored, the body credentials count');
    await f.app.close();
  });

  test('"The credential required is decided by how the code was issued": a confidential client with a PKCE code needs only code_verifier; a wrong secret sent along is still refused', async () => {
    const f = await oauthFixture(await open());
    const form = (code: string) => ({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, code_verifier: VERIFIER });
    const verifierOnly = await f.token(form(await f.mintCode({ challenge: s256Challenge(VERIFIER) })));
    assert.equal(verifierOnly.statusCode, 200, verifierOnly.body);
    assertOAuthError(await f.token({ ...form(await f.mintCode({ challenge: s256Challenge(VERIFIER) })), client_secret: 'wrong' }), 401, 'invalid_client');
    const both = await f.token({ ...form(await f.mintCode({ challenge: s256Challenge(VERIFIER) })), client_secret: f.confidential.secret });
    assert.equal(both.statusCode, 200);
    await f.app.close();
  });

  test('codes, access tokens and refresh tokens are stored only as a keyed hash; the logs hold none of them', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode();
    const res = await f.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret });
    const tokens = res.json<TokenJson>();
    const refreshed = (await f.refresh(tokens.refresh_token)).json<TokenJson>();
    await f.refresh(tokens.refresh_token); // replay, logged as refused
    await f.userinfo(`Bearer ${refreshed.access_token}`);
    await f.revoke({ client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: refreshed.refresh_token, token_type_hint: 'refresh_token' });
    const dump = JSON.stringify([
      await f.deps.db.selectFrom('token_chains').selectAll().execute(),
      await f.deps.db.selectFrom('revoked_access_tokens').selectAll().execute(),
      await f.deps.db.selectFrom('authorization_codes').selectAll().execute(),
      await f.deps.db.selectFrom('access_tokens').selectAll().execute(),
      await f.deps.db.selectFrom('refresh_tokens').selectAll().execute(),
      await f.deps.db.selectFrom('clients').selectAll().execute(),
    ]);
    const logs = f.logs.join('');
    assert.ok(logs.length > 0);
    for (const secret of [code, tokens.access_token, tokens.refresh_token, refreshed.access_token, refreshed.refresh_token, f.confidential.secret]) {
      assert.ok(!dump.includes(secret), 'the database holds no usable secret');
      assert.ok(!logs.includes(secret), 'the logs hold no secret');
    }
    await f.app.close();
  });

  test('refresh with a narrower `scope` (RFC 6749 §6): the new access token gets it, the refresh token keeps the granted scope', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange('openid profile email');
    const narrowed = await f.refresh(tokens.refresh_token, { scope: 'openid' });
    assert.equal(narrowed.statusCode, 200, narrowed.body);
    const body = narrowed.json<TokenJson>();
    assert.equal(body.scope, 'openid');
    assert.deepEqual((await f.userinfo(`Bearer ${body.access_token}`)).json(), { sub: f.sub });
    const again = (await f.refresh(body.refresh_token)).json<TokenJson>();
    assert.equal(again.scope, 'openid profile email');
    await f.app.close();
  });

  test('browser-only applications: a token request from an allowlisted Origin succeeds with Access-Control-Allow-Origin for that origin and Vary: Origin', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode({ clientId: f.publicClient.clientId, challenge: s256Challenge(VERIFIER) });
    const res = await f.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.publicClient.clientId, code_verifier: VERIFIER }, { origin: BROWSER_ORIGIN });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['access-control-allow-origin'], BROWSER_ORIGIN);
    assert.match(String(res.headers.vary), /Origin/);
    // Errors are readable by the allowlisted page too.
    const error = await f.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.publicClient.clientId, code_verifier: VERIFIER }, { origin: BROWSER_ORIGIN });
    assertOAuthError(error, 400, 'invalid_grant');
    assert.equal(error.headers['access-control-allow-origin'], BROWSER_ORIGIN);
    await f.app.close();
  });

  test('browser-only applications: a token request carrying an Origin that is not allowlisted is refused without consuming its code or refresh token', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode({ clientId: f.publicClient.clientId, challenge: s256Challenge(VERIFIER) });
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.publicClient.clientId, code_verifier: VERIFIER };
    for (const origin of ['https://evil.example', 'https://spa.example:8443', 'null', TEST_BASE_URL]) {
      const res = await f.token(form, { origin });
      assertOAuthError(res, 401, 'invalid_client');
      assert.equal(res.headers['access-control-allow-origin'], undefined, origin);
    }
    assert.equal((await f.token(form)).statusCode, 200, 'without Origin (a server) the untouched code still works');
    await f.app.close();
  });

  test('browser-only applications: a refused Origin does not consume the refresh token', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const form = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    assertOAuthError(await f.token(form, { origin: 'https://evil.example' }), 401, 'invalid_client');
    assert.equal((await f.token(form)).statusCode, 200, 'not rotated, so not a replay either');
    await f.app.close();
  });

  test('CORS preflight (OPTIONS) on /oauth/token and /oauth/userinfo: headers only for an allowlisted origin', async () => {
    const f = await oauthFixture(await open());
    for (const url of ['/oauth/token', '/oauth/userinfo']) {
      const allowed = await f.app.inject({ method: 'OPTIONS', url, headers: { host: HOST, origin: BROWSER_ORIGIN, 'access-control-request-method': url.endsWith('token') ? 'POST' : 'GET' } });
      assert.equal(allowed.statusCode, 204);
      assert.equal(allowed.headers['access-control-allow-origin'], BROWSER_ORIGIN);
      assert.match(String(allowed.headers['access-control-allow-headers']), /Authorization/);
      const refused = await f.app.inject({ method: 'OPTIONS', url, headers: { host: HOST, origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      assert.equal(refused.headers['access-control-allow-origin'], undefined);
    }
    await f.app.close();
  });
});
