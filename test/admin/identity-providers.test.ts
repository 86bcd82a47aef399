// Issue 33: upstream identity providers in the admin API (in its OpenAPI document) and on the command
// line — "the secret is never printed again"; "`idp add` prints the redirect URI to register at the upstream".
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { listAuditEvents } from '../../src/audit/audit.ts';
import * as accounts from '../../src/accounts/accounts.ts';
import { linkIdentity } from '../../src/accounts/upstream/links.ts';
import { findProvider } from '../../src/accounts/upstream/providers.ts';
import { forEachDatabase, sqliteDatabase } from '../helpers/databases.ts';
import { runSignet } from '../helpers/cli.ts';
import { adminFixture, type OpenApiDocument } from './admin-fixture.ts';

forEachDatabase('admin API: identity providers', (open) => {
  test('add, read, change, disable and remove a provider; the client secret is never answered', async () => {
    const f = await adminFixture(await open());
    const secret = 'upstream-client-secret-value-123';
    const created = await f.admin('POST', '/admin/v1/identity-providers', { body: { slug: 'google', preset: 'google', client_id: 'abc.apps.googleusercontent.com', client_secret: secret } });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.body.includes(secret), false);
    const view = created.json();
    assert.deepEqual(Object.keys(view).slice(0, 4), ['slug', 'name', 'issuer', 'redirect_uri']);
    assert.equal(view.issuer, 'https://accounts.google.com');
    assert.equal(view.redirect_uri, 'http://localhost:8080/signin/idp/google/callback');
    assert.equal((await f.admin('POST', '/admin/v1/identity-providers', { body: { slug: 'google', preset: 'google', client_id: 'x', client_secret: 'y' } })).statusCode, 409);
    assert.equal((await f.admin('POST', '/admin/v1/identity-providers', { body: { slug: 'bad', issuer: 'http://op.example', client_id: 'x', client_secret: 'y' } })).statusCode, 400, 'plain http only on loopback');
    const patched = await f.admin('PATCH', '/admin/v1/identity-providers/google', { body: { enabled: false, name: 'Google Workspace' } });
    assert.equal(patched.statusCode, 200);
    assert.equal(patched.json().enabled, false);
    assert.equal(patched.json().name, 'Google Workspace');
    const list = await f.admin('GET', '/admin/v1/identity-providers');
    assert.deepEqual(list.json().providers.map((p: { slug: string }) => p.slug), ['google']);
    assert.equal(list.body.includes('sealed'), false);
    const events = (await listAuditEvents(f.deps.db, { type: 'idp.*' })).events.map((e) => `${e.type} ${e.outcome} ${String(e.detail?.['reason'] ?? '')}`.trim()).sort();
    // The refused additions are in the trail too, with their reason.
    assert.deepEqual(events, ['idp.provider_added failure invalid_issuer', 'idp.provider_added failure slug_taken', 'idp.provider_added success', 'idp.provider_disabled success', 'idp.provider_updated success']);
    assert.equal((await f.admin('DELETE', '/admin/v1/identity-providers/google')).statusCode, 204);
    assert.equal((await f.admin('GET', '/admin/v1/identity-providers/google')).statusCode, 404);
  });

  test('a person\'s links: listed and removed by an operator', async () => {
    const f = await adminFixture(await open());
    await f.admin('POST', '/admin/v1/identity-providers', { body: { slug: 'corp', issuer: 'https://idp.corp.example/realms/staff', preset: 'keycloak', client_id: 'signet', client_secret: 'kc-secret' } });
    const person = await accounts.createAccount(f.deps.db, f.deps.clock, { email: 'links@example.org', password: 'a-password-1' });
    await linkIdentity(f.deps.db, f.deps.clock, (await findProvider(f.deps.db, 'corp'))!, { sub: 'kc-123', email: 'links@example.org' }, person.sub);
    const links = await f.admin('GET', `/admin/v1/accounts/${person.sub}/links`);
    assert.deepEqual(links.json().links.map((l: { provider: string; upstream_sub: string }) => [l.provider, l.upstream_sub]), [['corp', 'kc-123']]);
    assert.equal((await f.admin('DELETE', `/admin/v1/accounts/${person.sub}/links/corp`)).statusCode, 204);
    assert.deepEqual((await f.admin('GET', `/admin/v1/accounts/${person.sub}/links`)).json().links, []);
    assert.equal((await f.admin('DELETE', `/admin/v1/accounts/${person.sub}/links/corp`)).statusCode, 404);
  });
});

