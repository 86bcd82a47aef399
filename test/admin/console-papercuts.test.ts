// Issue 36 through app.inject, on SQLite and PostgreSQL: workers' heartbeats (a real `signet worker`
// writes its row and removes it when it stops; a silent one is swept after a day), the e-mail outbox's
// lists and counts, "End this session" from a person's page, the console 404 page, and the rules of
// passkeys on the admin listener (offered only under the public host name, never at an IP address;
// a passkey from a software authenticator signs a passkey-only operator in; the TOTP set-up is not asked).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countPasskeys, finishPasskeyRegistration, startPasskeyRegistration } from '../../src/accounts/factors/passkeys.ts';
import { queueAccountMail } from '../../src/accounts/mail/outbox.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import { outboxCounts, outboxPage } from '../../src/admin/mail-outbox.ts';
import { DAY, MINUTE } from '../../src/config/clock.ts';
import { isPostgres } from '../../src/db/database.ts';
import { forgetSilentWorkers, listWorkers, startHeartbeat } from '../../src/worker/heartbeats.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.ts';
import { adminFixture, type AdminFixture } from './admin-fixture.ts';
import { consoleBrowser, createOperator, OPERATOR_PASSWORD, signInToConsole } from './console-fixture.ts';

async function operatorBrowser(f: AdminFixture) {
  const operator = await createOperator(f);
  const browser = consoleBrowser(f);
  assert.equal((await signInToConsole(f, browser, 'operator@example.com', operator.secret)).headers.location, '/admin');
  return browser;
}

async function done(f: AdminFixture): Promise<void> {
  await f.adminApp.close();
  await f.app.close();
}

