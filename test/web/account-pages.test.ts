// The self-service pages over HTTP (app.inject): every form carries the CSRF token and refuses a POST
// without it, sign-up is 404 unless open, the forgotten-password page gives one answer and is limited
// per client address, a reset token never reaches a log line, Withdraw asks first, the account's forms
// answer a mistake with the page again, not a change, and password changes, resets and withdrawals are
// audit events.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { requestPasswordReset } from '../../src/accounts/password-reset.ts';
import { listAuditEvents } from '../../src/audit/audit.ts';
import { deliverNextAccountMail } from '../../src/accounts/mail/deliver.ts';
import { recordConsent } from '../../src/consent/grants.ts';
import { DEFAULT_EMAIL_POLICY } from '../../src/notifications/email/deliver.ts';
import type { OutgoingEmail } from '../../src/notifications/email/send.ts';
import { createLogger } from '../../src/web/logging.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertFrameHeaders, csrfOf, EMAIL, flowSetup, PASSWORD, TinyBrowser, type Flow } from '../oauth/authorize-support.ts';

/** Asks for a reset link for EMAIL and returns the token the worker would mail. */
async function resetToken(flow: Flow): Promise<string> {
  const { db, clock, keys } = flow.deps;
  await requestPasswordReset({ db, clock, hashKey: keys.tokenHash, tokenKey: keys.accountToken }, { email: EMAIL, address: '192.0.2.1', locale: 'en' });
  const sent: OutgoingEmail[] = [];
  const mailer = { send: async (m: OutgoingEmail) => void sent.push(m), close() {} };
  await deliverNextAccountMail(
    { db, dialect: flow.deps.dialect, clock, mailer, baseUrl: flow.deps.settings.baseUrl, tokenKey: keys.accountToken, productName: 'Signet', logger: createLogger('silent') },
    DEFAULT_EMAIL_POLICY,
    'test',
  );
  return /token=([A-Za-z0-9_-]{43})/.exec(sent[0]!.text)![1]!;
}

