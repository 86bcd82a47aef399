// Issue 20, one row per refresh chain: codes and tokens issued before migration 0010 (random values
// stored as keyed hashes in their own rows) keep working after an upgrade, until they end — nobody is
// signed out of their applications by the upgrade, and every rule still holds for them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { DAY, MINUTE } from '../../src/config/clock.ts';
import { keyedHash, newOpaqueToken } from '../../src/oauth/secrets.ts';
import { decodeAccessToken, decodeRefreshToken } from '../../src/oauth/token-format.ts';
import * as store from '../../src/oauth/tokens.store.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertOAuthError, oauthFixture, REDIRECT_URI, type OAuthFixture, type TokenJson } from './token-fixtures.ts';

/** A pair as the earlier format issued it: two random values, stored only as keyed hashes. */
async function earlierPair(f: OAuthFixture, chainId = randomUUID()): Promise<{ access: string; refresh: string; chainId: string }> {
  const access = newOpaqueToken();
  const refresh = newOpaqueToken();
  const now = f.clock();
  const base = { client_id: f.confidential.client.clientId, sub: f.sub, scope: 'openid profile email', chain_id: chainId, created_at: now, revoked_at: null };
  await store.insertAccessToken(f.deps.db, { ...base, token_hash: keyedHash(f.deps.keys.tokenHash, access), expires_at: now + 2 * 60 * MINUTE });
  await store.insertRefreshToken(f.deps.db, { ...base, token_hash: keyedHash(f.deps.keys.tokenHash, refresh), chain_expires_at: now + 30 * DAY, rotated_at: null });
  return { access, refresh, chainId };
}

forEachDatabase('codes and tokens from before one row per chain (migration 0010)', (open) => {
  test('an access token of the earlier format still reads userinfo, and is revoked (no hint) as before', async () => {
    const f = await oauthFixture(await open());
    const { access } = await earlierPair(f);
    assert.equal(decodeAccessToken(f.deps.keys.tokenHash, access), undefined, 'not of the chain format');
    assert.equal((await f.userinfo(`Bearer ${access}`)).statusCode, 200);
    assert.equal((await f.revoke({ token: access, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret })).statusCode, 200);
    assert.equal((await f.userinfo(`Bearer ${access}`)).statusCode, 401);
    await f.app.close();
  });

  test('"a new one is issued on every token call": a refresh token of the earlier format rotates into a chain of the new format; presented again it is the replay, which revokes the new chain too', async () => {
    const f = await oauthFixture(await open());
    const old = await earlierPair(f);
    const res = await f.refresh(old.refresh);
    assert.equal(res.statusCode, 200, res.body);
    const next = res.json<TokenJson>();
    const fields = decodeRefreshToken(f.deps.keys.tokenHash, next.refresh_token);
    assert.ok(fields, 'the new refresh token is of the chain format');
    const chain = await store.findChain(f.deps.db, fields.chainId);
    assert.equal(chain?.legacy_chain_id, old.chainId, 'the chain remembers where it came from');
    assert.equal(chain?.expires_at, f.clock() + 30 * DAY, '"a replacement inherits the original expiry"');
    assert.equal((await f.userinfo(`Bearer ${next.access_token}`)).statusCode, 200);
    assert.equal((await f.userinfo(`Bearer ${old.access}`)).statusCode, 200, 'rotation does not revoke access tokens');

    assertOAuthError(await f.refresh(old.refresh), 400, 'invalid_grant');
    for (const access of [next.access_token, old.access]) assert.equal((await f.userinfo(`Bearer ${access}`)).statusCode, 401, 'every token of that person for that application is revoked');
    assertOAuthError(await f.refresh(next.refresh_token), 400, 'invalid_grant');
    await f.app.close();
  });

  test('a code of the earlier format redeems into a chain; "a code presented a second time is refused and every token issued from it is revoked"', async () => {
    const f = await oauthFixture(await open());
    const code = newOpaqueToken();
    const chainId = randomUUID();
    await store.insertCode(f.deps.db, {
      code_hash: keyedHash(f.deps.keys.tokenHash, code),
      client_id: f.confidential.client.clientId,
      sub: f.sub,
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile',
      code_challenge: null,
      code_challenge_method: null,
      chain_id: chainId,
      created_at: f.clock(),
      expires_at: f.clock() + 10 * MINUTE,
      redeemed_at: null,
    });
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    const res = await f.token(form);
    assert.equal(res.statusCode, 200, res.body);
    const tokens = res.json<TokenJson>();
    assert.equal(tokens.scope, 'openid profile');
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200);
    assertOAuthError(await f.token(form), 400, 'invalid_grant');
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401, 'the chain the code started is revoked');
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'invalid_grant');
    await f.app.close();
  });
});
