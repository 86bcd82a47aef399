// spec "Errors": every row that concerns the token endpoint, as a test named after its row, on SQLite
// and PostgreSQL; plus RFC 6749 §5.2 codes and statuses for each way a token request can fail.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY } from '../../src/config/clock.ts';
import { updateClient } from '../../src/clients/clients.ts';
import { disableAccount } from '../../src/accounts/accounts.ts';
import { revokeAllTokensOf } from '../../src/oauth/codes.ts';
import { DESCRIPTION_CODE_VERIFIER_FAILED, DESCRIPTION_REFRESH_TOKEN_EXPIRED } from '../../src/oauth/errors.ts';
import { decodeCode } from '../../src/oauth/token-format.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertOAuthError, HOST, oauthFixture, REDIRECT_URI, s256Challenge, VERIFIER, type OAuthFixture, type TokenJson } from './token-fixtures.ts';

const codeForm = (f: OAuthFixture, code: string, extra: Record<string, string> = {}) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: REDIRECT_URI,
  client_id: f.confidential.client.clientId,
  client_secret: f.confidential.secret,
  ...extra,
});

forEachDatabase('Errors (token endpoint)', (open) => {
  test('Errors | token endpoint receives a JSON body → fields come back empty; error `unsupported_grant_type`', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode();
    const res = await f.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: HOST, 'content-type': 'application/json' }, payload: JSON.stringify(codeForm(f, code)) });
    assertOAuthError(res, 400, 'unsupported_grant_type');
    assert.equal((await f.token(codeForm(f, code))).statusCode, 200, 'the JSON request was not read, so the code was not consumed');
    await f.app.close();
  });

  test('Errors | any body that is not form-encoded (text, multipart, none) is read as empty → `unsupported_grant_type`', async () => {
    const f = await oauthFixture(await open());
    const bodies: Array<{ type?: string; payload?: string }> = [
      { type: 'text/plain', payload: 'grant_type=refresh_token' },
      { type: 'multipart/form-data; boundary=x', payload: '--x\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\nrefresh_token\r\n--x--\r\n' },
      { type: 'application/json; charset=utf-8', payload: '{"grant_type":' },
      {},
    ];
    for (const { type, payload } of bodies) {
      const res = await f.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: HOST, ...(type ? { 'content-type': type } : {}) }, ...(payload === undefined ? {} : { payload }) });
      assertOAuthError(res, 400, 'unsupported_grant_type');
    }
    await f.app.close();
  });

  test('Errors | refresh token expired (over 30 days) → error `invalid_grant`; the description text is 刷新令牌已过期', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    f.clock.advance(31 * DAY);
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'invalid_grant', DESCRIPTION_REFRESH_TOKEN_EXPIRED);
    await f.app.close();
  });

  test('Errors | refresh token rotated earlier → error `invalid_grant`', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    assert.equal((await f.refresh(tokens.refresh_token)).statusCode, 200);
    const res = await f.refresh(tokens.refresh_token);
    assertOAuthError(res, 400, 'invalid_grant');
    assert.notEqual(res.json<{ error_description: string }>().error_description, DESCRIPTION_REFRESH_TOKEN_EXPIRED);
    await f.app.close();
  });

  test('Errors | refresh token after consent withdrawn by the user → error `invalid_grant`; the client should restart at the authorize step', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    await revokeAllTokensOf(f.deps.db, f.clock, f.sub, f.confidential.client.clientId);
    const res = await f.refresh(tokens.refresh_token);
    assertOAuthError(res, 400, 'invalid_grant');
    assert.match(res.json<{ error_description: string }>().error_description, /authorize step/);
    await f.app.close();
  });

  test('Errors | `code_verifier` mismatch → error whose description text is code_verifier 验证失败', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode({ clientId: f.publicClient.clientId, challenge: s256Challenge(VERIFIER), method: 'S256' });
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.publicClient.clientId };
    assertOAuthError(await f.token({ ...form, code_verifier: VERIFIER.slice(0, -1) + 'A' }), 400, 'invalid_grant', DESCRIPTION_CODE_VERIFIER_FAILED);
    assertOAuthError(await f.token({ ...form, code_verifier: s256Challenge(VERIFIER) }), 400, 'invalid_grant', DESCRIPTION_CODE_VERIFIER_FAILED);
    assert.equal((await f.token({ ...form, code_verifier: VERIFIER })).statusCode, 200, 'a failed verifier does not consume the code');
    await f.app.close();
  });

  test('Errors | `code_verifier` mismatch, including a wrongly cased method such as `s256` that is treated as `plain` → code_verifier 验证失败', async () => {
    const f = await oauthFixture(await open());
    // The authorize step stores `s256` as plain; a row holding the raw `s256` is normalised the same way at redemption.
    for (const stored of ['plain', 's256']) {
      const code = await f.mintCode({ clientId: f.publicClient.clientId, challenge: s256Challenge(VERIFIER), method: 'plain' });
      await f.deps.db.updateTable('token_chains').set({ code_challenge_method: stored }).where('id', '=', decodeCode(f.deps.keys.tokenHash, code)!).execute();
      const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.publicClient.clientId };
      assertOAuthError(await f.token({ ...form, code_verifier: VERIFIER }), 400, 'invalid_grant', DESCRIPTION_CODE_VERIFIER_FAILED);
      const literal = await f.token({ ...form, code_verifier: s256Challenge(VERIFIER) });
      assert.equal(literal.statusCode, 200, `with method ${stored} the verifier is compared to the challenge literally`);
    }
    await f.app.close();
  });

  test('Errors | rotated refresh token presented again → treated as replay; all tokens of the user for that application are revoked', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const rotated = (await f.refresh(tokens.refresh_token)).json<TokenJson>();
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'invalid_grant');
    const rows = await f.tokenRows(f.confidential.client.clientId);
    assert.deepEqual(rows.chains.map((r) => r.generation), [2], 'one chain, rotated once');
    assert.ok(rows.chains.every((r) => r.revoked_at !== null));
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401, 'the first access token is revoked too');
    assert.equal((await f.userinfo(`Bearer ${rotated.access_token}`)).statusCode, 401);
    await f.app.close();
  });

  test('RFC 6749 §5.2: error codes and statuses of the token endpoint (`invalid_client` 401, the others 400), body {"error","error_description"}', async () => {
    const f = await oauthFixture(await open());
    const cid = f.confidential.client.clientId;
    const tokens = await f.exchange();
    const pkce = await f.mintCode({ clientId: f.publicClient.clientId, challenge: s256Challenge(VERIFIER) });
    const plain = await f.mintCode();
    const otherClients = await f.mintCode({ clientId: f.other.client.clientId });
    const cases: Array<[string, Record<string, string> | string, number, string]> = [
      ['no grant_type', { client_id: cid }, 400, 'unsupported_grant_type'],
      ['grant_type password', { grant_type: 'password', client_id: cid, username: 'a', password: 'b' }, 400, 'unsupported_grant_type'],
      ['grant_type client_credentials', { grant_type: 'client_credentials', client_id: cid, client_secret: f.confidential.secret }, 400, 'unsupported_grant_type'],
      ['grant_type sent twice', 'grant_type=authorization_code&grant_type=refresh_token', 400, 'invalid_request'],
      ['code sent twice', `grant_type=authorization_code&code=a&code=b&client_id=${cid}`, 400, 'invalid_request'],
      ['client_id missing', { grant_type: 'authorization_code', code: plain, redirect_uri: REDIRECT_URI }, 400, 'invalid_request'],
      ['code missing', { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, client_id: cid, client_secret: f.confidential.secret }, 400, 'invalid_request'],
      ['redirect_uri missing', { grant_type: 'authorization_code', code: plain, client_id: cid, client_secret: f.confidential.secret }, 400, 'invalid_request'],
      ['unknown client_id', codeForm(f, plain, { client_id: 'nobody' }), 401, 'invalid_client'],
      ['wrong client_secret', codeForm(f, plain, { client_secret: f.other.secret }), 401, 'invalid_client'],
      ['no client_secret for a code issued without code_challenge', { grant_type: 'authorization_code', code: plain, redirect_uri: REDIRECT_URI, client_id: cid, code_verifier: VERIFIER }, 401, 'invalid_client'],
      ['no code_verifier for a code issued with code_challenge', { grant_type: 'authorization_code', code: pkce, redirect_uri: REDIRECT_URI, client_id: f.publicClient.clientId }, 400, 'invalid_request'],
      ['unknown code', codeForm(f, 'x'.repeat(43) + '='), 400, 'invalid_grant'],
      ['code issued to another application', codeForm(f, otherClients), 400, 'invalid_grant'],
      ['redirect_uri not byte-identical (trailing slash)', codeForm(f, plain, { redirect_uri: REDIRECT_URI + '/' }), 400, 'invalid_grant'],
      ['redirect_uri not byte-identical (case)', codeForm(f, plain, { redirect_uri: REDIRECT_URI.replace('app.example', 'APP.example') }), 400, 'invalid_grant'],
      ['refresh_token missing', { grant_type: 'refresh_token', client_id: cid, client_secret: f.confidential.secret }, 400, 'invalid_request'],
      ['refresh without client_secret', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: cid }, 401, 'invalid_client'],
      ['refresh by a public client (no PKCE branch on this grant)', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: f.publicClient.clientId, code_verifier: VERIFIER }, 401, 'invalid_client'],
      ['refresh token of another application', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: f.other.client.clientId, client_secret: f.other.secret }, 400, 'invalid_grant'],
      ['unknown refresh token', { grant_type: 'refresh_token', refresh_token: 'y'.repeat(44), client_id: cid, client_secret: f.confidential.secret }, 400, 'invalid_grant'],
      ['scope wider than granted on refresh', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: cid, client_secret: f.confidential.secret, scope: 'openid phone' }, 400, 'invalid_scope'],
    ];
    for (const [name, form, status, error] of cases) {
      const res = await f.token(form);
      assert.equal(res.statusCode, status, `${name}: ${res.body}`);
      assertOAuthError(res, status, error);
      assert.equal(res.headers.pragma, 'no-cache', name);
      assert.match(String(res.headers['content-type']), /^application\/json/, name);
    }
    // None of the refused requests consumed anything.
    assert.equal((await f.token(codeForm(f, plain))).statusCode, 200);
    assert.equal((await f.refresh(tokens.refresh_token)).statusCode, 200);
    await f.app.close();
  });

  test('a disabled application gets no new tokens: `unauthorized_client` for both grants, nothing consumed', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const code = await f.mintCode();
    await updateClient(f.deps.db, f.clock, f.confidential.client.clientId, { enabled: false });
    assertOAuthError(await f.token(codeForm(f, code)), 400, 'unauthorized_client');
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'unauthorized_client');
    await updateClient(f.deps.db, f.clock, f.confidential.client.clientId, { enabled: true });
    assert.equal((await f.token(codeForm(f, code))).statusCode, 200);
    assert.equal((await f.refresh(tokens.refresh_token)).statusCode, 200);
    await f.app.close();
  });

  test('a disabled account gets no new tokens: `invalid_grant` for both grants', async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const code = await f.mintCode();
    await disableAccount(f.deps.db, f.clock, f.sub);
    assertOAuthError(await f.token(codeForm(f, code)), 400, 'invalid_grant');
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'invalid_grant');
    await f.app.close();
  });
});
