// /admin/v1/accounts…: "deleting an account revokes its grants and tokens", unlocking lifts a
// lockout, PATCH takes the `user update` fields and `disabled`, search by e-mail or phone, paging,
// sessions — and every change is an audit event with who made it and from where.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { findSession, startSession } from '../../src/accounts/sessions.ts';
import { signIn } from '../../src/accounts/signin.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertOAuthError } from '../oauth/token-fixtures.ts';
import { adminFixture, type AdminFixture } from './admin-fixture.ts';

type Account = { sub: string; email: string | null; phone_number: string | null; name: string | null; disabled: boolean };
type AuditEvent = { id: string; type: string; sub: string | null; client_id: string | null; ip: string | null; outcome: string; actor: string | null; detail: Record<string, unknown> | null };

async function events(f: AdminFixture, query = ''): Promise<AuditEvent[]> {
  const res = await f.admin('GET', `/admin/v1/audit-events${query}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ events: AuditEvent[] }>().events;
}

async function done(f: AdminFixture): Promise<void> {
  await f.app.close();
  await f.adminApp.close();
}

forEachDatabase('admin API: accounts', (open) => {
  test('"deleting an account revokes its grants and tokens": after DELETE no token of it works (userinfo 401, refresh invalid_grant) and its grant is gone', async () => {
    const f = await adminFixture(await open());
    // A remembered consent (seeded directly: the consent code's signature is changing under other work).
    await f.deps.db.insertInto('grants').values({ sub: f.sub, client_id: f.confidential.client.clientId, scope: 'openid profile email', first_authorized_at: f.clock(), updated_at: f.clock(), muted: 0 }).execute();
    const tokens = await f.exchange();
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200, 'the token works before');

    const res = await f.admin('DELETE', `/admin/v1/accounts/${f.sub}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');

    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401);
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'invalid_grant');
    assert.deepEqual(await f.deps.db.selectFrom('grants').selectAll().where('sub', '=', f.sub).execute(), []);
    assert.equal((await f.admin('GET', `/admin/v1/accounts/${f.sub}`)).statusCode, 404);
    assert.equal((await f.admin('DELETE', `/admin/v1/accounts/${f.sub}`)).statusCode, 404, 'deleting it again: not found');

    const [notFound, deleted] = await events(f, '?type=account.deleted');
    assert.equal(deleted?.outcome, 'success');
    assert.equal(deleted?.actor, `admin_key:${f.keyId}`);
    assert.equal(deleted?.ip, '127.0.0.1');
    assert.equal(notFound?.outcome, 'failure');
    assert.deepEqual(notFound?.detail, { reason: 'not_found' });
    await done(f);
  });

  test('POST /admin/v1/accounts/:sub/unlock → 204 lifts a lockout: the person signs in again from the address that was locked', async () => {
    const f = await adminFixture(await open());
    const { db, keys } = f.deps;
    const attempt = (password: string) => signIn(db, keys.tokenHash, f.clock, { identifier: 'ada@example.com', password, address: '198.51.100.7' });
    // Ten wrong passwords from one address, each after the wait the previous one imposed: the tenth locks.
    for (let i = 1; i <= 10; i++) {
      const r = await attempt('wrong password');
      if (i < 10 && r.outcome !== 'signed_in' && r.retryAt !== undefined) f.clock.set(r.retryAt);
    }
    assert.equal((await attempt('analytical-engine')).outcome, 'throttled', 'locked out');

    const res = await f.admin('POST', `/admin/v1/accounts/${f.sub}/unlock`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal((await attempt('analytical-engine')).outcome, 'signed_in');
    assert.equal((await f.admin('POST', '/admin/v1/accounts/no-such-sub/unlock')).statusCode, 404);
    assert.deepEqual(
      (await events(f, `?sub=${f.sub}`)).map((e) => [e.type, e.outcome]),
      [['account.unlocked', 'success']],
    );
    await done(f);
  });

  test('POST /admin/v1/accounts/:sub/unlock?address=IP also forgets the failures counted against that address (over every account), so a person who shares it with whoever was failing signs in; a value that is not an IP address is 400', async () => {
    const f = await adminFixture(await open());
    const { db, keys } = f.deps;
    const shared = '198.51.100.8';
    // Someone at the shared address fails against many accounts: the address itself is blocked.
    let blocked = false;
    for (let i = 0; i < 100 && !blocked; i++) {
      const r = await signIn(db, keys.tokenHash, f.clock, { identifier: `nobody-${i}@example.com`, password: 'guess', address: shared });
      // Each wait is waited out until one is a lock (15 minutes), which stays.
      if (r.outcome !== 'signed_in' && r.retryAt !== undefined) {
        if (r.retryAt - f.clock() > 60_000) blocked = true;
        else f.clock.set(r.retryAt);
      }
    }
    const attempt = () => signIn(db, keys.tokenHash, f.clock, { identifier: 'ada@example.com', password: 'analytical-engine', address: shared });
    assert.equal((await attempt()).outcome, 'throttled', 'the address is blocked for everyone behind it');
    assert.equal((await f.admin('POST', `/admin/v1/accounts/${f.sub}/unlock`)).statusCode, 204);
    assert.equal((await attempt()).outcome, 'throttled', 'unlocking the account alone leaves the address blocked');
    assert.equal((await f.admin('POST', `/admin/v1/accounts/${f.sub}/unlock?address=not-an-ip`)).statusCode, 400);
    const res = await f.admin('POST', `/admin/v1/accounts/${f.sub}/unlock?address=${shared}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(await attempt(), { outcome: 'signed_in', sub: f.sub });
    const unlocked = (await events(f, `?sub=${f.sub}`)).filter((e) => e.type === 'account.unlocked');
    assert.deepEqual(
      unlocked.map((e) => [e.outcome, e.detail]),
      [
        ['success', { unblocked_address: shared }],
        ['failure', { reason: 'invalid_address' }],
        ['success', null],
      ],
      'newest first',
    );
    await done(f);
  });

  test('PATCH takes the `user update` fields and `disabled`: one audit event per change naming the fields, never their values', async () => {
    const f = await adminFixture(await open());
    const res = await f.admin('PATCH', `/admin/v1/accounts/${f.sub}`, { body: { name: 'Ada King', phone_number: '+49 151 12345678', picture: 'https://img.example/ada.png' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      (({ name, phone_number, email }) => ({ name, phone_number, email }))(res.json<Account>()),
      { name: 'Ada King', phone_number: '+4915112345678', email: 'ada@example.com' },
    );

    const reverified = await f.admin('PATCH', `/admin/v1/accounts/${f.sub}`, { body: { email: 'ada.king@example.com', email_verified: true } });
    assert.deepEqual([reverified.json<Account>().email, reverified.json<{ email_verified: boolean }>().email_verified], ['ada.king@example.com', true], 'email_verified as `user update --email-verified`');

    const session = await startSession(f.deps.db, f.deps.keys.tokenHash, f.clock, { sub: f.sub, origin: 'http://signet.test' });
    const disabled = await f.admin('PATCH', `/admin/v1/accounts/${f.sub}`, { body: { disabled: true } });
    assert.equal(disabled.json<Account>().disabled, true);
    assert.equal(await findSession(f.deps.db, f.deps.keys.tokenHash, f.clock, session.id, 'http://signet.test'), undefined, 'disabling ends the sessions');
    assert.equal((await f.admin('PATCH', `/admin/v1/accounts/${f.sub}`, { body: { disabled: false } })).json<Account>().disabled, false);
    assert.equal((await f.admin('PATCH', `/admin/v1/accounts/${f.sub}`, { body: { disabled: false } })).statusCode, 200, 'enabling an enabled account changes nothing');

    const trail = await events(f, `?sub=${f.sub}`);
    assert.deepEqual(
      trail.map((e) => [e.type, e.outcome, e.detail]),
      [
        ['account.enabled', 'success', null],
        ['account.disabled', 'success', null],
        ['account.updated', 'success', { fields: ['email', 'email_verified'] }],
        ['account.updated', 'success', { fields: ['name', 'phone_number', 'picture'] }],
      ],
    );
    assert.ok(!JSON.stringify(trail).includes('Ada King') && !JSON.stringify(trail).includes('4915112345678'), 'values are not in the trail');
    await done(f);
  });

  test('PATCH refuses what `user update` refuses: 409 for an e-mail another account has, 400 for a bad value, an unknown field or nothing to change, 404 for no such account', async () => {
    const f = await adminFixture(await open());
    await createAccount(f.deps.db, f.clock, { email: 'grace@example.com', password: 'a long password' });
    const cases: Array<[string, unknown, number, RegExp]> = [
      [f.sub, { email: 'grace@example.com' }, 409, /exists already/],
      [f.sub, { email: 'not an address' }, 400, /not an e-mail address/],
      [f.sub, { picture: 'http://img.example/a.png' }, 400, /https URL/],
      [f.sub, { email: '' }, 400, /e-mail or a phone number/],
      [f.sub, { nmae: 'typo' }, 400, /field "nmae"/],
      [f.sub, {}, 400, /body/],
      [f.sub, { disabled: 'yes' }, 400, /disabled must be boolean/],
      ['no-such-sub', { name: 'x' }, 404, /no account/],
    ];
    for (const [sub, body, status, message] of cases) {
      const res = await f.admin('PATCH', `/admin/v1/accounts/${sub}`, { body });
      assert.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`);
      assert.match(res.json<{ message: string }>().message, message);
    }
    const refused = (await events(f, '?type=account.updated')).map((e) => e.detail?.reason);
    assert.deepEqual(refused, ['not_found', 'no_identifier', 'invalid_picture', 'invalid_email', 'email_taken'], 'changes the rules refused are recorded as failures, with the reason');
    await done(f);
  });

  test('GET /admin/v1/accounts: every account a page at a time (oldest first, next_cursor), or the one with an e-mail or phone number', async () => {
    const f = await adminFixture(await open());
    for (let i = 0; i < 4; i++) {
      f.clock.advance(1000);
      await createAccount(f.deps.db, f.clock, { email: `p${i}@example.com`, phone: `+4915112345${600 + i}`, password: 'a long password' });
    }
    const seen: string[] = [];
    let url = '/admin/v1/accounts?limit=2';
    for (;;) {
      const page = (await f.admin('GET', url)).json<{ accounts: Account[]; next_cursor: string | null }>();
      seen.push(...page.accounts.map((a) => a.email ?? ''));
      if (page.next_cursor === null) break;
      url = `/admin/v1/accounts?limit=2&cursor=${page.next_cursor}`;
    }
    assert.deepEqual(seen, ['ada@example.com', 'p0@example.com', 'p1@example.com', 'p2@example.com', 'p3@example.com']);

    const byEmail = (await f.admin('GET', '/admin/v1/accounts?email=P2@Example.com')).json<{ accounts: Account[]; next_cursor: null }>();
    assert.deepEqual([byEmail.accounts.map((a) => a.email), byEmail.next_cursor], [['p2@example.com'], null]);
    const byPhone = (await f.admin('GET', `/admin/v1/accounts?phone=${encodeURIComponent('+49 151 12345603')}`)).json<{ accounts: Account[] }>();
    assert.deepEqual(byPhone.accounts.map((a) => a.email), ['p3@example.com']);
    assert.deepEqual((await f.admin('GET', '/admin/v1/accounts?email=nobody@example.com')).json(), { accounts: [], next_cursor: null });
    assert.equal((await f.admin('GET', '/admin/v1/accounts?email=a@example.com&phone=%2B4915112345600')).statusCode, 400);
    assert.equal((await f.admin('GET', '/admin/v1/accounts?cursor=bm9wZQ')).statusCode, 400, 'a cursor this server did not hand out');
    assert.equal((await f.admin('GET', '/admin/v1/accounts?limit=0')).statusCode, 400);
    await done(f);
  });

  test('POST /admin/v1/accounts creates an account as `user create` does (the password never in the answer or the trail)', async () => {
    const f = await adminFixture(await open());
    const res = await f.admin('POST', '/admin/v1/accounts', { body: { email: 'new@example.com', name: 'New', email_verified: true, password: 'correct horse battery' } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<Account & { email_verified: boolean }>();
    assert.equal(created.email_verified, true);
    assert.ok(!res.body.includes('correct horse'));
    assert.equal((await signIn(f.deps.db, f.deps.keys.tokenHash, f.clock, { identifier: 'new@example.com', password: 'correct horse battery', address: '::1' })).outcome, 'signed_in');
    assert.equal((await f.admin('POST', '/admin/v1/accounts', { body: { email: 'new@example.com', password: 'another long one' } })).statusCode, 409);
    assert.equal((await f.admin('POST', '/admin/v1/accounts', { body: { email: 'x@example.com', password: 'short' } })).statusCode, 400);
    const trail = await events(f, '?type=account.created');
    assert.deepEqual(trail.map((e) => [e.outcome, e.sub]), [['failure', null], ['failure', null], ['success', created.sub]]);
    assert.deepEqual(trail.at(-1)!.detail, { fields: ['email', 'name', 'email_verified'] }, 'the fields given, a verified flag among them, never their values');
    assert.ok(!f.logs.join('').includes('correct horse'), 'the password is in no log line');
    await done(f);
  });

  test("GET /admin/v1/accounts/:sub/sessions lists the person's live sessions; DELETE ends every one of them", async () => {
    const f = await adminFixture(await open());
    const key = f.deps.keys.tokenHash;
    const first = await startSession(f.deps.db, key, f.clock, { sub: f.sub, origin: 'http://signet.test' });
    f.clock.advance(1000);
    await startSession(f.deps.db, key, f.clock, { sub: f.sub, origin: 'http://alt.signet.test' });
    const listed = (await f.admin('GET', `/admin/v1/accounts/${f.sub}/sessions`)).json<{ sessions: Array<{ created_at: string; expires_at: string }> }>();
    assert.equal(listed.sessions.length, 2);
    assert.ok(listed.sessions[0]!.created_at > listed.sessions[1]!.created_at, 'newest first');
    assert.ok(!JSON.stringify(listed).includes(first.id), 'no session id is shown');

    const ended = await f.admin('DELETE', `/admin/v1/accounts/${f.sub}/sessions`);
    assert.deepEqual(ended.json(), { ended: 2 });
    assert.equal(await findSession(f.deps.db, key, f.clock, first.id, 'http://signet.test'), undefined);
    assert.deepEqual((await f.admin('GET', `/admin/v1/accounts/${f.sub}/sessions`)).json(), { sessions: [] });
    assert.equal((await f.admin('GET', '/admin/v1/accounts/no-such-sub/sessions')).statusCode, 404);
    const [event] = await events(f, '?type=account.sessions_ended');
    assert.deepEqual([event?.sub, event?.detail], [f.sub, { sessions_ended: 2 }]);
    await done(f);
  });

  test('issue 36: DELETE /admin/v1/accounts/:sub/sessions/:id ends that one session (204); the others go on; audited as account.session_ended; an unknown id, or another person\'s, is 404', async () => {
    const f = await adminFixture(await open());
    const key = f.deps.keys.tokenHash;
    const kept = await startSession(f.deps.db, key, f.clock, { sub: f.sub, origin: 'http://signet.test' });
    f.clock.advance(1000);
    const ending = await startSession(f.deps.db, key, f.clock, { sub: f.sub, origin: 'http://signet.test' });
    const other = await createAccount(f.deps.db, f.clock, { email: 'other@example.com', password: 'a long password' });
    await startSession(f.deps.db, key, f.clock, { sub: other.sub, origin: 'http://signet.test' });
    const listed = (await f.admin('GET', `/admin/v1/accounts/${f.sub}/sessions`)).json<{ sessions: Array<{ id: string }> }>();
    assert.equal(listed.sessions.length, 2);
    const [newest, oldest] = listed.sessions.map((s) => s.id) as [string, string];
    for (const value of [kept.id, ending.id]) assert.ok(!JSON.stringify(listed).includes(value), 'the cookie value is never shown');
    const stored = (await f.deps.db.selectFrom('sessions').select('id_hash').execute()).map((r) => r.id_hash);
    assert.ok(stored.every((hash) => !JSON.stringify(listed).includes(hash)), 'nor the stored hash');

    const res = await f.admin('DELETE', `/admin/v1/accounts/${f.sub}/sessions/${newest}`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(await findSession(f.deps.db, key, f.clock, ending.id, 'http://signet.test'), undefined, 'that session ended');
    assert.ok(await findSession(f.deps.db, key, f.clock, kept.id, 'http://signet.test'), 'the other one goes on');
    assert.deepEqual((await f.admin('GET', `/admin/v1/accounts/${f.sub}/sessions`)).json<{ sessions: Array<{ id: string }> }>().sessions.map((s) => s.id), [oldest]);

    const again = await f.admin('DELETE', `/admin/v1/accounts/${f.sub}/sessions/${newest}`);
    assert.equal(again.statusCode, 404, 'already ended');
    assert.equal(again.json<{ error: string }>().error, 'not_found');
    const othersId = (await f.admin('GET', `/admin/v1/accounts/${other.sub}/sessions`)).json<{ sessions: Array<{ id: string }> }>().sessions[0]!.id;
    assert.equal((await f.admin('DELETE', `/admin/v1/accounts/${f.sub}/sessions/${othersId}`)).statusCode, 404, "another person's session is not this person's");
    assert.equal((await f.admin('GET', `/admin/v1/accounts/${other.sub}/sessions`)).json<{ sessions: unknown[] }>().sessions.length, 1);

    const trail = await events(f, '?type=account.session_ended');
    assert.deepEqual(trail.map((e) => [e.outcome, e.sub]), [['failure', f.sub], ['failure', f.sub], ['success', f.sub]]);
    assert.deepEqual(trail.at(-1)!.detail, { session_id: newest });
    await done(f);
  });
});
