// The admin API's door: "Missing or wrong key → 401 on every route except openapi.json", a right key
// works on every route, a revoked key stops working, and the answers match the OpenAPI document.
import { createApiKey } from '../../src/accounts/api-keys/api-keys.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { sessionPublicId } from '../../src/accounts/account-admin.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import { addProvider } from '../../src/accounts/upstream/providers.ts';
import { linkIdentity } from '../../src/accounts/upstream/links.ts';
import { createAdminKey, revokeAdminKey } from '../../src/admin/admin-keys.ts';
import { registerClient } from '../../src/clients/clients.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { adminFixture, type AdminFixture, type OpenApiDocument } from './admin-fixture.ts';

type Call = { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; path: string; url: string; body?: unknown; headers?: Record<string, string>; status: number };

/** One call per operation of the contract, each with inputs that work. Destructive calls go last. */
async function everyRoute(f: AdminFixture): Promise<Call[]> {
  const { db, clock, keys } = f.deps;
  const victim = await createAccount(db, clock, { email: 'victim@example.com', password: 'a long password' });
  const victimClient = await registerClient(db, clock, keys.tokenHash, { name: 'Doomed', redirectUris: ['https://doomed.example/cb'] });
  const sub = f.sub;
  const id = f.confidential.client.clientId;
  // a session of the person, ended by its public id (issue 36)
  await startSession(db, keys.tokenHash, clock, { sub, origin: 'http://localhost' });
  const sessionId = sessionPublicId((await db.selectFrom('sessions').select('id_hash').where('sub', '=', sub).executeTakeFirstOrThrow()).id_hash);
  // issue 33: an upstream provider with an identity linked to the person (a password keeps another way in)
  const provider = await addProvider(db, clock, keys.upstreamSecret, { slug: 'corp', preset: 'github', clientId: 'gh-client', clientSecret: 'gh-secret' });
  await linkIdentity(db, clock, provider, { sub: '4242', email: 'ada@example.com' }, sub);
  // issue 40: a person's API key, revoked by an operator
  const apiKey = await createApiKey(db, clock, keys.tokenHash, { sub, name: 'Open WebUI' });
  return [
    { method: 'GET', path: '/admin/v1/accounts', url: '/admin/v1/accounts', status: 200 },
    { method: 'GET', path: '/admin/v1/accounts', url: '/admin/v1/accounts?email=ada@example.com', status: 200 },
    { method: 'POST', path: '/admin/v1/accounts', url: '/admin/v1/accounts', body: { email: 'new@example.com', password: 'a long password' }, status: 201 },
    { method: 'GET', path: '/admin/v1/accounts/{sub}', url: `/admin/v1/accounts/${sub}`, status: 200 },
    { method: 'PATCH', path: '/admin/v1/accounts/{sub}', url: `/admin/v1/accounts/${sub}`, body: { name: 'Ada King' }, status: 200 },
    { method: 'POST', path: '/admin/v1/accounts/{sub}/unlock', url: `/admin/v1/accounts/${sub}/unlock`, status: 204 },
    { method: 'GET', path: '/admin/v1/accounts/{sub}/sessions', url: `/admin/v1/accounts/${sub}/sessions`, status: 200 },
    { method: 'DELETE', path: '/admin/v1/accounts/{sub}/sessions/{id}', url: `/admin/v1/accounts/${sub}/sessions/${sessionId}`, status: 204 },
    { method: 'DELETE', path: '/admin/v1/accounts/{sub}/sessions', url: `/admin/v1/accounts/${sub}/sessions`, status: 200 },
    { method: 'GET', path: '/admin/v1/accounts/{sub}/factors', url: `/admin/v1/accounts/${sub}/factors`, status: 200 },
    { method: 'DELETE', path: '/admin/v1/accounts/{sub}/factors', url: `/admin/v1/accounts/${sub}/factors`, status: 204 },
    { method: 'PUT', path: '/admin/v1/accounts/{sub}/roles/{role}', url: `/admin/v1/accounts/${sub}/roles/operator`, status: 200 },
    { method: 'GET', path: '/admin/v1/accounts/{sub}/roles', url: `/admin/v1/accounts/${sub}/roles`, status: 200 },
    { method: 'DELETE', path: '/admin/v1/accounts/{sub}/roles/{role}', url: `/admin/v1/accounts/${sub}/roles/operator`, status: 200 },
    { method: 'GET', path: '/admin/v1/accounts/{sub}/api-keys', url: `/admin/v1/accounts/${sub}/api-keys`, status: 200 },
    { method: 'POST', path: '/admin/v1/accounts/{sub}/api-keys', url: `/admin/v1/accounts/${sub}/api-keys`, body: { name: 'scripts', expires_in_days: 30 }, status: 201 },
    { method: 'DELETE', path: '/admin/v1/accounts/{sub}/api-keys/{id}', url: `/admin/v1/accounts/${sub}/api-keys/${apiKey.id}`, status: 200 },
    { method: 'GET', path: '/admin/v1/clients', url: '/admin/v1/clients', status: 200 },
    { method: 'POST', path: '/admin/v1/clients', url: '/admin/v1/clients', body: { name: 'New App', redirect_uris: ['https://new.example/cb'] }, status: 201 },
    { method: 'GET', path: '/admin/v1/clients/{client_id}', url: `/admin/v1/clients/${id}`, status: 200 },
    { method: 'PATCH', path: '/admin/v1/clients/{client_id}', url: `/admin/v1/clients/${id}`, body: { name: 'Renamed' }, status: 200 },
    { method: 'GET', path: '/admin/v1/audit-events', url: '/admin/v1/audit-events', status: 200 },
    { method: 'GET', path: '/admin/v1/audit-events', url: `/admin/v1/audit-events?sub=${sub}&type=account.*`, status: 200 },
    // issue 35: the file is the body (a dry run writes nothing); the export is JSON Lines
    { method: 'POST', path: '/admin/v1/import', url: '/admin/v1/import?dry_run=true', body: 'email,name\nprobe@example.com,Probe\n', headers: { 'content-type': 'text/csv' }, status: 200 },
    { method: 'GET', path: '/admin/v1/export', url: '/admin/v1/export', status: 200 },
    // issue 33: upstream identity providers and linked identities (a preset: nothing is fetched from the upstream)
    { method: 'GET', path: '/admin/v1/identity-providers', url: '/admin/v1/identity-providers', status: 200 },
    { method: 'POST', path: '/admin/v1/identity-providers', url: '/admin/v1/identity-providers', body: { slug: 'github', preset: 'github', client_id: 'Iv1.abc', client_secret: 'a client secret' }, status: 201 },
    { method: 'GET', path: '/admin/v1/identity-providers/{slug}', url: '/admin/v1/identity-providers/corp', status: 200 },
    { method: 'PATCH', path: '/admin/v1/identity-providers/{slug}', url: '/admin/v1/identity-providers/corp', body: { name: 'Corp GitHub' }, status: 200 },
    { method: 'GET', path: '/admin/v1/accounts/{sub}/links', url: `/admin/v1/accounts/${sub}/links`, status: 200 },
    { method: 'DELETE', path: '/admin/v1/accounts/{sub}/links/{slug}', url: `/admin/v1/accounts/${sub}/links/corp`, status: 204 },
    { method: 'DELETE', path: '/admin/v1/identity-providers/{slug}', url: '/admin/v1/identity-providers/corp', status: 204 },
    { method: 'DELETE', path: '/admin/v1/clients/{client_id}', url: `/admin/v1/clients/${victimClient.client.clientId}`, status: 204 },
    { method: 'DELETE', path: '/admin/v1/accounts/{sub}', url: `/admin/v1/accounts/${victim.sub}`, status: 204 },
  ];
}

