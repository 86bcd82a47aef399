// Passkeys over HTTP (issue 19 item 3), through app.inject with a software authenticator: the JSON
// ceremonies (CSRF in a header; malformed bodies 400, never a 500; refusals in words in the page's
// language), a passkey sign-in that starts the session as the password does and goes on to consent,
// the audit trail, removal, and pages that offer passkeys only on hosts that can have them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import * as accounts from '../../src/accounts/accounts.ts';
import { listPasskeys } from '../../src/accounts/factors/passkeys.ts';
import { MINUTE } from '../../src/config/clock.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.ts';
import { csrfOf, flowSetup, PASSWORD, TinyBrowser, type Flow } from '../oauth/authorize-support.ts';

const ORIGIN = 'http://signet.test';

/** POSTs JSON from a page of this host: its cookies, and the CSRF token in `x-csrf-token`. */
async function postJson(browser: TinyBrowser, path: string, body: unknown, csrf: string, raw?: string): Promise<LightMyRequestResponse> {
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await browser.flow.app.inject({
    method: 'POST',
    url: path,
    headers: { host: browser.host, 'content-type': 'application/json', 'x-csrf-token': csrf, ...(cookie ? { cookie } : {}) },
    payload: raw ?? JSON.stringify(body),
  });
  for (const c of res.cookies) {
    if (c.value === '' || (c.expires && c.expires.getTime() < Date.now())) browser.cookies.delete(c.name);
    else browser.cookies.set(c.name, c.value);
  }
  return res;
}

async function signedIn(flow: Flow): Promise<{ browser: TinyBrowser; csrf: string }> {
  const browser = new TinyBrowser(flow);
  assert.equal((await browser.signIn()).statusCode, 303);
  const page = await browser.get('/account');
  assert.equal(page.statusCode, 200);
  return { browser, csrf: csrfOf(page.body) };
}

async function addPasskey(flow: Flow, key: SoftwareAuthenticator, name = 'Laptop'): Promise<TinyBrowser> {
  const { browser, csrf } = await signedIn(flow);
  const options = (await postJson(browser, '/account/passkeys/options', {}, csrf)).json<PublicKeyCredentialCreationOptionsJSON>();
  const added = await postJson(browser, '/account/passkeys', { name, response: key.register(options, ORIGIN) }, csrf);
  assert.equal(added.statusCode, 200, added.body);
  assert.deepEqual(added.json(), { redirect: '/account?saved=passkey#passkeys-heading' });
  return browser;
}

/** A fresh browser on the sign-in page: its CSRF token. */
async function onSignInPage(flow: Flow, path = '/signin'): Promise<{ browser: TinyBrowser; csrf: string; html: string }> {
  const browser = new TinyBrowser(flow);
  const page = await browser.get(path);
  assert.equal(page.statusCode, 200);
  return { browser, csrf: csrfOf(page.body), html: page.body };
}

async function withFlow(run: (flow: Flow) => Promise<void>): Promise<void> {
  const database = await sqliteDatabase();
  const flow = await flowSetup(database);
  try {
    await run(flow);
  } finally {
    await flow.app.close();
    await database.dispose();
  }
}

test('"Add a passkey" on /account: options need a signed-in session; the passkey is listed with Remove; audit passkey.added', () =>
  withFlow(async (flow) => {
    const { csrf: anonymousCsrf, browser: anonymous } = await onSignInPage(flow);
    const refused = await postJson(anonymous, '/account/passkeys/options', {}, anonymousCsrf);
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json().error, 'not_signed_in');

    const browser = await addPasskey(flow, new SoftwareAuthenticator(), 'Work laptop');
    const page = await browser.get('/account?saved=passkey');
    assert.match(page.body, /<h2 id="passkeys-heading">Passkeys<\/h2>/);
    assert.match(page.body, /<h3 id="passkey-0">Work laptop<\/h3>/);
    assert.match(page.body, /Not used yet/);
    assert.match(page.body, />Remove<\/button>/);
    assert.match(page.body, /Your passkey is added/);
    const events = await flow.deps.db.selectFrom('audit_events').select(['type', 'sub', 'outcome']).where('type', 'like', 'passkey.%').execute();
    assert.deepEqual(events, [{ type: 'passkey.added', sub: flow.sub, outcome: 'success' }]);
  }));

