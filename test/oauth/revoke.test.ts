// POST /oauth/revoke (spec "POST /oauth/revoke", RFC 7009).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { updateClient } from '../../src/clients/clients.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertOAuthError, HOST, oauthFixture } from './token-fixtures.ts';

forEachDatabase('revocation', (open) => {
  test('Errors | revoke call that matches nothing → `200` with an empty object, not an error: unknown token, another application\'s token, a refresh token without the hint', async () => {
    const f = await oauthFixture(await open());
    const mine = await f.exchange();
    const code = await f.mintCode({ clientId: f.other.client.clientId });
    const theirs = (await f.token({ grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/callback?x=1', client_id: f.other.client.clientId, client_secret: f.other.secret })).json<{ access_token: string; refresh_token: string }>();
    const auth = { client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    const cases: Array<Record<string, string>> = [
      { ...auth, token: 'does-not-exist' },
      { ...auth, token: theirs.access_token },
      { ...auth, token: theirs.refresh_token, token_type_hint: 'refresh_token' },
      { ...auth, token: mine.refresh_token },
      { ...auth, token: mine.refresh_token, token_type_hint: 'access_token' },
      { ...auth, token: mine.access_token, token_type_hint: 'refresh_token' },
    ];
    for (const form of cases) {
      const res = await f.revoke(form);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {});
    }
    // nothing was revoked in those cases
    assert.equal((await f.userinfo(`Bearer ${mine.access_token}`)).statusCode, 200);
    assert.equal((await f.userinfo(`Bearer ${theirs.access_token}`)).statusCode, 200);
    assert.equal((await f.refresh(mine.refresh_token)).statusCode, 200);
    await f.app.close();
  });

  test('client_id and client_secret in the body, "so a public client cannot use this endpoint": bad client credentials are 401 invalid_client', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const basic = `Basic ${Buffer.from(`${f.confidential.client.clientId}:${f.confidential.secret}`).toString('base64')}`;
    const cases: Array<[Record<string, string>, Record<string, string>]> = [
      [{ client_id: f.publicClient.clientId, token: tokens.access_token }, {}],
      [{ client_id: f.publicClient.clientId, client_secret: 'anything', token: tokens.access_token }, {}],
      [{ client_id: f.confidential.client.clientId, client_secret: 'wrong', token: tokens.access_token }, {}],
      [{ client_id: f.confidential.client.clientId, token: tokens.access_token }, { authorization: basic }],
      [{ client_id: 'nobody', client_secret: f.confidential.secret, token: tokens.access_token }, {}],
    ];
    for (const [form, headers] of cases) assertOAuthError(await f.post('/oauth/revoke', form, headers), 401, 'invalid_client');
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200);
    await f.app.close();
  });

  test('revocation reads form bodies only; a missing token or a repeated parameter is invalid_request', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const auth = { client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    const json = await f.app.inject({ method: 'POST', url: '/oauth/revoke', headers: { host: HOST, 'content-type': 'application/json' }, payload: JSON.stringify({ ...auth, token: tokens.access_token }) });
    assertOAuthError(json, 400, 'invalid_request');
    assertOAuthError(await f.revoke(auth), 400, 'invalid_request');
    const twice = `${new URLSearchParams(auth).toString()}&token=${encodeURIComponent(tokens.access_token)}&token=x`;
    assertOAuthError(await f.post('/oauth/revoke', twice), 400, 'invalid_request');
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200);
    await f.app.close();
  });

  test('a disabled application may still revoke its own tokens (revocation only takes access away)', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    await updateClient(f.deps.db, f.clock, f.confidential.client.clientId, { enabled: false });
    const res = await f.revoke({ client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: tokens.refresh_token, token_type_hint: 'refresh_token' });
    assert.equal(res.statusCode, 200);
    await updateClient(f.deps.db, f.clock, f.confidential.client.clientId, { enabled: true });
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'invalid_grant');
    await f.app.close();
  });
});
