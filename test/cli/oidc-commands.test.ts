// issue 28 in the operator contract: `signet client create … --oidc --post-logout-redirect-uri U`,
// `client update ID --oidc/--no-oidc`, `client show`, `signet keys list|rotate|retire KID` — the real
// command in a child process; and the admin API's `oidc` field.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAdminKey } from '../../src/admin/admin-keys.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import { testApp } from '../helpers/app.ts';
import { runSignet } from '../helpers/cli.ts';
import { sqliteDatabase } from '../helpers/databases.ts';

describe('signet client --oidc and signet keys', () => {
  let env: Record<string, string>;
  before(async () => {
    env = { SIGNET_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'signet-cli-oidc-')) };
    const migrated = await runSignet(['migrate'], { env });
    assert.equal(migrated.code, 0, migrated.stderr);
  });

  test('`client create --oidc --post-logout-redirect-uri U` registers an OpenID application; `client show` says so; `client update --no-oidc` turns it off', async () => {
    const created = await runSignet(['client', 'create', '--name', 'Grafana', '--redirect-uri', 'https://grafana.example/login/generic_oauth', '--oidc', '--post-logout-redirect-uri', 'https://grafana.example/login', '--id-token-alg', 'RS256'], { env });
    assert.equal(created.code, 0, created.stderr);
    const client = JSON.parse(created.stdout);
    assert.equal(client.oidc, true);
    assert.deepEqual(client.post_logout_redirect_uris, ['https://grafana.example/login']);
    assert.equal(client.id_token_signed_response_alg, 'RS256');
    const shown = JSON.parse((await runSignet(['client', 'show', client.client_id], { env })).stdout);
    assert.equal(shown.oidc, true);
    const off = await runSignet(['client', 'update', client.client_id, '--no-oidc'], { env });
    assert.equal(off.code, 0, off.stderr);
    assert.equal(JSON.parse(off.stdout).oidc, false);
    const on = await runSignet(['client', 'update', client.client_id, '--oidc'], { env });
    assert.equal(JSON.parse(on.stdout).oidc, true);
    const plain = JSON.parse((await runSignet(['client', 'create', '--name', 'Plain', '--redirect-uri', 'https://plain.example/cb'], { env })).stdout);
    assert.equal(plain.oidc, false, 'without --oidc: no id_token, ever');
    const bad = await runSignet(['client', 'create', '--name', 'Bad', '--redirect-uri', 'https://b.example/cb', '--oidc', '--post-logout-redirect-uri', 'not a uri'], { env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /not an absolute URI/);
  });

  test('`keys list` shows one signing key per algorithm (never a private key); `keys rotate` adds new ones that sign; `keys retire` refuses a key whose id_tokens may still be valid; all audited', async () => {
    const listed = await runSignet(['keys', 'list'], { env });
    assert.equal(listed.code, 0, listed.stderr);
    const keys = JSON.parse(listed.stdout) as Array<{ kid: string; alg: string; signing: boolean }>;
    assert.deepEqual(keys.map((k) => k.alg).sort(), ['ES256', 'RS256']);
    assert.ok(keys.every((k) => k.signing));
    assert.equal(/"d"|PRIVATE|private_key/.test(listed.stdout), false);
    const rotated = await runSignet(['keys', 'rotate', '--alg', 'ES256'], { env });
    assert.equal(rotated.code, 0, rotated.stderr);
    const [made] = JSON.parse(rotated.stdout) as Array<{ kid: string; alg: string }>;
    const after = JSON.parse((await runSignet(['keys', 'list'], { env })).stdout) as Array<{ kid: string; alg: string; signing: boolean; removable_after: string | null }>;
    assert.equal(after.length, 3);
    assert.equal(after.find((k) => k.kid === made!.kid)?.signing, true);
    const old = after.find((k) => k.alg === 'ES256' && !k.signing)!;
    assert.ok(old.removable_after);
    const retire = await runSignet(['keys', 'retire', old.kid], { env });
    assert.equal(retire.code, 1);
    assert.match(retire.stderr, /may still verify id_tokens it signed until/);
    const unknown = await runSignet(['keys', 'retire', 'no-such-kid'], { env });
    assert.equal(unknown.code, 1);
    const audit = JSON.parse((await runSignet(['audit', 'list', '--type', 'signing_key.rotated'], { env })).stdout) as Array<{ type: string; outcome: string }>;
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.outcome, 'success');
    const refused = JSON.parse((await runSignet(['audit', 'list', '--type', 'signing_key.retired'], { env })).stdout) as Array<{ outcome: string }>;
    assert.deepEqual(refused.map((e) => e.outcome), ['failure', 'failure']);
  });
});

describe('admin API: the oidc field', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  before(async () => {
    database = await sqliteDatabase();
  });
  after(async () => database?.dispose());

  test('POST /admin/v1/clients with oidc: true and PATCH oidc: false', async () => {
    const { deps, app } = await testApp(database);
    const admin = await buildAdminApp({ db: deps.db, clock: deps.clock, keys: deps.keys, objects: deps.objects, logger: deps.logger, trustProxy: false });
    const { key } = await createAdminKey(database.db, deps.clock, deps.keys.tokenHash, 'ops');
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = await admin.inject({ method: 'POST', url: '/admin/v1/clients', headers, payload: { name: 'OIDC', redirect_uris: ['https://a.example/cb'], oidc: true, post_logout_redirect_uris: ['https://a.example/bye'] } });
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json<{ client_id: string; oidc: boolean; post_logout_redirect_uris: string[] }>();
    assert.equal(body.oidc, true);
    assert.deepEqual(body.post_logout_redirect_uris, ['https://a.example/bye']);
    const patched = await admin.inject({ method: 'PATCH', url: `/admin/v1/clients/${body.client_id}`, headers, payload: { oidc: false } });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json<{ oidc: boolean }>().oidc, false);
    const got = await admin.inject({ method: 'GET', url: `/admin/v1/clients/${body.client_id}`, headers });
    assert.equal(got.json<{ oidc: boolean }>().oidc, false);
    await admin.close();
    await app.close();
  });
});

