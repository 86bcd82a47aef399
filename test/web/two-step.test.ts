// Two-step verification over HTTP (issue 19): setting up an authenticator app on /account, the ten
// recovery codes shown once, the second step at sign-in (no session until it is done), remembered
// browsers, SIGNET_MFA=required, step-up for sensitive changes, audit events and security notifications.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { totpCode } from '../../src/accounts/factors/totp.ts';
import { listAuditEvents } from '../../src/audit/audit.ts';
import { MINUTE, SECOND } from '../../src/config/clock.ts';
import { testApp } from '../helpers/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { csrfOf, flowSetup, PASSWORD, REDIRECT_URI, TinyBrowser, type Flow } from '../oauth/authorize-support.ts';

/** Sets up the authenticator app from /account as the person would; returns the key and the recovery codes. */
async function setUpApp(browser: TinyBrowser, flow: Flow): Promise<{ key: string; codes: string[]; page: string }> {
  const account = await browser.get('/account');
  assert.match(account.body, /href="\/account\/two-step\/setup">Set up authenticator app</);
  const setup = await browser.get('/account/two-step/setup');
  assert.equal(setup.statusCode, 200);
  const key = /data-setup-key="([A-Z2-7]+)"/.exec(setup.body)?.[1];
  assert.ok(key, 'the set-up page carries the base32 key in data-setup-key');
  const turnedOn = await browser.post('/account/two-step/setup', { _csrf: csrfOf(setup.body), code: totpCode(key, flow.clock()) });
  assert.equal(turnedOn.statusCode, 200, turnedOn.body);
  const codes = [...turnedOn.body.matchAll(/data-recovery-code="([a-z0-9-]+)"/g)].map((m) => m[1]!);
  return { key, codes, page: turnedOn.body };
}

/** A 6-digit code that is not the app's current one (nor one step either side). */
function wrongCode(flow: Flow, key: string): string {
  const near = [-30, 0, 30].map((d) => totpCode(key, flow.clock() + d * SECOND));
  return ['000000', '111111', '222222', '333333'].find((c) => !near.includes(c))!;
}

/** The code the app shows one step later (a code is accepted once: each sign-in uses a new step). */
function nextCode(flow: Flow, key: string): string {
  flow.clock.advance(30 * SECOND);
  return totpCode(key, flow.clock());
}

async function auditTypes(flow: Flow, type: string): Promise<Array<{ outcome: string; detail: Record<string, unknown> | null }>> {
  return (await listAuditEvents(flow.deps.db, { type, sub: flow.sub })).events;
}

