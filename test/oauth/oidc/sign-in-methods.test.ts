// issue 28: "amr (pwd, otp, hwk/swk for passkeys, mfa when two were used), acr when the application asked
// for a second factor (acr_values)" — with a real authenticator-app second step.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { beginTotpSetup, confirmTotpSetup, totpCode } from '../../../src/accounts/factors/totp.ts';
import { SECOND } from '../../../src/config/clock.ts';
import { createAccount } from '../../../src/accounts/accounts.ts';
import { csrfOf, PASSWORD, TinyBrowser, type Flow } from '../authorize-support.ts';
import { completeFlow, decode, exchange, oidcFlowOnSqlite } from './support.ts';

describe('amr and acr in the id_token', () => {
  const fixture = oidcFlowOnSqlite();

  test('a password alone: amr ["pwd"]; acr_values=mfa from a one-factor session of an account with a factor signs in again, the second step follows, and the id_token says amr ["pwd","otp","mfa"], acr "mfa"', async () => {
    const passwordOnly = new TinyBrowser(fixture.flow);
    const first = decode((await exchange(fixture.flow, await completeFlow(passwordOnly, { nonce: 'p' }))).id_token!).claims;
    assert.deepEqual(first.amr, ['pwd']);
    assert.equal('acr' in first, false, 'no acr unless acr_values was sent');

    // The person turns on an authenticator app.
    const key = fixture.flow.deps.keys.factorSecret;
    const { secretBase32 } = await beginTotpSetup(fixture.database.db, key, fixture.flow.clock, { sub: fixture.flow.sub, issuer: 'Signet', label: 'person' });
    assert.equal(await confirmTotpSetup(fixture.database.db, key, fixture.flow.clock, fixture.flow.sub, totpCode(secretBase32, fixture.flow.clock())), 'enabled');
    fixture.flow.clock.advance(31 * SECOND);

    // Their earlier session has one factor: acr_values=mfa asks for the sign-in again.
    const id = await passwordOnly.authorize({ acr_values: 'mfa', nonce: 'm' });
    assert.equal((await passwordOnly.get(`/signin?request=${id}`)).statusCode, 200, 'the sign-in page, not consent');
    const signedIn = await passwordOnly.signIn(id);
    assert.equal(signedIn.headers.location, '/signin/two-step');
    const step = await passwordOnly.get('/signin/two-step');
    const done = await passwordOnly.post('/signin/two-step', { _csrf: csrfOf(step.body), code: totpCode(secretBase32, fixture.flow.clock()) });
    assert.equal(done.statusCode, 303, done.body);
    const consent = await passwordOnly.get(`/consent?request=${id}`);
    const callback = new URL(String(consent.headers.location));
    const claims = decode((await exchange(fixture.flow, callback)).id_token!).claims;
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.acr, 'mfa');
    assert.equal(claims.nonce, 'm');

    // A two-factor session is not asked again.
    const again = await passwordOnly.authorize({ acr_values: 'mfa' });
    assert.equal((await passwordOnly.get(`/signin?request=${again}`)).statusCode, 302);
  });

  test('prompt=none with acr_values=mfa from a one-factor session is login_required; without acr_values the same session gets a code', async () => {
    await createAccount(fixture.database.db, fixture.flow.clock, { email: 'solo@example.com', password: PASSWORD });
    const browser = new TinyBrowser(fixture.flow);
    const id = await browser.authorize();
    assert.equal((await browser.signIn(id, 'solo@example.com')).statusCode, 303);
    assert.equal((await browser.consent(id, 'allow')).statusCode, 303);
    const withAcr = await browser.get(fixture.flow.authorizePath({ prompt: 'none', acr_values: 'mfa' }));
    assert.equal(new URL(String(withAcr.headers.location)).searchParams.get('error'), 'login_required');
    const without = await browser.get(fixture.flow.authorizePath({ prompt: 'none' }));
    assert.ok(new URL(String(without.headers.location)).searchParams.get('code'));
  });
});