test('"Sign in with a passkey": complete by itself — a new session, the CSRF secret rotated, on to /account; audit passkey.signin', () =>
  withFlow(async (flow) => {
    const key = new SoftwareAuthenticator();
    await addPasskey(flow, key);
    const { browser, csrf, html } = await onSignInPage(flow);
    assert.match(html, /autocomplete="username webauthn"/, 'passkey autofill on the identifier field');
    assert.match(html, /Sign in with a passkey/);
    assert.match(html, /<script type="module" src="\/static\/passkeys.js"><\/script>/);
    const csrfSecretBefore = browser.cookies.get(flow.app.cookieNames.csrf);
    const options = (await postJson(browser, '/signin/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    assert.equal(options.allowCredentials, undefined, 'discoverable: no allow list, nothing typed');
    assert.equal(options.userVerification, 'preferred');
    assert.equal(options.rpId, 'signet.test');
    const done = await postJson(browser, '/signin/passkey', { response: key.assert(options, ORIGIN) }, csrf);
    assert.equal(done.statusCode, 200, done.body);
    assert.deepEqual(done.json(), { redirect: '/account' });
    assert.ok(browser.cookies.get(flow.app.cookieNames.session), 'a session cookie');
    assert.notEqual(browser.cookies.get(flow.app.cookieNames.csrf), csrfSecretBefore, 'the CSRF secret is rotated');
    assert.ok(browser.cookies.get(flow.app.cookieNames.device), 'the browser gets a device cookie, as after a password');
    assert.equal((await browser.get('/account')).statusCode, 200, 'signed in');
    const events = await flow.deps.db.selectFrom('audit_events').select(['type', 'outcome']).where('type', '=', 'passkey.signin').execute();
    assert.deepEqual(events, [{ type: 'passkey.signin', outcome: 'success' }]);
    assert.notEqual((await listPasskeys(flow.deps.db, flow.sub))[0]!.lastUsedAt, null);
  }));

test('a passkey sign-in with a pending authorization request continues to consent, and on to the callback', () =>
  withFlow(async (flow) => {
    const key = new SoftwareAuthenticator();
    await addPasskey(flow, key);
    const browser = new TinyBrowser(flow);
    const requestId = await browser.authorize({ state: 'pk-1', scope: 'openid profile' });
    const page = await browser.get(`/signin?request=${requestId}`);
    const csrf = csrfOf(page.body);
    const options = (await postJson(browser, '/signin/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    const done = await postJson(browser, '/signin/passkey', { response: key.assert(options, ORIGIN), request: requestId }, csrf);
    assert.deepEqual(done.json(), { redirect: `/consent?request=${requestId}` });
    const allowed = await browser.consent(requestId, 'allow');
    const callback = new URL(String(allowed.headers.location));
    assert.equal(callback.searchParams.get('state'), 'pk-1');
    assert.equal(callback.searchParams.get('code')?.length, 44);
    const [event] = await flow.deps.db.selectFrom('audit_events').select(['client_id']).where('type', '=', 'passkey.signin').execute();
    assert.equal(event?.client_id, flow.clientId);
  }));

test('refusals are JSON in words, never a 500: malformed JSON 400, no CSRF token 403, expired challenge 400, unknown credential 401, in the page language', () =>
  withFlow(async (flow) => {
    const key = new SoftwareAuthenticator();
    await addPasskey(flow, key);
    const { browser, csrf } = await onSignInPage(flow);
    for (const raw of ['{not json', '', '[1,2]', 'null', '"text"']) {
      const res = await postJson(browser, '/signin/passkey', undefined, csrf, raw);
      assert.equal(res.statusCode, 400, `${JSON.stringify(raw)}: ${res.body}`);
      assert.equal(res.json().error, 'invalid_response');
      assert.match(res.json().message, /did not send a passkey answer/);
    }
    const noToken = await postJson(browser, '/signin/passkey/options', {}, '');
    assert.equal(noToken.statusCode, 403);
    assert.equal(noToken.json().error, 'csrf_failed');

    const options = (await postJson(browser, '/signin/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    flow.clock.advance(5 * MINUTE);
    const expired = await postJson(browser, '/signin/passkey', { response: key.assert(options, ORIGIN) }, csrf);
    assert.equal(expired.statusCode, 400);
    assert.deepEqual(expired.json(), { error: 'challenge_expired', message: 'This passkey request has expired or was already used. Try again.' });

    const stranger = new SoftwareAuthenticator();
    const fresh = (await postJson(browser, '/signin/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    browser.cookies.set(flow.app.cookieNames.language, '');
    const zh = await flow.app.inject({
      method: 'POST',
      url: '/signin/passkey',
      headers: { host: browser.host, 'content-type': 'application/json', 'x-csrf-token': csrf, 'accept-language': 'zh-CN', cookie: [...browser.cookies].filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join('; ') },
      payload: JSON.stringify({ response: stranger.assert(fresh, ORIGIN) }),
    });
    assert.equal(zh.statusCode, 401);
    assert.equal(zh.json().error, 'unknown_credential');
    assert.match(zh.json().message, /通行密钥/);
    assert.equal(browser.cookies.get(flow.app.cookieNames.session), undefined, 'no session');
    const failures = await flow.deps.db.selectFrom('audit_events').select(['outcome', 'detail']).where('type', '=', 'passkey.signin').execute();
    assert.deepEqual(failures.map((f) => [f.outcome, JSON.parse(f.detail ?? '{}').reason]), [
      // The bodies that were JSON but no answer ([1,2], null, "text") reached the check; the others did not.
      ['failure', 'invalid_response'],
      ['failure', 'invalid_response'],
      ['failure', 'invalid_response'],
      ['failure', 'challenge_expired'],
      ['failure', 'unknown_credential'],
    ]);
  }));

test('a disabled account is refused at passkey sign-in with words, 403', () =>
  withFlow(async (flow) => {
    const key = new SoftwareAuthenticator();
    await addPasskey(flow, key);
    await accounts.disableAccount(flow.deps.db, flow.clock, flow.sub);
    const { browser, csrf } = await onSignInPage(flow);
    const options = (await postJson(browser, '/signin/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    const res = await postJson(browser, '/signin/passkey', { response: key.assert(options, ORIGIN) }, csrf);
    assert.equal(res.statusCode, 403);
    assert.match(res.json().message, /disabled/);
    assert.equal(browser.cookies.get(flow.app.cookieNames.session), undefined);
  }));

test('Remove: the form removes the passkey (audit passkey.removed) and sign-in refuses it; the add form without script says it needs JavaScript', () =>
  withFlow(async (flow) => {
    const key = new SoftwareAuthenticator();
    const browser = await addPasskey(flow, key);
    const [passkey] = await listPasskeys(flow.deps.db, flow.sub);
    const noScript = await browser.submit('/account', '/account/passkeys/add', { name: 'Plain form' });
    assert.equal(noScript.statusCode, 400);
    assert.match(noScript.body, /Adding a passkey needs JavaScript/);
    const removed = await browser.submit('/account', '/account/passkeys/remove', { passkey: passkey!.id });
    assert.equal(removed.statusCode, 303);
    assert.equal(removed.headers.location, '/account?saved=passkey_removed#passkeys-heading');
    assert.match((await browser.get('/account?saved=passkey_removed')).body, /The passkey is removed/);
    assert.deepEqual(await listPasskeys(flow.deps.db, flow.sub), []);
    const events = await flow.deps.db.selectFrom('audit_events').select('type').where('type', 'like', 'passkey.%').orderBy('id').execute();
    assert.deepEqual(events.map((e) => e.type), ['passkey.added', 'passkey.removed']);
    const { browser: later, csrf } = await onSignInPage(flow);
    const options = (await postJson(later, '/signin/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    assert.equal((await postJson(later, '/signin/passkey', { response: key.assert(options, ORIGIN) }, csrf)).statusCode, 401);
  }));

test('a host served by IP address has no passkeys: the sign-in page offers none, /account says why, the ceremonies answer 404 in words', async () => {
  const database = await sqliteDatabase();
  const flow = await flowSetup(database, { SIGNET_BASE_URL: 'http://127.0.0.1:8080', SIGNET_ALT_BASE_URL: 'http://signet.test' });
  try {
    const { browser, csrf, html } = await onSignInPage(flow);
    assert.doesNotMatch(html, /Sign in with a passkey/);
    assert.match(html, /autocomplete="username"/);
    const res = await postJson(browser, '/signin/passkey/options', {}, csrf);
    assert.equal(res.statusCode, 404);
    assert.match(res.json().message, /IP address/);
    assert.equal((await browser.signIn()).statusCode, 303);
    assert.match((await browser.get('/account')).body, /Passkeys need the site’s host name/);
  } finally {
    await flow.app.close();
    await database.dispose();
  }
});

test('@simplewebauthn/browser is served from our own origin as JavaScript (CSP script-src \'self\'), and nothing else of the package', () =>
  withFlow(async (flow) => {
    const browser = new TinyBrowser(flow);
    const index = await browser.get('/static/vendor/simplewebauthn/index.js');
    assert.equal(index.statusCode, 200);
    assert.match(String(index.headers['content-type']), /javascript/);
    assert.match(index.body, /startAuthentication/);
    assert.equal((await browser.get('/static/vendor/simplewebauthn/methods/startRegistration.js')).statusCode, 200);
    assert.equal((await browser.get('/static/vendor/simplewebauthn/index.d.ts')).statusCode, 404);
    assert.equal((await browser.get('/static/vendor/simplewebauthn/../package.json')).statusCode, 404);
    const script = await browser.get('/static/passkeys.js');
    assert.match(script.body, /from '\/static\/vendor\/simplewebauthn\/index.js'/);
    assert.match(String(script.headers['content-security-policy']), /script-src 'self'/);
  }));

test('the alternate host is its own relying party: its options name its host, and a passkey made on the base host is refused there', () =>
  withFlow(async (flow) => {
    const key = new SoftwareAuthenticator();
    await addPasskey(flow, key);
    const browser = new TinyBrowser(flow, 'alt.signet.test');
    const page = await browser.get('/signin');
    assert.match(page.body, /Sign in with a passkey/);
    const csrf = csrfOf(page.body);
    const options = (await postJson(browser, '/signin/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    assert.equal(options.rpId, 'alt.signet.test');
    const res = await postJson(browser, '/signin/passkey', { response: key.assert(options, 'http://alt.signet.test') }, csrf);
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().error, 'unknown_credential');
    // Made on the base host, answered as if from the alternate origin: the expected origin is checked.
    const { browser: base, csrf: baseCsrf } = await onSignInPage(flow);
    const baseOptions = (await postJson(base, '/signin/passkey/options', {}, baseCsrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    const wrongOrigin = await postJson(base, '/signin/passkey', { response: key.assert(baseOptions, 'http://alt.signet.test') }, baseCsrf);
    assert.equal(wrongOrigin.statusCode, 401);
    assert.equal(wrongOrigin.json().error, 'not_verified');
  }));

test('issue 19: "a passkey may also be used as the second step after a password" — only that person\'s passkeys are asked for, and the session starts only when one answers', () =>
  withFlow(async (flow) => {
    const key = new SoftwareAuthenticator();
    await addPasskey(flow, key, 'Phone');
    const browser = new TinyBrowser(flow);
    const password = await browser.signIn();
    assert.equal(password.statusCode, 303);
    assert.equal(password.headers.location, '/signin/two-step', 'a correct password alone does not sign in an account with a passkey');
    assert.equal(browser.cookies.get(flow.app.cookieNames.session), undefined);
    assert.equal((await browser.get('/account')).statusCode, 302, 'half signed in is not signed in: /account sends back to sign-in');
    const step = await browser.get('/signin/two-step');
    assert.equal(step.statusCode, 200);
    assert.match(step.body, /Use a passkey/);
    assert.match(step.body, /id="passkey-second-step"/);
    const csrf = csrfOf(step.body);
    const options = (await postJson(browser, '/signin/two-step/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    const [passkey] = await listPasskeys(flow.deps.db, flow.sub);
    assert.deepEqual(options.allowCredentials?.map((c) => c.id), [key.id], 'only the passkeys of the person the password named');
    const answered = await postJson(browser, '/signin/two-step/passkey', { response: key.assert(options, ORIGIN) }, csrf);
    assert.equal(answered.statusCode, 200, answered.body);
    assert.deepEqual(answered.json(), { redirect: '/account' });
    assert.ok(browser.cookies.get(flow.app.cookieNames.session), 'signed in now');
    assert.equal((await browser.get('/account')).statusCode, 200);
    assert.ok((await listPasskeys(flow.deps.db, flow.sub)).find((p) => p.id === passkey!.id)?.lastUsedAt !== null);
    const events = await flow.deps.db.selectFrom('audit_events').select(['type', 'detail']).where('type', 'in', ['passkey.signin', 'signin.succeeded']).orderBy('id').execute();
    assert.deepEqual(events.slice(-2).map((e) => [e.type, JSON.parse(e.detail ?? '{}')]), [['passkey.signin', { stage: 'signin' }], ['signin.succeeded', { factor: 'passkey' }]]);
  }));

test('issue 19: the passkey second step fails because the answer is another person\'s passkey — refused in words, still not signed in', () =>
  withFlow(async (flow) => {
    await addPasskey(flow, new SoftwareAuthenticator(), 'Phone');
    const stranger = new SoftwareAuthenticator();
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    const step = await browser.get('/signin/two-step');
    const csrf = csrfOf(step.body);
    const options = (await postJson(browser, '/signin/two-step/passkey/options', {}, csrf)).json<PublicKeyCredentialRequestOptionsJSON>();
    const refused = await postJson(browser, '/signin/two-step/passkey', { response: stranger.assert(options, ORIGIN) }, csrf);
    assert.equal(refused.statusCode, 401);
    assert.equal(typeof refused.json().message, 'string');
    assert.equal(browser.cookies.get(flow.app.cookieNames.session), undefined);
    const failed = await flow.deps.db.selectFrom('audit_events').select('type').where('type', '=', 'mfa.failed').execute();
    assert.equal(failed.length, 1);
  }));

test('issue 19 step-up: "removing a passkey require[s] a factor or the password within the last 10 minutes" — an older check is sent to /account/confirm first', () =>
  withFlow(async (flow) => {
    const browser = await addPasskey(flow, new SoftwareAuthenticator());
    const [passkey] = await listPasskeys(flow.deps.db, flow.sub);
    flow.clock.advance(11 * MINUTE);
    const asked = await browser.submit('/account', '/account/passkeys/remove', { passkey: passkey!.id });
    assert.equal(asked.statusCode, 303);
    assert.match(String(asked.headers.location), /^\/account\/confirm\?return=/);
    assert.equal((await listPasskeys(flow.deps.db, flow.sub)).length, 1, 'not removed without the check');
    const confirmed = await browser.submit(String(asked.headers.location), '/account/confirm', { password: PASSWORD, return: '/account#passkeys-heading' });
    assert.equal(confirmed.statusCode, 303, confirmed.body);
    const removed = await browser.submit('/account', '/account/passkeys/remove', { passkey: passkey!.id });
    assert.equal(removed.headers.location, '/account?saved=passkey_removed#passkeys-heading');
    assert.deepEqual(await listPasskeys(flow.deps.db, flow.sub), []);
  }));