forEachDatabase('two-step verification pages', (open) => {
  test('set-up: "a QR code of the otpauth:// URI and the same secret as text (data-setup-key)", a field labelled Code and a button Turn on; then 10 recovery codes shown once; mfa.enabled and a security notification', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    const setup = await browser.get('/account/two-step/setup');
    assert.match(setup.body, /<svg[^>]*viewBox/);
    assert.match(setup.body, /<label for="code">Code<\/label>/);
    assert.match(setup.body, /<button type="submit" class="primary">Turn on<\/button>/);
    const again = await browser.get('/account/two-step/setup');
    assert.equal(/data-setup-key="([A-Z2-7]+)"/.exec(again.body)?.[1], /data-setup-key="([A-Z2-7]+)"/.exec(setup.body)?.[1], 'reloading shows the same key');

    const wrong = await browser.post('/account/two-step/setup', { _csrf: csrfOf(setup.body), code: wrongCode(flow, /data-setup-key="([A-Z2-7]+)"/.exec(setup.body)![1]!) });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.body, /does not match/);

    const { key, codes, page } = await setUpApp(browser, flow);
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    assert.match(page, /download="signet-recovery-codes.txt"/);
    assert.match(page, /data-copy-codes/);
    // The secret is not stored in the clear.
    const rows = await flow.deps.db.selectFrom('second_factors').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(!rows[0]!.secret_enc.includes(key) && rows[0]!.enabled_at !== null);
    const stored = await flow.deps.db.selectFrom('recovery_codes').select('code_hash').execute();
    assert.ok(stored.every((r) => !codes.some((c) => r.code_hash.includes(c.replace('-', '')))));
    assert.equal((await auditTypes(flow, 'mfa.enabled')).length, 1);
    const notes = await flow.deps.db.selectFrom('notifications').selectAll().where('sub', '=', flow.sub).execute();
    assert.ok(notes.some((n) => n.category === 'security' && /Authenticator app added/.test(n.title)));
    // The account page now shows the app, with its actions.
    const account = await browser.get('/account');
    assert.match(account.body, /10 unused recovery codes left/);
    assert.doesNotMatch(account.body, /Set up authenticator app/);
    assert.ok(!flow.logs.join('').includes(key), 'the key is never logged');
  });

  test('half-signed-in is not signed in: after a correct password with a factor there is no session — prompt=none answers login_required and /account sends to sign-in', async () => {
    const flow = await flowSetup(await open());
    const owner = new TinyBrowser(flow);
    await owner.signIn();
    await setUpApp(owner, flow);

    const browser = new TinyBrowser(flow);
    const requestId = await browser.authorize({ scope: 'openid' });
    const afterPassword = await browser.signIn(requestId);
    assert.equal(afterPassword.statusCode, 303);
    assert.equal(afterPassword.headers.location, '/signin/two-step');
    const step = await browser.get('/signin/two-step');
    assert.match(step.body, /<label for="code">Code<\/label>/);
    assert.match(step.body, />Verify<\/button>/);
    assert.match(step.body, /Remember this browser for 30 days/);
    assert.doesNotMatch(step.body, /Use a passkey/, 'no passkey, no passkey button');

    const none = await browser.get(flow.authorizePath({ prompt: 'none', scope: 'openid' }));
    assert.equal(new URL(String(none.headers.location)).searchParams.get('error'), 'login_required');
    const account = await browser.get('/account');
    assert.equal(account.statusCode, 302);
    assert.match(String(account.headers.location), /^\/signin/);
    const consent = await browser.get(`/consent?request=${requestId}`);
    assert.match(String(consent.headers.location), /^\/signin/);
    assert.equal((await auditTypes(flow, 'signin.succeeded')).length, 1, 'only the owner’s first sign-in so far');
  });

  test('second step: a TOTP code finishes the sign-in and goes on to consent; "a code that was accepted once is never accepted again"; wrong codes are mfa.failed', async () => {
    const flow = await flowSetup(await open());
    const owner = new TinyBrowser(flow);
    await owner.signIn();
    const { key } = await setUpApp(owner, flow);

    const browser = new TinyBrowser(flow);
    const requestId = await browser.authorize({ scope: 'openid' });
    await browser.signIn(requestId);
    const step = await browser.get('/signin/two-step');
    const wrong = await browser.post('/signin/two-step', { _csrf: csrfOf(step.body), code: '12345' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /not right/);
    const code = nextCode(flow, key);
    const done = await browser.post('/signin/two-step', { _csrf: csrfOf(wrong.body), code });
    assert.equal(done.statusCode, 303, done.body);
    assert.equal(done.headers.location, `/consent?request=${requestId}`);
    const callback = await browser.consent(requestId, 'allow');
    assert.ok(String(callback.headers.location).startsWith(REDIRECT_URI));

    // The same code again, in another browser, within its window: refused.
    const other = new TinyBrowser(flow);
    await other.signIn();
    const otherStep = await other.get('/signin/two-step');
    const replay = await other.post('/signin/two-step', { _csrf: csrfOf(otherStep.body), code });
    assert.equal(replay.statusCode, 401);
    assert.equal((await auditTypes(flow, 'mfa.failed')).length, 2);
    assert.deepEqual((await auditTypes(flow, 'signin.succeeded'))[0]!.detail, { factor: 'totp' });
  });

  test('recovery code: signs in once in place of a TOTP code, never twice; mfa.recovery_used and a security notification', async () => {
    const flow = await flowSetup(await open());
    const owner = new TinyBrowser(flow);
    await owner.signIn();
    const { codes } = await setUpApp(owner, flow);
    const first = new TinyBrowser(flow);
    await first.signIn();
    const step = await first.get('/signin/two-step');
    const used = await first.post('/signin/two-step', { _csrf: csrfOf(step.body), code: codes[3]!.toUpperCase() });
    assert.equal(used.statusCode, 303);
    assert.equal(used.headers.location, '/account');
    assert.equal((await first.get('/account')).statusCode, 200);

    const second = new TinyBrowser(flow);
    await second.signIn();
    const again = await second.get('/signin/two-step');
    const refused = await second.post('/signin/two-step', { _csrf: csrfOf(again.body), code: codes[3]! });
    assert.equal(refused.statusCode, 401);
    const events = await auditTypes(flow, 'mfa.recovery_used');
    assert.equal(events.length, 1);
    assert.equal(events[0]!.detail?.recovery_codes_left, 9);
    const notes = await flow.deps.db.selectFrom('notifications').select('title').where('sub', '=', flow.sub).execute();
    assert.ok(notes.some((n) => n.title === 'A recovery code was used to sign in'));
  });

  test('throttle on wrong codes: "5 wrong codes → growing waits" (429 with Retry-After), and a correct password again does not reset the count', async () => {
    const flow = await flowSetup(await open());
    const owner = new TinyBrowser(flow);
    await owner.signIn();
    const { key } = await setUpApp(owner, flow);
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    let page = (await browser.get('/signin/two-step')).body;
    for (let i = 1; i <= 4; i++) {
      const res = await browser.post('/signin/two-step', { _csrf: csrfOf(page), code: wrongCode(flow, key) });
      assert.equal(res.statusCode, 401, `wrong code ${i}`);
      assert.equal(res.headers['retry-after'], undefined);
      page = res.body;
    }
    const fifth = await browser.post('/signin/two-step', { _csrf: csrfOf(page), code: 'aaaaa-aaaaa' });
    assert.equal(fifth.statusCode, 401);
    assert.equal(fifth.headers['retry-after'], '5');
    // A new password step does not hand out a fresh allowance.
    await browser.signIn();
    const next = await browser.get('/signin/two-step');
    const held = await browser.post('/signin/two-step', { _csrf: csrfOf(next.body), code: totpCode(key, flow.clock()) });
    assert.equal(held.statusCode, 429, 'even the right code waits');
    flow.clock.advance(6 * SECOND);
    const sixth = await browser.post('/signin/two-step', { _csrf: csrfOf(held.body), code: wrongCode(flow, key) });
    assert.equal(sixth.headers['retry-after'], '10', 'the wait doubles');
  });

  test('"the step has its own 5-minute limit": after it, the code is refused and the person signs in again', async () => {
    const flow = await flowSetup(await open());
    const owner = new TinyBrowser(flow);
    await owner.signIn();
    const { key } = await setUpApp(owner, flow);
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    const step = await browser.get('/signin/two-step');
    flow.clock.advance(5 * MINUTE + SECOND);
    const late = await browser.post('/signin/two-step', { _csrf: csrfOf(step.body), code: totpCode(key, flow.clock()) });
    assert.equal(late.statusCode, 303);
    assert.equal(late.headers.location, '/signin?second_step=expired');
    assert.equal((await browser.get('/account')).statusCode, 302);
  });

  test('"A device cookie does not skip the second step unless the person ticked Remember this browser for 30 days"', async () => {
    const flow = await flowSetup(await open());
    const owner = new TinyBrowser(flow);
    await owner.signIn();
    const { key } = await setUpApp(owner, flow);
    // The owner's browser holds a device cookie from its first sign-in: still asked.
    await owner.post('/signout', { _csrf: csrfOf((await owner.get('/account')).body) });
    assert.ok([...owner.cookies.keys()].some((k) => k.includes('device')));
    const asked = await owner.signIn();
    assert.equal(asked.headers.location, '/signin/two-step');
    const step = await owner.get('/signin/two-step');
    await owner.post('/signin/two-step', { _csrf: csrfOf(step.body), code: nextCode(flow, key), remember: '1' });
    assert.ok([...owner.cookies.keys()].some((k) => k.includes('remembered')));
    await owner.post('/signout', { _csrf: csrfOf((await owner.get('/account')).body) });
    const skipped = await owner.signIn();
    assert.equal(skipped.headers.location, '/account', 'a remembered browser goes straight in');
    // Remembered for 30 days only.
    await owner.post('/signout', { _csrf: csrfOf((await owner.get('/account')).body) });
    flow.clock.advance(31 * 24 * 60 * MINUTE);
    assert.equal((await owner.signIn()).headers.location, '/signin/two-step');
  });

  test('SIGNET_MFA=required: "a person without a factor is led, after the password, to set one up before any consent or callback"', async () => {
    const flow = await flowSetup(await open(), { SIGNET_MFA: 'required' });
    const browser = new TinyBrowser(flow);
    const requestId = await browser.authorize({ scope: 'openid' });
    const afterPassword = await browser.signIn(requestId);
    assert.equal(afterPassword.headers.location, '/signin/two-step/setup');
    // No session yet: neither consent nor prompt=none gets anywhere.
    assert.match(String((await browser.get(`/consent?request=${requestId}`)).headers.location), /^\/signin/);
    const none = await browser.get(flow.authorizePath({ prompt: 'none', scope: 'openid' }));
    assert.equal(new URL(String(none.headers.location)).searchParams.get('error'), 'login_required');
    const setup = await browser.get('/signin/two-step/setup');
    assert.match(setup.body, /requires two-step verification/);
    const key = /data-setup-key="([A-Z2-7]+)"/.exec(setup.body)![1]!;
    const on = await browser.post('/signin/two-step/setup', { _csrf: csrfOf(setup.body), code: totpCode(key, flow.clock()) });
    assert.equal(on.statusCode, 200);
    assert.equal([...on.body.matchAll(/data-recovery-code=/g)].length, 10);
    assert.match(on.body, new RegExp(`href="/consent\\?request=${requestId}"`));
    const callback = await browser.consent(requestId, 'allow');
    assert.ok(String(callback.headers.location).startsWith(REDIRECT_URI));
    assert.equal((await auditTypes(flow, 'mfa.enabled')).length, 1);
  });

  test('SIGNET_MFA=required: a session from before the policy, without a factor, is sent to set-up before consent, and prompt=none gets interaction_required, never a code', async () => {
    const database = await open();
    const before = await flowSetup(database);
    const browser = new TinyBrowser(before);
    // Signed in and allowed the application while factors were optional: a grant that covers openid.
    await browser.fullFlow({ scope: 'openid' });
    // The operator turns the policy on: the same database, a new process.
    const strict = await testApp(database, { SIGNET_MFA: 'required' });
    const strictBrowser = new TinyBrowser({ ...before, ...strict });
    for (const [k, v] of browser.cookies) strictBrowser.cookies.set(k, v);
    const requestId = await strictBrowser.authorize({ scope: 'openid' });
    const consent = await strictBrowser.get(`/consent?request=${requestId}`);
    assert.equal(consent.statusCode, 302);
    assert.equal(consent.headers.location, `/account/two-step/setup?return=${encodeURIComponent(`/consent?request=${requestId}`)}`);
    // spec (issue 19): set a factor up "before any consent or callback" — the grant alone gives no code.
    const none = await strictBrowser.get(before.authorizePath({ prompt: 'none', scope: 'openid' }));
    const answer = new URL(String(none.headers.location));
    assert.equal(answer.searchParams.get('error'), 'interaction_required');
    assert.equal(answer.searchParams.get('code'), null);
    // The same request on the old, optional-policy process still answers with a code (the grant covers it).
    const optional = await browser.get(before.authorizePath({ prompt: 'none', scope: 'openid' }));
    assert.ok(new URL(String(optional.headers.location)).searchParams.get('code'));
  });

  test('step-up: "turning factors off" and "making new recovery codes" need the password or a factor within the last 10 minutes; the confirm page returns to the action', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    const { key, codes } = await setUpApp(browser, flow);
    // Within 10 minutes of signing in: the action page itself.
    assert.equal((await browser.get('/account/two-step/recovery-codes')).statusCode, 200);
    flow.clock.advance(11 * MINUTE);
    for (const path of ['/account/two-step/recovery-codes', '/account/two-step/turn-off']) {
      const page = await browser.get(path);
      assert.equal(page.statusCode, 303, path);
      assert.equal(page.headers.location, `/account/confirm?return=${encodeURIComponent(path)}`);
    }
    // A POST without a recent check changes nothing.
    const csrf = csrfOf((await browser.get('/account')).body);
    const refused = await browser.post('/account/two-step/turn-off', { _csrf: csrf });
    assert.equal(refused.headers.location, `/account/confirm?return=${encodeURIComponent('/account/two-step/turn-off')}`);
    assert.equal((await flow.deps.db.selectFrom('second_factors').selectAll().execute()).length, 1);
    // The confirmation: a wrong password is refused; the right one returns to the action.
    const confirm = await browser.get(`/account/confirm?return=${encodeURIComponent('/account/two-step/recovery-codes')}`);
    assert.match(confirm.body, /<label for="confirm-password">Password<\/label>/);
    const bad = await browser.post('/account/confirm', { _csrf: csrfOf(confirm.body), method: 'password', password: 'not it', return: '/account/two-step/recovery-codes' });
    assert.equal(bad.statusCode, 400);
    const good = await browser.post('/account/confirm', { _csrf: csrfOf(bad.body), method: 'password', password: PASSWORD, return: '/account/two-step/recovery-codes' });
    assert.equal(good.headers.location, '/account/two-step/recovery-codes');
    const action = await browser.get('/account/two-step/recovery-codes');
    const renewed = await browser.post('/account/two-step/recovery-codes', { _csrf: csrfOf(action.body) });
    const fresh = [...renewed.body.matchAll(/data-recovery-code="([a-z0-9-]+)"/g)].map((m) => m[1]!);
    assert.equal(fresh.length, 10);
    assert.ok(fresh.every((c) => !codes.includes(c)));
    // The old set stopped working.
    const other = new TinyBrowser(flow);
    await other.signIn();
    const step = await other.get('/signin/two-step');
    assert.equal((await other.post('/signin/two-step', { _csrf: csrfOf(step.body), code: codes[0]! })).statusCode, 401);

    // Later again: confirming with a code works too, then turning off.
    flow.clock.advance(11 * MINUTE);
    const byCode = await browser.get(`/account/confirm?return=${encodeURIComponent('/account/two-step/turn-off')}`);
    const ok = await browser.post('/account/confirm', { _csrf: csrfOf(byCode.body), method: 'code', code: totpCode(key, flow.clock()), return: '/account/two-step/turn-off' });
    assert.equal(ok.headers.location, '/account/two-step/turn-off');
    const off = await browser.get('/account/two-step/turn-off');
    const done = await browser.post('/account/two-step/turn-off', { _csrf: csrfOf(off.body) });
    assert.equal(done.headers.location, '/account?saved=two-step-off#two-step-heading');
    assert.equal((await flow.deps.db.selectFrom('second_factors').selectAll().execute()).length, 0);
    assert.equal((await flow.deps.db.selectFrom('recovery_codes').selectAll().execute()).length, 0);
    assert.equal((await auditTypes(flow, 'mfa.disabled')).length, 1);
    // Signing in asks for the password only now.
    const later = new TinyBrowser(flow);
    assert.equal((await later.signIn()).headers.location, '/account');
  });

  test('step-up: changing the password needs the current password (the check itself), and starts a checked session', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    flow.clock.advance(30 * MINUTE);
    const account = await browser.get('/account');
    const refused = await browser.post('/account/password', { _csrf: csrfOf(account.body), current_password: 'wrong one', new_password: 'a brand new password' });
    assert.equal(refused.statusCode, 400);
    const changed = await browser.post('/account/password', { _csrf: csrfOf(refused.body), current_password: PASSWORD, new_password: 'a brand new password' });
    assert.equal(changed.statusCode, 303);
    const rows = await flow.deps.db.selectFrom('sessions').select('checked_at').execute();
    assert.deepEqual(rows.map((r) => r.checked_at), [flow.clock()]);
  });
});