/** Validates answers against the document's own response schemas. */
function responseValidator(doc: OpenApiDocument) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(doc as object, 'openapi');
  return (call: Call, res: LightMyRequestResponse) => {
    const response = doc.paths[call.path]?.[call.method.toLowerCase()]?.responses[String(res.statusCode)];
    assert.ok(response, `${call.method} ${call.path} documents a ${res.statusCode} answer`);
    if (res.statusCode === 204) return;
    // an answer that is not JSON (the export's JSON Lines): its content type is the documented one
    const types = Object.keys((response as { content?: Record<string, unknown> }).content ?? {});
    if (types.length > 0 && !types.includes('application/json')) {
      assert.ok(types.some((t) => String(res.headers['content-type']).startsWith(t)), `${call.method} ${call.path} answers ${String(res.headers['content-type'])}, documented as ${types.join(', ')}`);
      return;
    }
    const pointer = ['paths', call.path, call.method.toLowerCase(), 'responses', String(res.statusCode), 'content', 'application/json', 'schema']
      .map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1'))
      .join('/');
    const validate = ajv.compile({ $ref: `openapi#/${pointer}` });
    assert.ok(validate(res.json()), `${call.method} ${call.url} answers as documented: ${ajv.errorsText(validate.errors)}`);
  };
}

