// GET /admin/v1/audit-events[?sub=&client_id=&type=&cursor=] → {"events":[{"id","type","at","sub",
// "client_id","ip","outcome"}…],"next_cursor"}, newest first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordAudit } from '../../src/audit/audit.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { adminFixture } from './admin-fixture.ts';

type Page = { events: Array<{ id: string; type: string; at: string; sub: string | null; client_id: string | null; ip: string | null; outcome: string }>; next_cursor: string | null };

forEachDatabase('admin API: audit events', (open) => {
  test('audit events through the API: the contract fields, newest first, filtered by sub, client_id and type (or family), paged by next_cursor', async () => {
    const f = await adminFixture(await open());
    const { db } = f.deps;
    const client = f.confidential.client.clientId;
    await recordAudit(db, f.clock, { type: 'signin.failed', sub: f.sub, ip: '198.51.100.1', outcome: 'failure' });
    f.clock.advance(1000);
    await recordAudit(db, f.clock, { type: 'signin.succeeded', sub: f.sub, ip: '198.51.100.1', outcome: 'success' });
    await recordAudit(db, f.clock, { type: 'consent.granted', sub: f.sub, clientId: client, ip: '198.51.100.1', outcome: 'success', detail: { scope: 'openid profile' } });
    assert.equal((await f.admin('PATCH', `/admin/v1/clients/${client}`, { body: { enabled: false } })).statusCode, 200);

    const all = (await f.admin('GET', '/admin/v1/audit-events')).json<Page>();
    assert.deepEqual(all.events.map((e) => e.type), ['client.disabled', 'consent.granted', 'signin.succeeded', 'signin.failed']);
    assert.equal(all.next_cursor, null);
    for (const e of all.events) for (const key of ['id', 'type', 'at', 'sub', 'client_id', 'ip', 'outcome']) assert.ok(key in e, `${e.type} has ${key}`);
    assert.deepEqual(
      (({ sub, client_id, ip, outcome }) => ({ sub, client_id, ip, outcome }))(all.events[1]!),
      { sub: f.sub, client_id: client, ip: '198.51.100.1', outcome: 'success' },
    );

    const types = async (query: string) => (await f.admin('GET', `/admin/v1/audit-events?${query}`)).json<Page>().events.map((e) => e.type);
    assert.deepEqual(await types(`sub=${f.sub}`), ['consent.granted', 'signin.succeeded', 'signin.failed']);
    assert.deepEqual(await types(`client_id=${client}`), ['client.disabled', 'consent.granted']);
    assert.deepEqual(await types('type=signin.failed'), ['signin.failed']);
    assert.deepEqual(await types('type=signin.*'), ['signin.succeeded', 'signin.failed']);
    assert.deepEqual(await types(`type=signin.*&sub=${f.sub}&client_id=${client}`), []);

    const first = (await f.admin('GET', '/admin/v1/audit-events?limit=3')).json<Page>();
    assert.equal(first.events.length, 3);
    const second = (await f.admin('GET', `/admin/v1/audit-events?limit=3&cursor=${first.next_cursor}`)).json<Page>();
    assert.deepEqual([second.events.map((e) => e.type), second.next_cursor], [['signin.failed'], null]);

    assert.equal((await f.admin('GET', '/admin/v1/audit-events?type=DROP TABLE')).statusCode, 400);
    assert.equal((await f.admin('GET', '/admin/v1/audit-events?cursor=nope')).statusCode, 400);
    assert.equal((await f.admin('GET', '/admin/v1/audit-events?since=yesterday')).statusCode, 400, 'an unknown filter is refused, not ignored');
    await f.app.close();
    await f.adminApp.close();
  });
});