describe('the OpenAPI document names the identity-provider calls', () => {
  const opened: Array<{ dispose(): Promise<void> }> = [];
  after(() => Promise.all(opened.map((d) => d.dispose())));
  test('paths and schemas', async () => {
    const database = await sqliteDatabase();
    opened.push(database);
    const f = await adminFixture(database);
    const doc = (await f.admin('GET', '/admin/v1/openapi.json', { key: null })).json() as OpenApiDocument;
    for (const p of ['/admin/v1/identity-providers', '/admin/v1/identity-providers/{slug}', '/admin/v1/accounts/{sub}/links', '/admin/v1/accounts/{sub}/links/{slug}']) assert.ok(doc.paths[p], `${p} in the document`);
    assert.ok(doc.components.schemas['IdentityProvider'] && doc.components.schemas['IdentityLink']);
  });
});

describe('signet idp … and signet user links / unlink', () => {
  test('"`idp add` prints the redirect URI"; the secret is read from standard input and never printed', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signet-idp-cli-'));
    const env = { SIGNET_DATA_DIR: dir, SIGNET_BASE_URL: 'https://id.example.org' };
    const secret = 'gh-client-secret-0123456789';
    const added = await runSignet(['--init', 'idp', 'add', 'github', '--preset', 'github', '--client-id', 'Iv1.abc', '--client-secret-stdin', '--json'], { env, stdin: `${secret}\n` });
    assert.equal(added.code, 0, added.stderr);
    assert.equal(added.stdout.includes(secret), false);
    const view = JSON.parse(added.stdout) as Record<string, unknown>;
    assert.deepEqual(Object.keys(view).slice(0, 4), ['slug', 'name', 'issuer', 'redirect_uri']);
    assert.equal(view['redirect_uri'], 'https://id.example.org/signin/idp/github/callback');
    assert.equal(view['name'], 'GitHub');
    const missing = await runSignet(['idp', 'add', 'x', '--issuer', 'https://op.example', '--client-id', 'c'], { env });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--client-secret-stdin is required/);
    const oidc = await runSignet(['idp', 'add', 'corp', '--issuer', 'https://kc.example/realms/staff', '--client-id', 'signet', '--client-secret-stdin', '--name', 'Corp SSO', '--json'], { env, stdin: 'kc-secret' });
    assert.equal(oidc.code, 0, oidc.stderr);
    for (const [args, check] of [
      [['idp', 'disable', 'corp', '--json'], (v: Record<string, unknown>) => v['enabled'] === false],
      [['idp', 'enable', 'corp', '--json'], (v: Record<string, unknown>) => v['enabled'] === true],
      [['idp', 'update', 'corp', '--name', 'Staff SSO', '--json'], (v: Record<string, unknown>) => v['name'] === 'Staff SSO'],
      [['idp', 'show', 'corp', '--json'], (v: Record<string, unknown>) => v['issuer'] === 'https://kc.example/realms/staff'],
    ] as const) {
      const result = await runSignet([...args], { env });
      assert.equal(result.code, 0, result.stderr);
      assert.ok(check(JSON.parse(result.stdout) as Record<string, unknown>), `${args.join(' ')}: ${result.stdout}`);
    }
    const list = await runSignet(['idp', 'list', '--json'], { env });
    assert.deepEqual((JSON.parse(list.stdout) as Array<{ slug: string }>).map((p) => p.slug), ['corp', 'github']);
    assert.equal(list.stdout.includes('kc-secret') || list.stdout.includes(secret), false);
    const user = await runSignet(['user', 'create', '--email', 'cli@example.org', '--password-stdin', '--json'], { env, stdin: 'a-password-1' });
    const sub = (JSON.parse(user.stdout) as { sub: string }).sub;
    const links = await runSignet(['user', 'links', sub, '--json'], { env });
    assert.deepEqual(JSON.parse(links.stdout), { sub, links: [] });
    const unlink = await runSignet(['user', 'unlink', sub, 'corp'], { env });
    assert.equal(unlink.code, 1);
    assert.match(unlink.stderr, /no identity linked from corp/);
    const removed = await runSignet(['idp', 'remove', 'github', '--json'], { env });
    assert.deepEqual(JSON.parse(removed.stdout), { slug: 'github', removed: true });
    const gone = await runSignet(['idp', 'show', 'github'], { env });
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /no identity provider with the slug github/);
  });
});
