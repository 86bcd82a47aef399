// issue 28: signing keys (rotation, the JWKS, retirement and the sweep, sealed at rest) and RP-initiated
// logout (end_session_endpoint: the hint, the confirmation page, registered post_logout_redirect_uri, state).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { listAuditEvents } from '../../../src/audit/audit.ts';
import { MINUTE } from '../../../src/config/clock.ts';
import { deriveKeys } from '../../../src/config/keys.ts';
import { ID_TOKEN_LIFETIME_MS, currentSigningKey, retireSigningKey, rotateSigningKeys, SigningKeyError } from '../../../src/oauth/oidc/keys.ts';
import { sweepExpired } from '../../../src/web/housekeeping.ts';
import { csrfOf, TinyBrowser, type Flow } from '../authorize-support.ts';
import { completeFlow, decode, exchange, LOGGED_OUT, oidcFlowOnSqlite, signatureVerifies } from './support.ts';

describe('id_token signing keys', () => {
  const fixture = oidcFlowOnSqlite();

  test('"the new key signs at once; the old one stays in the JWKS until the longest id_token it signed has expired" — an id_token signed before a rotation still verifies after it', async () => {
    const before = (await exchange(fixture.flow, await completeFlow(new TinyBrowser(fixture.flow), { nonce: 'a' }))).id_token!;
    const [made] = await rotateSigningKeys(fixture.database.db, fixture.flow.deps.keys.signingKey, fixture.flow.clock, ['ES256']);
    const after = (await exchange(fixture.flow, await completeFlow(new TinyBrowser(fixture.flow), { nonce: 'b' }))).id_token!;
    assert.equal(decode(after).header.kid, made!.kid, 'the new key signs at once');
    assert.notEqual(decode(before).header.kid, made!.kid);
    assert.equal(await signatureVerifies(fixture.flow, before), true, 'the old key is still in the JWKS');
    assert.equal(await signatureVerifies(fixture.flow, after), true);

    // retire: refused while its id_tokens may be valid, allowed after
    const oldKid = decode(before).header.kid;
    await assert.rejects(retireSigningKey(fixture.database.db, fixture.flow.clock, oldKid), (e: unknown) => e instanceof SigningKeyError && e.code === 'still_needed');
    await assert.rejects(retireSigningKey(fixture.database.db, fixture.flow.clock, made!.kid), (e: unknown) => e instanceof SigningKeyError && e.code === 'still_signing');
    fixture.flow.clock.advance(ID_TOKEN_LIFETIME_MS + MINUTE);
    // the housekeeping sweep removes it (and records it); then the old id_token no longer verifies
    const removed = await sweepExpired(fixture.database.db, fixture.flow.clock);
    assert.equal(removed.signingKeys, 1);
    assert.equal(await signatureVerifies(fixture.flow, before), false, 'the retired key left the JWKS');
    assert.equal(await signatureVerifies(fixture.flow, after), true);
    const events = await listAuditEvents(fixture.database.db, { type: 'signing_key.retired' });
    assert.equal(events.events.length, 1);
  });

  test('private keys are stored sealed under SIGNET_SECRET: another secret cannot open them', async () => {
    const row = await fixture.database.db.selectFrom('signing_keys').selectAll().where('alg', '=', 'RS256').executeTakeFirstOrThrow();
    assert.match(row.private_key_enc, /^v1\./);
    assert.equal(row.private_key_enc.includes('PRIVATE KEY'), false);
    assert.equal('d' in JSON.parse(row.public_jwk), false, 'the stored JWK is the public half');
    await assert.rejects(currentSigningKey(fixture.database.db, deriveKeys('another-root-secret-another-root-secret-0123').signingKey, fixture.flow.clock, 'RS256'));
    assert.ok(await currentSigningKey(fixture.database.db, fixture.flow.deps.keys.signingKey, fixture.flow.clock, 'RS256'));
  });
});

describe('RP-initiated logout (end_session_endpoint)', () => {
  const fixture = oidcFlowOnSqlite();

  const endSession = (params: Record<string, string>) => `/oauth/end-session?${new URLSearchParams(params).toString()}`;

  async function signedIn() {
    const browser = new TinyBrowser(fixture.flow);
    const tokens = await exchange(fixture.flow, await completeFlow(browser, { nonce: 'n' }));
    return { browser, idToken: tokens.id_token! };
  }

  test('a valid id_token_hint of this session: the session ends at once and the browser returns to the registered post_logout_redirect_uri with state; audited', async () => {
    const { browser, idToken } = await signedIn();
    const res = await browser.get(endSession({ id_token_hint: idToken, post_logout_redirect_uri: LOGGED_OUT, state: 'xyz' }));
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${LOGGED_OUT}?state=xyz`);
    assert.equal((await browser.get('/account')).statusCode, 302, 'signed out: /account sends to sign-in');
    const events = await listAuditEvents(fixture.database.db, { type: 'logout.succeeded' });
    assert.equal(events.events[0]?.client_id, fixture.flow.clientId);
  });

  test('no id_token_hint: a confirmation page; the session ends only when the person confirms', async () => {
    const { browser } = await signedIn();
    const page = await browser.get(endSession({ client_id: fixture.flow.clientId, post_logout_redirect_uri: LOGGED_OUT, state: 's1' }));
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Sign out of Signet in this browser\?/);
    assert.match(page.body, /OIDC App asked to sign you out/);
    assert.equal((await browser.get('/account')).statusCode, 200, 'still signed in until confirmed');
    const confirmed = await browser.post('/oauth/end-session/confirm', { _csrf: csrfOf(page.body), client_id: fixture.flow.clientId, post_logout_redirect_uri: LOGGED_OUT, state: 's1' });
    assert.equal(confirmed.statusCode, 303);
    assert.equal(confirmed.headers.location, `${LOGGED_OUT}?state=s1`);
    assert.equal((await browser.get('/account')).statusCode, 302);
  });

  test('a stale id_token_hint (of an earlier session) asks for confirmation instead of signing out', async () => {
    const first = await signedIn();
    const second = await signedIn();
    const page = await second.browser.get(endSession({ id_token_hint: first.idToken, post_logout_redirect_uri: LOGGED_OUT }));
    assert.equal(page.statusCode, 200, 'the sid of the hint is another session: confirm first');
    assert.equal((await second.browser.get('/account')).statusCode, 200);
  });

  test('"post_logout_redirect_uri MUST have been previously registered": an unregistered one (or one differing by a byte) is refused with a page, no redirect', async () => {
    const { browser, idToken } = await signedIn();
    for (const uri of ['https://evil.example/', `${LOGGED_OUT}/`]) {
      const res = await browser.get(endSession({ id_token_hint: idToken, post_logout_redirect_uri: uri }));
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers.location, undefined);
    }
    assert.equal((await browser.get('/account')).statusCode, 200, 'still signed in');
  });

  test('a cross-site POST to the end-session endpoint is answered as the same request by GET (where the session cookie is sent)', async () => {
    const { browser, idToken } = await signedIn();
    const res = await browser.post('/oauth/end-session', { id_token_hint: idToken, post_logout_redirect_uri: LOGGED_OUT, state: 'p' });
    assert.equal(res.statusCode, 303);
    const followed = await browser.get(String(res.headers.location));
    assert.equal(followed.headers.location, `${LOGGED_OUT}?state=p`);
  });

  test('without a session and without a return address: Signet\'s own "signed out" page', async () => {
    const res = await new TinyBrowser(fixture.flow).get('/oauth/end-session');
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/signin?signed_out=1');
  });
});

