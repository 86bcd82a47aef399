// GET /oauth/userinfo: claims by scope with the spec's omission rules, the Bearer header, RFC 6750
// answers for every kind of unusable token, and CORS for allowlisted browser applications.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount, disableAccount } from '../../src/accounts/accounts.ts';
import { updateClient } from '../../src/clients/clients.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { BROWSER_ORIGIN, HOST, oauthFixture, type OAuthFixture } from './token-fixtures.ts';

async function claims(f: OAuthFixture, scope: string, sub?: string): Promise<Record<string, unknown>> {
  const tokens = await f.exchange(scope, sub);
  const res = await f.userinfo(`Bearer ${tokens.access_token}`);
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.headers['cache-control'], 'no-store');
  return res.json<Record<string, unknown>>();
}

function assertChallenge(res: { statusCode: number; headers: Record<string, unknown>; json<T>(): T }, withError: boolean): void {
  assert.equal(res.statusCode, 401);
  const challenge = String(res.headers['www-authenticate']);
  assert.match(challenge, /^Bearer realm="signet"/);
  assert.equal(/error="invalid_token"/.test(challenge), withError, challenge);
  assert.equal(res.json<{ error: string }>().error, 'invalid_token');
}

forEachDatabase('userinfo', (open) => {
  test('User profile: claims by scope — "sub always"; profile → name, picture; email → email, email_verified; phone → phone_number, phone_number_verified', async () => {
    const f = await oauthFixture(await open(), {}, { phone: '+4915112345678', phoneVerified: false, picture: 'https://img.example/ada.png' });
    assert.deepEqual(await claims(f, 'openid'), { sub: f.sub });
    assert.deepEqual(await claims(f, 'openid profile'), { sub: f.sub, name: 'Ada Lovelace', picture: 'https://img.example/ada.png' });
    assert.deepEqual(await claims(f, 'openid email'), { sub: f.sub, email: 'ada@example.com', email_verified: true });
    assert.deepEqual(await claims(f, 'phone'), { sub: f.sub, phone_number: '+4915112345678', phone_number_verified: false });
    assert.deepEqual(Object.keys(await claims(f, 'openid profile email phone')).sort(), ['email', 'email_verified', 'name', 'phone_number', 'phone_number_verified', 'picture', 'sub']);
    await f.app.close();
  });

  test('User profile: picture is "Empty string if unset"; name omitted when unset; email / phone "Omitted entirely if the account has no e-mail / phone"', async () => {
    const f = await oauthFixture(await open());
    const bare = await createAccount(f.deps.db, f.clock, { phone: '+4915199999999', password: 'another-long-password' });
    assert.deepEqual(await claims(f, 'openid profile email', bare.sub), { sub: bare.sub, picture: '' });
    const noPhone = await claims(f, 'openid phone');
    assert.deepEqual(noPhone, { sub: f.sub }, 'the fixture person has no phone: phone_number and phone_number_verified are omitted');
    await f.app.close();
  });

  test('User profile: sub is a string, numeric for accounts that predate the schema migration', async () => {
    const f = await oauthFixture(await open());
    const legacy = await createAccount(f.deps.db, f.clock, { email: 'old@example.com', legacyNumericId: true, password: 'another-long-password' });
    const body = await claims(f, 'openid', legacy.sub);
    assert.equal(typeof body.sub, 'string');
    assert.match(String(body.sub), /^\d+$/);
    await f.app.close();
  });

  test('Authorization: Bearer <token> — "the prefix is case-sensitive": bearer, BEARER, Basic or no token at all → 401 with a WWW-Authenticate: Bearer challenge', async () => {
    const f = await oauthFixture(await open());
    const { access_token } = await f.exchange();
    for (const header of [undefined, `bearer ${access_token}`, `BEARER ${access_token}`, `Basic ${access_token}`, 'Bearer ', access_token]) {
      assertChallenge(await f.userinfo(header), false);
    }
    assertChallenge(await f.app.inject({ method: 'GET', url: `/oauth/userinfo?access_token=${encodeURIComponent(access_token)}`, headers: { host: HOST } }), false);
    assert.equal((await f.userinfo(`Bearer ${access_token}`)).statusCode, 200);
    await f.app.close();
  });

  test('a missing, unknown, expired or revoked token gets 401 with WWW-Authenticate: Bearer error="invalid_token" (RFC 6750)', async () => {
    const f = await oauthFixture(await open());
    assertChallenge(await f.userinfo(`Bearer ${'z'.repeat(43)}=`), true);
    const revoked = await f.exchange();
    await f.revoke({ client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: revoked.access_token });
    assertChallenge(await f.userinfo(`Bearer ${revoked.access_token}`), true);
    const expiring = await f.exchange();
    f.clock.advance(7200 * 1000);
    assertChallenge(await f.userinfo(`Bearer ${expiring.access_token}`), true);
    await f.app.close();
  });

  test('a token of a disabled account or a disabled application is refused with 401', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    await updateClient(f.deps.db, f.clock, f.confidential.client.clientId, { enabled: false });
    assertChallenge(await f.userinfo(`Bearer ${tokens.access_token}`), true);
    await updateClient(f.deps.db, f.clock, f.confidential.client.clientId, { enabled: true });
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200);
    await disableAccount(f.deps.db, f.clock, f.sub);
    assertChallenge(await f.userinfo(`Bearer ${tokens.access_token}`), true);
    await f.app.close();
  });

  test('"/oauth/userinfo is currently the only endpoint that an OAuth access token can call": token and revoke ignore a Bearer header', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    const revoke = await f.post('/oauth/revoke', { token: tokens.access_token }, bearer);
    assert.equal(revoke.statusCode, 400, 'no client_id in the body: the bearer token authenticates nothing');
    const token = await f.token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: f.confidential.client.clientId }, bearer);
    assert.equal(token.statusCode, 401);
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200, 'nothing was revoked');
    await f.app.close();
  });

  test('browser-only applications: userinfo sends CORS headers only to origins on the allowlist of the token\'s application', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const allowed = await f.userinfo(`Bearer ${tokens.access_token}`, { origin: BROWSER_ORIGIN });
    assert.equal(allowed.statusCode, 200);
    assert.equal(allowed.headers['access-control-allow-origin'], BROWSER_ORIGIN);
    assert.match(String(allowed.headers.vary), /Origin/);
    const foreign = await f.userinfo(`Bearer ${tokens.access_token}`, { origin: 'https://evil.example' });
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
    // The "Other" application has no allowlist: its tokens get no CORS headers even for spa.example.
    const code = await f.mintCode({ clientId: f.other.client.clientId });
    const other = (await f.token({ grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/callback?x=1', client_id: f.other.client.clientId, client_secret: f.other.secret })).json<{ access_token: string }>();
    const notListed = await f.userinfo(`Bearer ${other.access_token}`, { origin: BROWSER_ORIGIN });
    assert.equal(notListed.statusCode, 200);
    assert.equal(notListed.headers['access-control-allow-origin'], undefined);
    await f.app.close();
  });
});