forEachDatabase('console papercuts (issue 36)', (open) => {
  test('"workers must record a heartbeat somewhere shared by every node": a running `signet worker` has its row (what it takes, its host) — idle, it is still listed; stopping removes the row', async () => {
    const f = await adminFixture(await open());
    const worker = startWorker({
      settings: f.deps.settings,
      database: { db: f.deps.db, dialect: isPostgres(f.deps.db) ? 'postgres' : 'sqlite', close: async () => {} } as Parameters<typeof startWorker>[0]['database'],
      clock: f.clock,
      logger: f.deps.logger,
      kinds: ['tasks'],
      keys: f.deps.keys,
      taskOptions: { pollMs: 60_000 },
    });
    try {
      let workers = await listWorkers(f.deps.db, f.clock);
      for (let i = 0; i < 50 && workers.length === 0; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        workers = await listWorkers(f.deps.db, f.clock);
      }
      assert.equal(workers.length, 1, 'the worker wrote its heartbeat at start');
      assert.deepEqual(workers[0]!.work, ['translate', 'docparse']);
      assert.equal(workers[0]!.pid, process.pid);
      assert.equal(workers[0]!.alive, true);
      const browser = await operatorBrowser(f);
      const page = await browser.get('/admin/tasks');
      assert.match(page.body, /translate, docparse/);
      assert.match(page.body, />Idle</);
      const overview = await browser.get('/admin');
      assert.match(overview.body, /<span class="tile-value">1<\/span> <span class="tile-label">Workers seen in the last minute/);
    } finally {
      await worker.stop();
    }
    assert.deepEqual(await listWorkers(f.deps.db, f.clock), [], 'a worker that stops removes its row');
    await done(f);
  });

  test('a worker silent for over a minute is listed as such; after a day the sweep forgets it', async () => {
    const f = await adminFixture(await open());
    const beat = startHeartbeat({ db: f.deps.db, clock: f.clock, logger: f.deps.logger }, { id: 'a5b1c0de-0000-4000-8000-000000000001', work: ['email'], slots: 0, version: '0.1.0' }, 3_600_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    f.clock.advance(2 * MINUTE);
    const [silent] = await listWorkers(f.deps.db, f.clock);
    assert.equal(silent?.alive, false, 'no heartbeat within the minute');
    const page = await (await operatorBrowser(f)).get('/admin/tasks');
    assert.match(page.body, /no heartbeat for over a minute/);
    f.clock.advance(DAY);
    assert.equal(await forgetSilentWorkers(f.deps.db, f.clock), 1);
    assert.deepEqual(await listWorkers(f.deps.db, f.clock), []);
    await beat.stop();
    await done(f);
  });

  test('the e-mail outbox lists account mail and e-mail notifications by state — queued, sent, failed, not sent, retried — and "E-mails pending" links to the queued ones', async () => {
    const f = await adminFixture(await open());
    const { db } = f.deps;
    const mail = (kind: 'password_reset' | 'email_verification') => queueAccountMail(db, f.clock(), { kind, sub: f.sub, to: 'ada@example.com', locale: 'en', linkExpiresAt: f.clock() + 60 * MINUTE });
    await mail('password_reset');
    const failed = await mail('email_verification');
    await db.updateTable('mail_outbox').set({ status: 'failed', attempts: 5, reason: 'smtp 550', next_attempt_at: null }).where('id', '=', failed).execute();
    const retrying = await mail('password_reset');
    await db.updateTable('mail_outbox').set({ attempts: 1, reason: 'connection refused', next_attempt_at: f.clock() + MINUTE }).where('id', '=', retrying).execute();
    await queueAccountMail(db, f.clock(), { kind: 'signup_exists', sub: undefined, to: undefined, locale: 'en', linkExpiresAt: undefined });
    await db.insertInto('notifications').values({ id: 'n-1', seq: 1, sub: f.sub, category: 'security', title: 't', body: 'b', link: null, client_id: null, locale: 'en', created_at: f.clock(), read_at: null }).execute();
    await db.insertInto('notification_deliveries').values({ notification_id: 'n-1', channel: 'email', status: 'sent', reason: null, attempts: 2, next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: f.clock() }).execute();
    await db.insertInto('notification_deliveries').values({ notification_id: 'n-1', channel: 'in_app', status: 'sent', reason: null, attempts: 0, next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: f.clock() }).execute();

    assert.deepEqual(await outboxCounts(db), { pending: 2, sent: 1, failed: 1, suppressed: 1 }, 'e-mail only: the in-app delivery is no e-mail');
    const kinds = async (view: Parameters<typeof outboxPage>[1]) => (await outboxPage(db, view, undefined)).lines.map((l) => `${l.source}:${l.kind}:${l.status}`).sort();
    assert.deepEqual(await kinds('pending'), ['account_mail:password_reset:pending', 'account_mail:password_reset:pending']);
    assert.deepEqual(await kinds('retried'), ['account_mail:email_verification:failed', 'account_mail:password_reset:pending', 'notification:security:sent']);
    assert.deepEqual(await kinds('suppressed'), ['account_mail:signup_exists:suppressed']);

    const browser = await operatorBrowser(f);
    const overview = await browser.get('/admin');
    assert.match(overview.body, /<a class="tile" href="\/admin\/mail\?status=pending"><span class="tile-value">2<\/span> <span class="tile-label">E-mails pending/);
    const page = await browser.get('/admin/mail?status=failed');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /smtp 550/);
    assert.doesNotMatch(page.body, /connection refused/);
    assert.equal((await browser.get('/admin/mail?status=nonsense&before=abc')).statusCode, 200, 'an unknown filter shows everything, never an error');
    await done(f);
  });

  test('"End this session" on a person\'s page ends that session only, audited with the operator as actor', async () => {
    const f = await adminFixture(await open());
    const key = f.deps.keys.tokenHash;
    const kept = await startSession(f.deps.db, key, f.clock, { sub: f.sub, origin: 'http://signet.test' });
    f.clock.advance(1000);
    await startSession(f.deps.db, key, f.clock, { sub: f.sub, origin: 'http://signet.test' });
    const browser = await operatorBrowser(f);
    const page = await browser.get(`/admin/people/${f.sub}`);
    const actions = [...page.body.matchAll(/action="(\/admin\/people\/[^"]+\/sessions\/[^"]+\/end)"/g)].map((m) => m[1]!);
    assert.equal(actions.length, 2);
    const ended = await browser.post(actions[0]!, {});
    assert.equal(ended.statusCode, 303);
    assert.match(String(ended.headers.location), /notice=session_ended/);
    assert.match((await browser.get(String(ended.headers.location))).body, /The session ended/);
    const left = await f.deps.db.selectFrom('sessions').select('created_at').where('sub', '=', f.sub).execute();
    assert.deepEqual(left.map((s) => Number(s.created_at)), [Number(kept.session.authTime)], 'the older session goes on');
    assert.equal((await browser.post(actions[0]!, {})).statusCode, 404, 'ended already: a console page says so');
    assert.equal((await browser.post(actions[1]!, {}, { csrf: false })).statusCode, 403, 'without its CSRF token nothing ends');
    const trail = await f.deps.db.selectFrom('audit_events').select(['actor', 'outcome']).where('type', '=', 'account.session_ended').orderBy('id').execute();
    assert.deepEqual(trail.map((e) => e.outcome), ['success', 'failure']);
    assert.ok(trail.every((e) => e.actor?.startsWith('operator:')));
    await done(f);
  });

  test('an unknown /admin/… address answers a console 404 page (without navigation when nobody is signed in); /admin/v1/… keeps the API\'s JSON 404; /admin/ leads to /admin', async () => {
    const f = await adminFixture(await open());
    const anonymous = await f.adminApp.inject({ url: '/admin/nothing/here' });
    assert.equal(anonymous.statusCode, 404);
    assert.match(String(anonymous.headers['content-type']), /text\/html/);
    assert.match(anonymous.body, /Page not found/);
    assert.doesNotMatch(anonymous.body, />People<\/a>/, 'no navigation for a visitor');
    assert.equal(anonymous.headers['x-frame-options'], 'DENY');
    const posted = await f.adminApp.inject({ method: 'POST', url: '/admin/nothing', payload: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(posted.statusCode, 404, 'not a page navigation: the listener\'s own 404');
    for (const url of ['/admin/v1/nothing', '/admin/v1', '/admin/v1/accounts/x/nothing']) {
      const api = await f.adminApp.inject({ url });
      assert.equal(api.statusCode, 404, url);
      assert.equal(api.json<{ error: string }>().error, 'not_found', url);
    }
    const slash = await f.adminApp.inject({ url: '/admin/' });
    assert.equal(slash.headers.location, '/admin');
    const browser = await operatorBrowser(f);
    const page = await browser.get('/admin/nothing');
    assert.equal(page.statusCode, 404);
    assert.match(page.body, />People<\/a>/, 'an operator keeps the navigation');
    assert.doesNotMatch(page.body, /aria-current="page"/, 'no page is current');
    await done(f);
  });

  test('passkeys on the admin listener: offered under the public host name only (never at an IP address); a passkey-only operator signs in with one and is never sent to set up TOTP', async () => {
    const f = await adminFixture(await open());
    const { db, clock, keys, objects, logger } = f.deps;
    const admin = await buildAdminApp({ db, clock, keys, objects, logger, trustProxy: false, passkeyHosts: ['localhost'] });
    const operator = await createOperator(f, 'passkey-operator@example.com', { totp: false });
    // The passkey, made on the public site (RP ID localhost) by a software authenticator.
    const rp = { id: 'localhost', origin: 'http://localhost:8080', name: 'Signet' };
    const passkeys = { db, dialect: isPostgres(db) ? ('postgres' as const) : ('sqlite' as const), clock, hashKey: keys.tokenHash };
    const authenticator = new SoftwareAuthenticator();
    const options = await startPasskeyRegistration(passkeys, rp, { sub: operator.sub, userName: 'passkey-operator@example.com', displayName: 'Operator' });
    await finishPasskeyRegistration(passkeys, rp, operator.sub, { name: 'Laptop', response: authenticator.register(options, rp.origin), locale: 'en' });
    assert.equal(await countPasskeys(db, operator.sub), 1);

    const cookies = new Map<string, string>();
    const send = async (method: 'GET' | 'POST', url: string, host: string, body?: unknown, csrf?: string) => {
      const res = await admin.inject({
        method,
        url,
        headers: { host, cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json' }), ...(csrf ? { 'x-csrf-token': csrf } : {}) },
        ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      for (const c of res.cookies) c.value === '' ? cookies.delete(c.name) : cookies.set(c.name, c.value);
      return res;
    };
    const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1]!;

    const byAddress = await send('GET', '/admin/signin', '127.0.0.1:9465');
    assert.doesNotMatch(byAddress.body, /data-passkey/, 'an RP ID cannot be an IP address: no passkey button');
    const byName = await send('GET', '/admin/signin', 'localhost:9465');
    assert.match(byName.body, /data-passkey/);
    const csrf = csrfOf(byName.body);
    assert.equal((await send('POST', '/admin/signin/passkey/options', '127.0.0.1:9465', {}, csrf)).statusCode, 404);

    // The password first: the second step takes the passkey, not the TOTP set-up.
    const afterPassword = await send('POST', '/admin/signin', 'localhost:9465', new URLSearchParams({ _csrf: csrf, identifier: 'passkey-operator@example.com', password: OPERATOR_PASSWORD }).toString());
    assert.equal(afterPassword.headers.location, '/admin/signin/two-step', 'not /admin/signin/two-step/setup');
    const step = await send('GET', '/admin/signin/two-step', 'localhost:9465');
    assert.match(step.body, /Use a passkey/);
    assert.doesNotMatch(step.body, /name="code"/, 'no code field: no authenticator app');
    const stepCsrf = csrfOf(step.body);
    const stepOptions = await send('POST', '/admin/signin/two-step/passkey/options', 'localhost:9465', {}, stepCsrf);
    assert.equal(stepOptions.statusCode, 200, stepOptions.body);
    // An answer made for another origin is refused (the console's own origin is expected).
    const wrongOrigin = await send('POST', '/admin/signin/two-step/passkey', 'localhost:9465', { response: authenticator.assert(stepOptions.json(), 'http://evil.example:9465') }, stepCsrf);
    assert.equal(wrongOrigin.statusCode, 401);
    const again = await send('POST', '/admin/signin/two-step/passkey/options', 'localhost:9465', {}, stepCsrf);
    const signedIn = await send('POST', '/admin/signin/two-step/passkey', 'localhost:9465', { response: authenticator.assert(again.json(), 'http://localhost:9465') }, stepCsrf);
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    assert.deepEqual(signedIn.json(), { redirect: '/admin' });
    const overview = await send('GET', '/admin', 'localhost:9465');
    assert.equal(overview.statusCode, 200, 'a passkey-only operator is in (and stays in)');
    assert.match(overview.body, /Overview/);
    await admin.close();
    await done(f);
  });
});
