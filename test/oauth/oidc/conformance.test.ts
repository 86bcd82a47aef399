// issue 28: an equivalent of the OpenID Foundation conformance suite's Basic OP plan
// (oidcc-basic-certification-test-plan), written from its module list and run in-process against the
// real app. Each test is named after the module it stands for and says what that module checks; the
// modules this deployment cannot pass by design are listed at the end of the file with the reason.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { MINUTE, SECOND } from '../../../src/config/clock.ts';
import { EMAIL, REDIRECT_URI, TinyBrowser, type Flow } from '../authorize-support.ts';
import { completeFlow, decode, exchange, oidcFlowOnSqlite, refresh, signatureVerifies } from './support.ts';

describe('OpenID Connect Basic OP, written from the conformance suite module list', () => {
  const fixture = oidcFlowOnSqlite();

  /** A signed-in browser and the id_token of one interactive fixture.flow. */
  async function signedIn(params: Record<string, string> = {}) {
    const browser = new TinyBrowser(fixture.flow);
    const callback = await completeFlow(browser, { nonce: 'n-0S6_WzA2Mj', state: 'af0ifjsldkj', ...params });
    return { browser, callback, tokens: await exchange(fixture.flow, callback) };
  }

  test('oidcc-server: the code fixture.flow yields an id_token with iss, sub, aud, exp, iat, auth_time, nonce, at_hash, amr, sid — iss is the discovery issuer, sub the userinfo sub', async () => {
    const { tokens, callback } = await signedIn();
    assert.equal(callback.searchParams.get('state'), 'af0ifjsldkj');
    const { claims } = decode(tokens.id_token!);
    const discovery = (await fixture.flow.app.inject({ url: '/.well-known/openid-configuration', headers: { host: fixture.flow.host } })).json<{ issuer: string }>();
    assert.equal(claims.iss, discovery.issuer);
    assert.equal(claims.aud, fixture.flow.clientId);
    assert.equal(claims.nonce, 'n-0S6_WzA2Mj');
    assert.ok(claims.exp > claims.iat && claims.iat <= Math.floor(fixture.flow.clock() / 1000));
    assert.ok(claims.auth_time <= claims.iat);
    for (const name of ['at_hash', 'amr', 'sid']) assert.ok(name in claims, name);
    const userinfo = await fixture.flow.app.inject({ url: '/oauth/userinfo', headers: { host: fixture.flow.host, authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(userinfo.json<{ sub: string }>().sub, claims.sub, 'Core §5.3.2: the userinfo sub MUST exactly match the id_token sub');
  });

  test('oidcc-idtoken-signature: the id_token signature verifies with the key of its kid from jwks_uri; a changed payload does not', async () => {
    const { tokens } = await signedIn();
    assert.equal(await signatureVerifies(fixture.flow, tokens.id_token!), true);
    const [h, , s] = tokens.id_token!.split('.');
    const changed = Buffer.from(JSON.stringify({ ...decode(tokens.id_token!).claims, sub: 'attacker' })).toString('base64url');
    assert.equal(await signatureVerifies(fixture.flow, `${h}.${changed}.${s}`), false);
  });

  test('oidcc-idtoken-kid: the header names alg ES256 (the default) and a kid that is in the JWKS', async () => {
    const { tokens } = await signedIn();
    const { header } = decode(tokens.id_token!);
    assert.equal(header.alg, 'ES256');
    const kids = (await fixture.flow.app.inject({ url: '/oauth/jwks', headers: { host: fixture.flow.host } })).json<{ keys: Array<{ kid: string }> }>().keys.map((k) => k.kid);
    assert.ok(kids.includes(header.kid));
  });

  test('at_hash: "the base64url encoding of the left-most half of the hash of the octets of the ASCII representation of the access_token"', async () => {
    const { tokens } = await signedIn();
    const digest = createHash('sha256').update(tokens.access_token, 'ascii').digest();
    assert.equal(decode(tokens.id_token!).claims.at_hash, digest.subarray(0, 16).toString('base64url'));
  });

  test('oidcc-ensure-request-without-nonce-succeeds-for-code-fixture.flow: no nonce sent, none in the id_token', async () => {
    const callback = await completeFlow(new TinyBrowser(fixture.flow), { state: 's' });
    const { claims } = decode((await exchange(fixture.flow, callback)).id_token!);
    assert.equal('nonce' in claims, false);
  });

  test('oidcc-prompt-login: prompt=login shows the sign-in page to a signed-in person, and auth_time is the new sign-in', async () => {
    const { browser, tokens } = await signedIn();
    const first = decode(tokens.id_token!).claims.auth_time;
    fixture.flow.clock.advance(5 * SECOND);
    const id = await browser.authorize({ prompt: 'login', nonce: 'n2' });
    const page = await browser.get(`/signin?request=${id}`);
    assert.equal(page.statusCode, 200, 'the sign-in page, not a redirect to consent');
    const consent = await browser.get(`/consent?request=${id}`);
    assert.equal(consent.statusCode, 302, 'consent sends back to sign-in until the person signs in again');
    assert.equal((await browser.signIn(id)).statusCode, 303);
    const callback = new URL(String((await browser.get(`/consent?request=${id}`)).headers.location));
    const second = decode((await exchange(fixture.flow, callback)).id_token!).claims.auth_time;
    assert.ok(second >= first + 5, `auth_time moved to the new sign-in (${first} → ${second})`);
  });

  test('oidcc-max-age-1: max_age=1 after a wait asks for the password again; the id_token carries auth_time of that sign-in', async () => {
    const { browser } = await signedIn();
    fixture.flow.clock.advance(2 * SECOND);
    const id = await browser.authorize({ max_age: '1', nonce: 'n3' });
    assert.equal((await browser.get(`/signin?request=${id}`)).statusCode, 200, 'sign-in page shown');
    assert.equal((await browser.signIn(id)).statusCode, 303);
    const callback = new URL(String((await browser.get(`/consent?request=${id}`)).headers.location));
    const { claims } = decode((await exchange(fixture.flow, callback)).id_token!);
    assert.ok(Math.floor(fixture.flow.clock() / 1000) - claims.auth_time <= 1);
  });

  test('oidcc-max-age-10000: a sign-in within max_age is not asked again; auth_time stays the first sign-in', async () => {
    const { browser, tokens } = await signedIn();
    fixture.flow.clock.advance(MINUTE);
    const id = await browser.authorize({ max_age: '10000' });
    const next = await browser.get(`/signin?request=${id}`);
    assert.equal(next.statusCode, 302, 'straight on to consent');
    const callback = new URL(String((await browser.get(`/consent?request=${id}`)).headers.location));
    assert.equal(decode((await exchange(fixture.flow, callback)).id_token!).claims.auth_time, decode(tokens.id_token!).claims.auth_time);
  });

  test('oidcc-prompt-none-not-logged-in: prompt=none without a session redirects with error=login_required', async () => {
    const res = await new TinyBrowser(fixture.flow).get(fixture.flow.authorizePath({ prompt: 'none', state: 'x' }));
    const location = new URL(String(res.headers.location));
    assert.equal(location.searchParams.get('error'), 'login_required');
    assert.equal(location.searchParams.get('state'), 'x');
  });

  test('oidcc-prompt-none-logged-in: prompt=none with a session and a grant returns a code whose id_token has the same sub', async () => {
    const { browser, tokens } = await signedIn();
    const res = await browser.get(fixture.flow.authorizePath({ prompt: 'none', nonce: 'silent' }));
    const callback = new URL(String(res.headers.location));
    const silent = decode((await exchange(fixture.flow, callback)).id_token!).claims;
    assert.equal(silent.sub, decode(tokens.id_token!).claims.sub);
    assert.equal(silent.nonce, 'silent');
  });

  test("oidcc-id-token-hint: prompt=none with the person's own id_token as id_token_hint returns a code; a hint of someone else is login_required", async () => {
    const { browser, tokens } = await signedIn();
    const ok = new URL(String((await browser.get(fixture.flow.authorizePath({ prompt: 'none', id_token_hint: tokens.id_token! }))).headers.location));
    assert.ok(ok.searchParams.get('code'));
    const [h, , s] = tokens.id_token!.split('.');
    const other = `${h}.${Buffer.from(JSON.stringify({ ...decode(tokens.id_token!).claims, sub: 'other' })).toString('base64url')}.${s}`;
    const refused = new URL(String((await browser.get(fixture.flow.authorizePath({ prompt: 'none', id_token_hint: other }))).headers.location));
    assert.equal(refused.searchParams.get('error'), 'login_required');
  });

  test('oidcc-login-hint: login_hint prefills the sign-in page', async () => {
    const browser = new TinyBrowser(fixture.flow);
    const id = await browser.authorize({ login_hint: EMAIL });
    const page = await browser.get(`/signin?request=${id}`);
    assert.match(page.body, new RegExp(`value="${EMAIL.replace('.', '\\.')}"`));
  });

  test('prompt=consent: the consent page is shown although a grant covers the request', async () => {
    const { browser } = await signedIn();
    const id = await browser.authorize({ prompt: 'consent' });
    const consent = await browser.get(`/consent?request=${id}`);
    assert.equal(consent.statusCode, 200);
    assert.match(consent.body, /Allow/);
  });

  test('oidcc-ensure-request-with-acr-values-succeeds: acr_values is answered with the acr of the sign-in (pwd for a password alone)', async () => {
    const { tokens } = await signedIn({ acr_values: 'mfa pwd' });
    assert.equal(decode(tokens.id_token!).claims.acr, 'pwd');
  });

  test('oidcc-ensure-request-with-unknown-parameter-succeeds, oidcc-display-page, oidcc-ui-locales, oidcc-claims-locales: such parameters are ignored', async () => {
    const { tokens } = await signedIn({ extra: 'foobar', display: 'page', ui_locales: 'se', claims_locales: 'se' });
    assert.ok(tokens.id_token);
  });

  test('oidcc-claims-essential: claims={"id_token":{"email":{"essential":true}}} puts email in the id_token when the email scope is granted, never beyond the scope', async () => {
    const claims = JSON.stringify({ id_token: { email: { essential: true }, phone_number: null } });
    const { tokens } = await signedIn({ scope: 'openid email', claims });
    const idToken = decode(tokens.id_token!).claims;
    assert.equal(idToken.email, EMAIL);
    assert.equal('phone_number' in idToken, false, 'phone was not granted: it stays out');
    const plain = decode((await signedIn({ scope: 'openid email' })).tokens.id_token!).claims;
    assert.equal('email' in plain, false, 'without a claims request, e-mail stays in userinfo');
  });

  test('oidcc-codereuse: a code presented twice is refused', async () => {
    const callback = await completeFlow(new TinyBrowser(fixture.flow), { nonce: 'n' });
    await exchange(fixture.flow, callback);
    const again = await fixture.flow.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { host: fixture.flow.host, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: fixture.flow.clientId, client_secret: fixture.flow.clientSecret, redirect_uri: REDIRECT_URI }).toString(),
    });
    assert.equal(again.json<{ error: string }>().error, 'invalid_grant');
  });

  test('oidcc-refresh-token: a refresh returns a new id_token (Core §12.2: same iss, sub, aud, auth_time; new iat; no nonce) that verifies', async () => {
    const { tokens } = await signedIn();
    fixture.flow.clock.advance(MINUTE);
    const refreshed = await refresh(fixture.flow, tokens.refresh_token);
    const before = decode(tokens.id_token!).claims;
    const after = decode(refreshed.id_token!).claims;
    for (const name of ['iss', 'sub', 'aud', 'auth_time', 'sid']) assert.deepEqual(after[name], before[name], name);
    assert.ok(after.iat > before.iat);
    assert.equal('nonce' in after, false);
    assert.equal(await signatureVerifies(fixture.flow, refreshed.id_token!), true);
  });

  test('oidcc-discovery-endpoint-verification: every endpoint and URL the document names answers, and issuer is the host asked', async () => {
    for (const host of [fixture.flow.host, new URL('http://alt.signet.test').host]) {
      const doc = (await fixture.flow.app.inject({ url: '/.well-known/openid-configuration', headers: { host } })).json<Record<string, string>>();
      assert.equal(doc.issuer, `http://${host}`);
      for (const name of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'end_session_endpoint', 'revocation_endpoint']) {
        const url = new URL(doc[name]!);
        assert.equal(url.origin, doc.issuer, name);
        const res = await fixture.flow.app.inject({ url: url.pathname, headers: { host } });
        assert.notEqual(res.statusCode, 404, `${name} is served`);
      }
    }
  });
});

// Modules of the Basic OP plan this deployment does not pass as the suite expects, by design (the
// interface specification's rules take precedence):
// - oidcc-response-type-missing: the spec says `response_type` defaults to `code`, so a request without
//   it succeeds instead of failing.
// - oidcc-scope-address (and -all): `address` is not a known scope; spec "Errors" 1 answers unknown scopes
//   as JSON at the endpoint, never redirected.
// - oidcc-ensure-registered-redirect-uri, oidcc-ensure-redirect-uri-in-authorization-request: pass — the
//   error is shown at the endpoint, which the suite accepts (screenshot), not redirected.
// - oidcc-server with client_secret_basic: the spec allows client_secret_post only (run the plan with the
//   client_secret_post variant).
// - oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported: `request` is ignored like
//   every unknown parameter (request_parameter_supported is false); the suite marks that as a warning.
