// /admin/v1/clients…: applications "shaped as `client create` prints them (no secret after creation)",
// disable / enable through PATCH, delete with grants and tokens; each change an audit event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertOAuthError, REDIRECT_URI } from '../oauth/token-fixtures.ts';
import { adminFixture } from './admin-fixture.ts';

type ClientView = { client_id: string; client_secret?: string; name: string; redirect_uris: string[]; scopes: string[]; public: boolean; enabled: boolean; allowed_origins: string[] };
type AuditEvent = { type: string; client_id: string | null; outcome: string; detail: Record<string, unknown> | null };

const CLIENT_CREATE_KEYS = ['client_id', 'client_secret', 'name', 'redirect_uris', 'scopes', 'public', 'enabled', 'allowed_origins'];

forEachDatabase('admin API: clients', (open) => {
  test('issue 43: POST /admin/v1/clients with grants (no redirect URI needed), shown as `grants`; PATCH replaces them; a public client_credentials application is 400', async () => {
    const f = await adminFixture(await open());
    const res = await f.admin('POST', '/admin/v1/clients', { body: { name: 'Converter', redirect_uris: [], grants: ['client_credentials', 'device_code'] } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<ClientView & { grants: string[] }>();
    assert.deepEqual(created.grants, ['client_credentials', 'device_code']);
    const patched = await f.admin('PATCH', `/admin/v1/clients/${created.client_id}`, { body: { grants: ['device_code'] } });
    assert.deepEqual(patched.json<{ grants: string[] }>().grants, ['device_code']);
    const plain = (await f.admin('POST', '/admin/v1/clients', { body: { name: 'Plain', redirect_uris: ['https://app.example/cb'] } })).json<{ grants: string[] }>();
    assert.deepEqual(plain.grants, []);
    const refused = await f.admin('POST', '/admin/v1/clients', { body: { name: 'Public service', redirect_uris: [], public: true, grants: ['client_credentials'] } });
    assert.equal(refused.statusCode, 400);
    assert.equal(refused.json<{ error: string }>().error, 'invalid_grant');
    await f.app.close();
    await f.adminApp.close();
  });


  test('POST /admin/v1/clients answers as `client create` prints (client_secret once, for a confidential client); GET and the list never show it', async () => {
    const f = await adminFixture(await open());
    const res = await f.admin('POST', '/admin/v1/clients', { body: { name: 'Example App', redirect_uris: ['https://app.example/cb'], scopes: ['openid', 'email'] } });
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json<ClientView>();
    assert.deepEqual(Object.keys(created).slice(0, 8), CLIENT_CREATE_KEYS);
    assert.equal(created.client_secret?.length, 44);
    assert.deepEqual([created.scopes, created.public, created.enabled], [['openid', 'email'], false, true]);

    const shown = (await f.admin('GET', `/admin/v1/clients/${created.client_id}`)).json<ClientView>();
    assert.equal(shown.client_secret, undefined);
    assert.deepEqual({ ...shown }, (({ client_secret: _s, ...rest }) => rest)(created));
    const listed = (await f.admin('GET', '/admin/v1/clients')).json<{ clients: ClientView[] }>().clients;
    assert.ok(listed.some((c) => c.client_id === created.client_id));
    assert.ok(listed.every((c) => c.client_secret === undefined));

    const pub = (await f.admin('POST', '/admin/v1/clients', { body: { name: 'SPA', redirect_uris: ['https://spa.example/cb'], public: true, allowed_origins: ['https://spa.example'] } })).json<ClientView>();
    assert.equal(pub.client_secret, undefined, 'a public client has no secret');
    assert.deepEqual(pub.allowed_origins, ['https://spa.example']);

    const [event] = (await f.admin('GET', `/admin/v1/audit-events?client_id=${created.client_id}`)).json<{ events: AuditEvent[] }>().events;
    assert.deepEqual([event?.type, event?.outcome, event?.detail], ['client.created', 'success', { fields: ['name', 'redirect_uris', 'scopes'] }]);
    assert.ok(!JSON.stringify(event).includes(created.client_secret!), 'the secret is not in the trail');
    await f.app.close();
    await f.adminApp.close();
  });

  test('PATCH {"enabled": false} disables the application (its tokens stop working, no new ones), {"enabled": true} enables it; other fields as `client update`', async () => {
    const f = await adminFixture(await open());
    const id = f.confidential.client.clientId;
    const tokens = await f.exchange();
    const off = await f.admin('PATCH', `/admin/v1/clients/${id}`, { body: { enabled: false } });
    assert.equal(off.json<ClientView>().enabled, false);
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401);
    assertOAuthError(await f.refresh(tokens.refresh_token), 400, 'unauthorized_client');
    assert.equal((await f.admin('PATCH', `/admin/v1/clients/${id}`, { body: { enabled: true } })).json<ClientView>().enabled, true);
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200);

    const renamed = await f.admin('PATCH', `/admin/v1/clients/${id}`, { body: { name: 'Renamed', redirect_uris: [REDIRECT_URI, 'https://app.example/second'] } });
    assert.deepEqual([renamed.json<ClientView>().name, renamed.json<ClientView>().redirect_uris], ['Renamed', [REDIRECT_URI, 'https://app.example/second']]);
    const bad = await f.admin('PATCH', `/admin/v1/clients/${id}`, { body: { redirect_uris: ['https://app.example/cb#fragment'] } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json<{ message: string }>().message, /fragment/);
    assert.equal((await f.admin('PATCH', `/admin/v1/clients/${id}`, { body: { scopes: ['admin'] } })).statusCode, 400);
    assert.equal((await f.admin('PATCH', '/admin/v1/clients/no-such-client', { body: { name: 'x' } })).statusCode, 404);

    const trail = (await f.admin('GET', `/admin/v1/audit-events?client_id=${id}`)).json<{ events: AuditEvent[] }>().events;
    assert.deepEqual(
      trail.map((e) => [e.type, e.outcome, e.detail]),
      [
        ['client.updated', 'failure', { fields: ['redirect_uris'], reason: 'invalid_redirect_uri' }],
        ['client.updated', 'success', { fields: ['name', 'redirect_uris'] }],
        ['client.enabled', 'success', null],
        ['client.disabled', 'success', null],
      ],
    );
    await f.app.close();
    await f.adminApp.close();
  });

  test('DELETE /admin/v1/clients/:client_id removes the application with its tokens: 204, then 404', async () => {
    const f = await adminFixture(await open());
    const id = f.confidential.client.clientId;
    const tokens = await f.exchange();
    assert.equal((await f.admin('DELETE', `/admin/v1/clients/${id}`)).statusCode, 204);
    assert.equal((await f.admin('GET', `/admin/v1/clients/${id}`)).statusCode, 404);
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401);
    assert.equal((await f.admin('DELETE', `/admin/v1/clients/${id}`)).statusCode, 404);
    await f.app.close();
    await f.adminApp.close();
  });
});
