// spec "States and transitions": every row about authorization codes, refresh tokens and access
// tokens, each as a test named after its row, on SQLite and on PostgreSQL. Time moves by the injected clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY, MINUTE, SECOND } from '../../src/config/clock.ts';
import { revokeAllTokensOf } from '../../src/oauth/codes.ts';
import { DESCRIPTION_REFRESH_TOKEN_EXPIRED } from '../../src/oauth/errors.ts';
import { decodeCode, decodeRefreshToken } from '../../src/oauth/token-format.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertOAuthError, oauthFixture, REDIRECT_URI, s256Challenge, VERIFIER, type TokenJson } from './token-fixtures.ts';

forEachDatabase('States and transitions: codes and tokens', (open) => {
  test('Authorization code | issued | token call with `authorization_code` | valid credential, within 10 minutes, unused, matching redirect_uri → redeemed; access and refresh tokens issued', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode();
    f.clock.advance(10 * MINUTE - SECOND);
    const res = await f.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<TokenJson>();
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 7200);
    assert.equal(body.access_token.length, 44);
    assert.equal(body.scope, 'openid profile email');
    // The code is its chain's generation 0; redeemed, the chain's generation 1 is live.
    const row = await f.deps.db.selectFrom('token_chains').select(['generation', 'rotated_at']).where('id', '=', decodeCode(f.deps.keys.tokenHash, code)!).executeTakeFirstOrThrow();
    assert.deepEqual([row.generation, row.rotated_at], [1, f.clock()], 'the code is now redeemed');
    assert.equal((await f.userinfo(`Bearer ${body.access_token}`)).statusCode, 200);
    assert.equal((await f.refresh(body.refresh_token)).statusCode, 200);
    await f.app.close();
  });

  test('Authorization code | issued | token call with `authorization_code` | valid credential (code_verifier for a code issued with a code_challenge) → redeemed', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode({ clientId: f.publicClient.clientId, challenge: s256Challenge(VERIFIER), method: 'S256' });
    const res = await f.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.publicClient.clientId, code_verifier: VERIFIER });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<TokenJson>().token_type, 'Bearer');
    await f.app.close();
  });

  test('Authorization code | issued | 10 minutes elapse → expired', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode();
    f.clock.advance(10 * MINUTE);
    const res = await f.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret });
    assertOAuthError(res, 400, 'invalid_grant');
    await f.app.close();
  });

  test('Authorization code | redeemed | presented a second time → refused, and every token issued from it is revoked', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode();
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    const first = (await f.token(form)).json<TokenJson>();
    const rotated = (await f.refresh(first.refresh_token)).json<TokenJson>();
    assertOAuthError(await f.token(form), 400, 'invalid_grant');
    assert.equal((await f.userinfo(`Bearer ${first.access_token}`)).statusCode, 401);
    assert.equal((await f.userinfo(`Bearer ${rotated.access_token}`)).statusCode, 401, 'tokens from rotations of that chain are revoked too');
    assertOAuthError(await f.refresh(rotated.refresh_token), 400, 'invalid_grant');
    await f.app.close();
  });

  test('Refresh token | active (latest) | token call with `refresh_token` | valid client credentials → revoked; a new access token and a new refresh token are issued', async () => {
    const f = await oauthFixture(await open());
    const first = await f.exchange();
    const res = await f.refresh(first.refresh_token);
    assert.equal(res.statusCode, 200, res.body);
    const second = res.json<TokenJson>();
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.equal(second.expires_in, 7200);
    assert.equal(second.scope, first.scope);
    // spec: "the previous one is revoked at once": the chain moved on a generation, so the first refresh
    // token is now of an older one (presenting it would be the replay).
    const fields = decodeRefreshToken(f.deps.keys.tokenHash, first.refresh_token)!;
    const chain = await f.deps.db.selectFrom('token_chains').selectAll().where('id', '=', fields.chainId).executeTakeFirstOrThrow();
    assert.deepEqual([chain.generation, chain.rotated_at], [fields.generation + 1, f.clock()], 'spec: "the previous one is revoked at once"');
    assert.equal((await f.userinfo(`Bearer ${second.access_token}`)).statusCode, 200);
    await f.app.close();
  });

  test('Refresh token | revoked by rotation | presented again to the token endpoint → stays rejected; every access and refresh token of that user for that application is revoked (treated as replay)', async () => {
    const f = await oauthFixture(await open());
    const unrelated = await f.exchange(); // another sign-in of the same person with the same application
    const first = await f.exchange();
    const second = (await f.refresh(first.refresh_token)).json<TokenJson>();
    assertOAuthError(await f.refresh(first.refresh_token), 400, 'invalid_grant');
    assertOAuthError(await f.refresh(first.refresh_token), 400, 'invalid_grant', undefined);
    for (const access of [second.access_token, unrelated.access_token]) assert.equal((await f.userinfo(`Bearer ${access}`)).statusCode, 401);
    for (const refresh of [second.refresh_token, unrelated.refresh_token]) assertOAuthError(await f.refresh(refresh), 400, 'invalid_grant');
    const rows = await f.tokenRows(f.confidential.client.clientId);
    assert.equal(rows.chains.length, 2, 'two sign-ins, two chains');
    assert.ok(rows.chains.every((r) => r.revoked_at !== null), 'every token of that user for that application is revoked');
    await f.app.close();
  });

  test('Refresh token | revoked by rotation | replay revokes nothing of other applications', async () => {
    const f = await oauthFixture(await open());
    const otherCode = await f.mintCode({ clientId: f.other.client.clientId });
    const otherTokens = (
      await f.token({ grant_type: 'authorization_code', code: otherCode, redirect_uri: REDIRECT_URI, client_id: f.other.client.clientId, client_secret: f.other.secret })
    ).json<TokenJson>();
    const first = await f.exchange();
    await f.refresh(first.refresh_token);
    await f.refresh(first.refresh_token);
    assert.equal((await f.userinfo(`Bearer ${otherTokens.access_token}`)).statusCode, 200);
    await f.app.close();
  });

  test('Refresh token | active | 30 days after first authorization → expired; later refresh fails with `invalid_grant` (刷新令牌已过期)', async () => {
    const f = await oauthFixture(await open());
    const first = await f.exchange();
    f.clock.advance(30 * DAY);
    assertOAuthError(await f.refresh(first.refresh_token), 400, 'invalid_grant', DESCRIPTION_REFRESH_TOKEN_EXPIRED);
    await f.app.close();
  });

  test('Refresh token | "a replacement inherits the original expiry, so the chain ends 30 days after the user first authorized the application": rotation never extends it', async () => {
    const f = await oauthFixture(await open());
    let current = await f.exchange();
    for (let day = 0; day < 29; day++) {
      f.clock.advance(DAY);
      const res = await f.refresh(current.refresh_token);
      assert.equal(res.statusCode, 200, `day ${day + 1}: ${res.body}`);
      current = res.json<TokenJson>();
    }
    f.clock.advance(DAY - 1);
    const lastGood = await f.refresh(current.refresh_token);
    assert.equal(lastGood.statusCode, 200, 'one millisecond before the 30 days end the chain still works');
    f.clock.advance(1);
    assertOAuthError(await f.refresh(lastGood.json<TokenJson>().refresh_token), 400, 'invalid_grant', DESCRIPTION_REFRESH_TOKEN_EXPIRED);
    await f.app.close();
  });

  test('Refresh token | active | revoke call with `token_type_hint=refresh_token` | valid client credentials → revoked; response `200` with `{}`', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const res = await f.revoke({ client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: tokens.refresh_token, token_type_hint: 'refresh_token' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {});
    const refused = await f.refresh(tokens.refresh_token);
    assertOAuthError(refused, 400, 'invalid_grant');
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200, 'spec: "Access and refresh tokens are revoked in separate calls"');
    await f.app.close();
  });

  test('Access token | active | revoke call, no hint or another hint | token found among access tokens → revoked; response `200` with `{}`', async () => {
    const f = await oauthFixture(await open());
    for (const hint of [undefined, 'access_token', 'something_else']) {
      const tokens = await f.exchange();
      const res = await f.revoke({
        client_id: f.confidential.client.clientId,
        client_secret: f.confidential.secret,
        token: tokens.access_token,
        ...(hint === undefined ? {} : { token_type_hint: hint }),
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {});
      assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401, `hint ${hint}`);
      assert.equal((await f.refresh(tokens.refresh_token)).statusCode, 200, 'the refresh token is a separate call');
    }
    await f.app.close();
  });

  test('Access token or refresh token | active | the user withdraws the application in account settings → revoked; next refresh fails with `invalid_grant`', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    await revokeAllTokensOf(f.deps.db, f.clock, f.sub, f.confidential.client.clientId);
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'invalid_grant');
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401);
    await f.app.close();
  });

  test('Access token | active | 2 hours elapse → expired: userinfo answers 401', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    f.clock.advance(7200 * SECOND - 1);
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200);
    f.clock.advance(1);
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401);
    await f.app.close();
  });
});