forEachDatabase('admin API keys', (open) => {
  test('"Missing or wrong key → 401 on every route except openapi.json": no key, a wrong key, a right id with a wrong secret, another scheme — and nothing changes', async () => {
    const f = await adminFixture(await open());
    const calls = await everyRoute(f);
    const wrongSecret = `${f.keyId}.${'A'.repeat(43)}`;
    const presented: Array<[string, Record<string, string> | null]> = [
      ['no Authorization header', null],
      ['a key that was never issued', { authorization: `Bearer ak_0123456789abcdef.${'B'.repeat(43)}` }],
      ['the right id with a wrong secret', { authorization: `Bearer ${wrongSecret}` }],
      ['only the id', { authorization: `Bearer ${f.keyId}` }],
      ['garbage', { authorization: 'Bearer not-a-key' }],
      ['the right key under another scheme', { authorization: `Basic ${f.key}` }],
      ['the right key without a scheme', { authorization: f.key }],
    ];
    const eventsBefore = await f.deps.db.selectFrom('audit_events').selectAll().execute();
    for (const call of calls) {
      for (const [what, headers] of presented) {
        const res = await f.adminApp.inject({ method: call.method, url: call.url, headers: headers ?? {}, ...(call.body === undefined ? {} : { payload: call.body as object }) });
        assert.equal(res.statusCode, 401, `${call.method} ${call.url} with ${what}: ${res.body}`);
        assert.equal(res.headers['www-authenticate'], 'Bearer realm="signet-admin"');
        assert.equal(res.json<{ error: string }>().error, 'unauthenticated');
      }
    }
    // A malformed body is 401 as well: the key is checked before the body is looked at.
    const badBody = await f.admin('PATCH', `/admin/v1/accounts/${f.sub}`, { key: null, body: { nonsense: true } });
    assert.equal(badBody.statusCode, 401);
    assert.equal((await f.admin('GET', '/admin/v1/openapi.json', { key: null })).statusCode, 200, 'the document needs no key');

    assert.deepEqual(await f.deps.db.selectFrom('audit_events').selectAll().execute(), eventsBefore, 'refused calls change nothing and record nothing');
    for (const call of calls.filter((c) => c.method === 'DELETE')) {
      if (call.path.endsWith('/sessions') || call.path.endsWith('/sessions/{id}') || call.path.endsWith('/{role}')) continue;
      // a linked identity has no address of its own: it is still in the person's list of links
      if (call.path.endsWith('/links/{slug}')) {
        const links = (await f.admin('GET', call.url.replace(/\/corp$/, ''))).json<{ links: Array<{ provider: string }> }>().links;
        assert.equal(links.length, 1, `${call.url} is still there`);
        continue;
      }
      // an API key has no address of its own either: it is in the person's list, not revoked
      if (call.path.endsWith('/api-keys/{id}')) {
        const listed = (await f.admin('GET', call.url.replace(/\/sgk_[0-9a-f]+$/, ''))).json<{ api_keys: Array<{ revoked_at: string | null }> }>().api_keys;
        assert.deepEqual(listed.map((k) => k.revoked_at), [null], `${call.url} is still live`);
        continue;
      }
      assert.equal((await f.admin('GET', call.url)).statusCode, 200, `${call.url} is still there`);
    }
    await f.app.close();
    await f.adminApp.close();
  });

  test('a right key works on every route, and each answer matches the OpenAPI document; every documented operation is in the table', async () => {
    const f = await adminFixture(await open());
    const calls = await everyRoute(f);
    const doc = (await f.admin('GET', '/admin/v1/openapi.json', { key: null })).json<OpenApiDocument>();
    const check = responseValidator(doc);
    for (const call of calls) {
      const res = await f.admin(call.method, call.url, { ...(call.body === undefined ? {} : { body: call.body }), ...(call.headers === undefined ? {} : { headers: call.headers }) });
      assert.equal(res.statusCode, call.status, `${call.method} ${call.url}: ${res.body}`);
      check(call, res);
    }
    const documented = Object.entries(doc.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
    const tried = new Set(calls.map((c) => `${c.method} ${c.path}`));
    assert.deepEqual(documented.filter((op) => !tried.has(op)), [], 'every documented operation is tried with and without a key');
    await f.app.close();
    await f.adminApp.close();
  });

  test('an operator key revoked stops working at once; the other keys go on working', async () => {
    const f = await adminFixture(await open());
    const other = await createAdminKey(f.deps.db, f.clock, f.deps.keys.tokenHash, 'another operator');
    assert.equal((await f.admin('GET', '/admin/v1/accounts')).statusCode, 200);
    await revokeAdminKey(f.deps.db, f.clock, f.keyId);
    const res = await f.admin('GET', '/admin/v1/accounts');
    assert.equal(res.statusCode, 401);
    assert.match(res.json<{ message: string }>().message, /unknown or revoked/);
    assert.equal((await f.admin('GET', `/admin/v1/accounts/${f.sub}`)).statusCode, 401);
    assert.equal((await f.admin('GET', '/admin/v1/accounts', { key: other.key })).statusCode, 200, 'another key is not affected');
    await f.app.close();
    await f.adminApp.close();
  });

  test('the admin API is not served on the public port: /admin/v1/accounts and /admin/v1/openapi.json on the main app are 404, even with a right key', async () => {
    const f = await adminFixture(await open());
    for (const url of ['/admin/v1/accounts', '/admin/v1/openapi.json', `/admin/v1/accounts/${f.sub}`]) {
      const res = await f.app.inject({ method: 'GET', url, headers: { host: 'signet.test', authorization: `Bearer ${f.key}` } });
      assert.equal(res.statusCode, 404, url);
    }
    await f.app.close();
    await f.adminApp.close();
  });
});
