// /admin/v1/accounts/:sub/factors (issue 19 item 6): GET lists "kinds, names, created and last used,
// never secrets"; DELETE answers 204 with "every factor and recovery code removed, sessions ended",
// recorded as account.factors_reset with the operator, and the person gets a security notification.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newRecoveryCodes } from '../../src/accounts/factors/recovery-codes.ts';
import { beginTotpSetup, confirmTotpSetup, totpCode } from '../../src/accounts/factors/totp.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { adminFixture } from './admin-fixture.ts';

forEachDatabase('admin API: second factors', (open) => {
  test('GET /admin/v1/accounts/:sub/factors: kinds, names, dates and the recovery codes left — "never secrets"; 404 for an unknown sub', async () => {
    const f = await adminFixture(await open());
    const { db, keys } = f.deps;
    const empty = await f.admin('GET', `/admin/v1/accounts/${f.sub}/factors`);
    assert.equal(empty.statusCode, 200, empty.body);
    assert.deepEqual(empty.json(), { factors: [], recovery_codes_left: 0 });

    const setup = await beginTotpSetup(db, keys.factorSecret, f.clock, { sub: f.sub, issuer: 'Signet', label: 'ada@example.com' });
    assert.equal(await confirmTotpSetup(db, keys.factorSecret, f.clock, f.sub, totpCode(setup.secretBase32, f.clock())), 'enabled');
    await newRecoveryCodes(db, keys.tokenHash, f.clock, f.sub);
    const res = await f.admin('GET', `/admin/v1/accounts/${f.sub}/factors`);
    assert.equal(res.statusCode, 200);
    const body = res.json<{ factors: Array<Record<string, unknown>>; recovery_codes_left: number }>();
    assert.equal(body.recovery_codes_left, 10);
    assert.equal(body.factors.length, 1);
    assert.deepEqual(Object.keys(body.factors[0]!).sort(), ['created_at', 'id', 'kind', 'last_used_at', 'name']);
    assert.equal(body.factors[0]!.kind, 'totp');
    assert.equal(body.factors[0]!.created_at, new Date(f.clock()).toISOString());
    assert.ok(!res.body.includes(setup.secretBase32) && !res.body.includes('v1.'), 'no secret, sealed or not');
    assert.equal((await f.admin('GET', '/admin/v1/accounts/no-such-sub/factors')).statusCode, 404);
    assert.equal((await f.admin('GET', `/admin/v1/accounts/${f.sub}/factors`, { key: null })).statusCode, 401);
    await f.app.close();
    await f.adminApp.close();
  });

  test('DELETE /admin/v1/accounts/:sub/factors → 204: every factor and recovery code removed, sessions ended; account.factors_reset by the operator; a security notification', async () => {
    const f = await adminFixture(await open());
    const { db, keys } = f.deps;
    const setup = await beginTotpSetup(db, keys.factorSecret, f.clock, { sub: f.sub, issuer: 'Signet', label: 'ada@example.com' });
    await confirmTotpSetup(db, keys.factorSecret, f.clock, f.sub, totpCode(setup.secretBase32, f.clock()));
    await newRecoveryCodes(db, keys.tokenHash, f.clock, f.sub);
    await startSession(db, keys.tokenHash, f.clock, { sub: f.sub, origin: 'http://signet.test' });

    const res = await f.admin('DELETE', `/admin/v1/accounts/${f.sub}/factors`);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assert.deepEqual(await db.selectFrom('second_factors').selectAll().where('sub', '=', f.sub).execute(), []);
    assert.deepEqual(await db.selectFrom('recovery_codes').selectAll().where('sub', '=', f.sub).execute(), []);
    assert.deepEqual(await db.selectFrom('sessions').selectAll().where('sub', '=', f.sub).execute(), []);

    const events = (await f.admin('GET', `/admin/v1/audit-events?type=account.factors_reset`)).json<{ events: Array<{ sub: string; actor: string; outcome: string; detail: unknown }> }>().events;
    assert.equal(events.length, 1);
    assert.equal(events[0]!.actor, `admin_key:${f.keyId}`);
    assert.equal(events[0]!.outcome, 'success');
    assert.deepEqual(events[0]!.detail, { factors_removed: 1, recovery_codes_removed: 10, sessions_ended: 1 });
    const notes = await db.selectFrom('notifications').selectAll().where('sub', '=', f.sub).execute();
    assert.ok(notes.some((n) => n.category === 'security' && n.title === 'Two-step verification was reset'));
    assert.equal((await f.admin('DELETE', '/admin/v1/accounts/no-such-sub/factors')).statusCode, 404);
    await f.app.close();
    await f.adminApp.close();
  });

  test('the OpenAPI document describes the factors routes', async () => {
    const f = await adminFixture(await open());
    const doc = (await f.admin('GET', '/admin/v1/openapi.json', { key: null })).json<{ paths: Record<string, Record<string, unknown>> }>();
    const path = doc.paths['/admin/v1/accounts/{sub}/factors'];
    assert.ok(path?.get && path.delete);
    await f.app.close();
    await f.adminApp.close();
  });
});