forEachDatabase('account pages', (open) => {
  test('CSRF: "every form has the CSRF token" on /account, /forgot-password, /reset-password and /signup; a POST without it is a 403 page and changes nothing', async () => {
    const database = await open();
    const flow = await flowSetup(database, { SIGNET_SIGNUP: 'open' });
    const token = await resetToken(flow);
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    for (const path of ['/account', '/forgot-password', `/reset-password?token=${token}`]) {
      const page = await browser.get(path);
      assert.equal(page.statusCode, 200, path);
      const forms = page.body.match(/<form /g)?.length ?? 0;
      const tokens = page.body.match(/name="_csrf"/g)?.length ?? 0;
      assert.ok(forms > 0 && forms === tokens, `${path}: ${forms} forms, ${tokens} tokens`);
    }
    const signup = await new TinyBrowser(flow).get('/signup');
    assert.equal(signup.body.match(/<form /g)?.length, signup.body.match(/name="_csrf"/g)?.length);

    const before = await database.db.selectFrom('users').selectAll().execute();
    const sessions = await database.db.selectFrom('sessions').selectAll().execute();
    for (const [path, form] of [
      ['/account/profile', { name: 'Forged', picture: '' }],
      ['/account/password', { current_password: PASSWORD, new_password: 'forged password' }],
      ['/account/sessions/end', { session: sessions[0]!.id_hash }],
      ['/account/sessions/end-others', {}],
      ['/account/verify-email', {}],
      ['/forgot-password', { email: EMAIL }],
      ['/reset-password', { token, password: 'forged password' }],
      ['/signup', { email: 'forged@example.com', password: 'forged password' }],
    ] as const) {
      const res = await browser.post(path, form);
      assert.equal(res.statusCode, 403, `${path} without a token`);
      assert.match(res.body, /reload the page and try again/);
      assertFrameHeaders(res.headers);
    }
    assert.deepEqual(await database.db.selectFrom('users').selectAll().execute(), before);
    assert.equal((await database.db.selectFrom('sessions').selectAll().execute()).length, sessions.length);
    assert.equal((await database.db.selectFrom('mail_outbox').selectAll().execute()).length, 1, 'only the reset asked for above');
  });

  test('"with signup closed the page is 404": GET and POST /signup, and no Create account link', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    assert.equal((await browser.get('/signup')).statusCode, 404);
    const signin = await browser.get('/signin');
    assert.equal((await browser.post('/signup', { _csrf: csrfOf(signin.body), email: 'x@example.com', password: 'a password here' })).statusCode, 404);
    assert.doesNotMatch(signin.body, /href="\/signup"/);
    assert.match(signin.body, /<a href="\/forgot-password">Forgot password\?<\/a>/);
  });

  test('forgotten password: the same page for a known and an unknown address; an address that is not one is told so; 20 requests an hour from one client address, then 429 with Retry-After', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const ask = (email: string) => browser.submit('/forgot-password', '/forgot-password', { email });
    const known = await ask(EMAIL);
    const unknown = await ask('nobody@example.com');
    assert.equal(known.statusCode, 200);
    const main = (body: string, email: string) => /<main id="main">([\s\S]*)<\/main>/.exec(body)![1]!.replaceAll(email, 'ADDRESS');
    assert.equal(main(unknown.body, 'nobody@example.com'), main(known.body, EMAIL));
    assert.equal(unknown.statusCode, known.statusCode);
    assert.equal((await ask('not an address')).statusCode, 400);
    for (let n = 2; n < 20; n++) assert.equal((await ask(`someone-${n}@example.com`)).statusCode, 200);
    const refused = await ask(EMAIL);
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.match(refused.body, /Too many requests from your network/);
  });

  test('the reset page: a wrong token is refused (400); the token never reaches a log line; a new password that is too short keeps the link usable', async () => {
    const flow = await flowSetup(await open());
    const token = await resetToken(flow);
    const browser = new TinyBrowser(flow);
    assert.equal((await browser.get('/reset-password?token=nonsense')).statusCode, 400);
    assert.equal((await browser.get('/reset-password')).statusCode, 400);
    const short = await browser.submit(`/reset-password?token=${token}`, '/reset-password', { token, password: 'short' });
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /The password needs at least 8 characters/);
    const done = await browser.submit(`/reset-password?token=${token}`, '/reset-password', { token, password: 'a fine new password' });
    assert.equal(done.statusCode, 200);
    assert.match(done.body, /Your new password is set/);
    assert.ok(!flow.logs.join('').includes(token), 'no log line holds the token');
    assert.equal((await browser.signIn(undefined, EMAIL, 'a fine new password')).statusCode, 303);
    const audit = await listAuditEvents(flow.deps.db, { sub: flow.sub, type: 'password.*' });
    assert.deepEqual(audit.events.map((e) => [e.type, e.outcome, e.actor]), [['password.reset', 'success', null]]);
  });

  test('/account: Withdraw asks first — a confirmation with its own form ("Withdraw access") and "Keep access"', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    await recordConsent(database.db, flow.clock, flow.sub, flow.clientId, ['openid', 'profile'], ['openid', 'profile'], { dialect: database.dialect, locale: 'en' });
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    const page = await browser.get('/account');
    assert.match(page.body, /<button type="button" popovertarget="withdraw-0"[^>]*>Withdraw<\/button>/);
    assert.match(page.body, /<div popover id="withdraw-0" class="confirm" role="dialog" aria-labelledby="withdraw-question-0">/);
    assert.match(page.body, /<form method="post" action="\/account\/withdraw" class="actions">[\s\S]*?>Withdraw access<\/button>[\s\S]*?>Keep access<\/button>/);
    assert.match(page.body, /<strong>profile<\/strong> — Your name and picture/, 'the scopes as the consent page words them');
    assert.equal((await browser.submit('/account', '/account/withdraw', { client_id: flow.clientId })).statusCode, 303);
    const audit = await listAuditEvents(database.db, { sub: flow.sub, type: 'consent.withdrawn' });
    assert.deepEqual(audit.events.map((e) => [e.client_id, e.outcome, e.detail]), [[flow.clientId, 'success', { revoked: 'user_client_tokens' }]]);
  });

  test('/account: a wrong current password or a too-short new one is answered with the page (400) and changes nothing; the sessions list names this browser', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow, flow.host, { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:140.0) Gecko/20100101 Firefox/140.0' });
    await browser.signIn();
    const wrong = await browser.submit('/account', '/account/password', { current_password: 'not it', new_password: 'a new password' });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.body, /That is not your current password/);
    assert.match(wrong.body, /id="current-password"[^>]*aria-invalid="true"/);
    const short = await browser.submit('/account', '/account/password', { current_password: PASSWORD, new_password: 'short' });
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /The password needs at least 8 characters/);
    const page = await browser.get('/account');
    assert.match(page.body, /<h3 id="session-0">Firefox on Windows<\/h3>\s*<span class="current">This browser<\/span>/);
    assert.match(page.body, /You are signed in only in this browser\./);
    const changed = await browser.submit('/account', '/account/password', { current_password: PASSWORD, new_password: 'a new password' });
    assert.equal(changed.statusCode, 303);
    assert.equal((await browser.get('/account')).statusCode, 200, 'still signed in, with the new session');
    const audit = await listAuditEvents(flow.deps.db, { sub: flow.sub, type: 'password.changed' });
    assert.deepEqual(
      audit.events.map((e) => [e.outcome, e.detail]),
      [
        ['success', null],
        ['failure', { reason: 'wrong_password' }],
      ],
      'newest first; a too-short new password is refused before anything is tried',
    );
  });
});
