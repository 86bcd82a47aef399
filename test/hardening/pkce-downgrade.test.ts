// Hardening 1, PKCE downgrade (RFC 9700 §4.8.2): "the credential required is decided by how the code
// was issued" — a code issued without a code_challenge is redeemed with client_secret alone; a
// code_verifier sent along is refused, so a verifier can no longer ride along.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertOAuthError, oauthFixture, REDIRECT_URI, s256Challenge, VERIFIER } from '../oauth/token-fixtures.ts';

forEachDatabase('PKCE downgrade', (open) => {
  test('PKCE downgrade (RFC 9700 §4.8.2): a code issued without a code_challenge, redeemed with the right client_secret plus any code_verifier, is refused with invalid_grant and issues nothing', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode();
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    assertOAuthError(await f.token({ ...form, code_verifier: VERIFIER }), 400, 'invalid_grant');
    assert.equal((await f.tokenRows(f.confidential.client.clientId)).chains.length, 0, 'no tokens were issued');
    // The code was not consumed by the refused request: redeemed the way it was issued, it still works.
    const proper = await f.token(form);
    assert.equal(proper.statusCode, 200, proper.body);
    await f.app.close();
  });

  test('PKCE downgrade: a code issued with a code_challenge still needs its code_verifier (the branch is unchanged)', async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode({ challenge: s256Challenge(VERIFIER) });
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    assertOAuthError(await f.token(form), 400, 'invalid_request');
    assert.equal((await f.token({ ...form, code_verifier: VERIFIER })).statusCode, 200);
    await f.app.close();
  });
});
