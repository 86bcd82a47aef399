// signet import · export · backup through the real command, the admin API's POST /admin/v1/import and
// GET /admin/v1/export, and a backup taken while a refresh storm writes to the database.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { listAuditEvents } from '../../src/audit/audit.ts';
import { adminFixture, type AdminFixture } from '../admin/admin-fixture.ts';
import { runSignet } from '../helpers/cli.ts';
import { forEachDatabase, sqliteDatabase } from '../helpers/databases.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { oauthFixture } from '../oauth/token-fixtures.ts';
import { bcryptOf, csvCell } from './foreign-files.ts';

const SECRET = 'portability-test-secret-0123456789abcdef';

describe('signet import, export and backup (the command)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-portability-cli-'));
  const env = { SIGNET_DATA_DIR: path.join(dir, 'data'), SIGNET_SECRET: SECRET };

  test('import prints {"created","updated","skipped","errors"}; --dry-run writes nothing; a bad --format is refused', async () => {
    assert.equal((await runSignet(['migrate'], { env })).code, 0);
    const csv = path.join(dir, 'people.csv');
    writeFileSync(csv, `email,name,email_verified,password_hash\ncli@example.com,Cli,true,${csvCell(await bcryptOf('cli password'))}\nnot-an-email,Bad,true,\n`);
    const dry = await runSignet(['import', csv, '--dry-run', '--json'], { env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(JSON.parse(dry.stdout), { created: 1, updated: 0, skipped: 0, errors: [{ line: 3, reason: '"not-an-email" is not an e-mail address' }] });
    assert.deepEqual(JSON.parse((await runSignet(['user', 'list', '--json'], { env })).stdout), [], '--dry-run writes nothing');
    const real = await runSignet(['import', csv, '--json'], { env });
    assert.equal(JSON.parse(real.stdout).created, 1);
    assert.equal(JSON.parse((await runSignet(['import', csv, '--json'], { env })).stdout).updated, 1, 'a second run updates');
    const refused = await runSignet(['import', csv, '--format', 'ldif'], { env });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--format takes signet, keycloak, auth0, csv/);
    assert.match((await runSignet(['import', path.join(dir, 'missing.csv')], { env })).stderr, /no file at/);
  });

  test('export --include-secrets writes the file with mode 0600 and says so on stderr; without it no hash', async () => {
    const out = path.join(dir, 'export.jsonl');
    const result = await runSignet(['export', '--out', out, '--include-secrets', '--json'], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(statSync(out).mode & 0o777, 0o600, 'readable by its owner only');
    assert.match(result.stderr, /holds password hashes and application secret hashes; it is readable by you only \(mode 0600\)/);
    assert.deepEqual(JSON.parse(result.stdout), { out, accounts: 1, clients: 0, providers: 0, links: 0, includes_secrets: true });
    assert.match(readFileSync(out, 'utf8'), /"password_hash":"\$2b\$10\$/, 'the imported bcrypt hash still waiting travels with secrets');
    const plain = await runSignet(['export'], { env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout.trim().split('\n').length, 2, 'to standard output without --out: the header and one account');
    assert.doesNotMatch(plain.stdout, /password_hash/);
  });

  test('backup writes a copy that passes PRAGMA integrity_check, readable by its owner only', async () => {
    const out = path.join(dir, 'backup.sqlite');
    const result = await runSignet(['backup', '--out', out, '--json'], { env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).integrity, 'ok');
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const copy = new SQLite(out, { readonly: true });
    assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
    assert.equal((copy.prepare('select count(*) as n from users').get() as { n: number }).n, 1);
    copy.close();
  });
});

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

test('backup on PostgreSQL: refused with a message pointing to pg_dump', { skip: pgSkip }, async () => {
  const created = await createPostgresDatabase();
  try {
    const dir = mkdtempSync(path.join(tmpdir(), 'signet-portability-pg-'));
    const result = await runSignet(['backup', '--out', path.join(dir, 'b.sqlite')], { env: { SIGNET_DATA_DIR: dir, SIGNET_SECRET: SECRET, SIGNET_DATABASE_URL: created.url } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /PostgreSQL: back it up with pg_dump/);
  } finally {
    await created.drop();
  }
});

test('"a backup taken during a refresh storm opens and passes PRAGMA integrity_check"', async () => {
  const database = await sqliteDatabase();
  const f = await oauthFixture(database);
  after(async () => {
    await f.app.close();
    await database.dispose();
  });
  let refreshes = 0;
  let storming = true;
  const storm = async () => {
    let current = await f.exchange();
    while (storming) {
      const res = await f.refresh(current.refresh_token);
      assert.equal(res.statusCode, 200, res.body);
      current = res.json();
      refreshes++;
    }
  };
  const storms = [storm(), storm(), storm(), storm()];
  while (refreshes < 20) await new Promise((r) => setTimeout(r, 20));
  const before = refreshes;
  const out = path.join(mkdtempSync(path.join(tmpdir(), 'signet-backup-')), 'during-storm.sqlite');
  const dataDir = path.dirname(database.settings.kind === 'sqlite' ? database.settings.file : '');
  const result = await runSignet(['backup', '--out', out, '--json'], { env: { SIGNET_DATA_DIR: dataDir, SIGNET_SECRET: SECRET } });
  const during = refreshes - before;
  storming = false;
  await Promise.all(storms);
  assert.equal(result.code, 0, result.stderr);
  assert.ok(during > 0, `the storm went on while the backup ran (${during} refreshes)`);
  const copy = new SQLite(out, { readonly: true });
  assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
  assert.equal(copy.pragma('journal_mode', { simple: true }), 'delete', 'one self-contained file');
  const chains = copy.prepare('select count(*) as n from token_chains').get() as { n: number };
  assert.ok(chains.n >= 4, 'the copy holds the refresh chains');
  copy.close();
});

forEachDatabase('the admin API: POST /admin/v1/import, GET /admin/v1/export', (open) => {
  const fixtures: AdminFixture[] = [];
  after(async () => Promise.all(fixtures.flatMap((f) => [f.app.close(), f.adminApp.close()])));

  test('POST /admin/v1/import takes the file as the body and answers the summary; audited with the operator key', async () => {
    const f = await adminFixture(await open());
    fixtures.push(f);
    const csv = `email,name,password_hash\napi@example.com,Api,${csvCell(await bcryptOf('api password'))}\nbroken,,\n`;
    const dry = await f.admin('POST', '/admin/v1/import?dry_run=true', { body: csv, headers: { 'content-type': 'text/csv' } });
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual(dry.json(), { created: 1, updated: 0, skipped: 0, errors: [{ line: 3, reason: '"broken" is not an e-mail address' }] });
    const res = await f.admin('POST', '/admin/v1/import?format=csv', { body: csv, headers: { 'content-type': 'text/csv' } });
    assert.equal(res.json<{ created: number }>().created, 1);
    const [event] = (await listAuditEvents(f.deps.db, { type: 'accounts.imported' })).events;
    assert.equal(event!.actor, `admin_key:${f.keyId}`);
    assert.deepEqual(event!.detail, { format: 'csv', created: 1, updated: 0, skipped: 0, errors: 1 });
    assert.equal((await f.admin('POST', '/admin/v1/import?format=ldif', { body: csv, headers: { 'content-type': 'text/csv' } })).statusCode, 400);
    assert.equal((await f.admin('POST', '/admin/v1/import', { body: '', headers: { 'content-type': 'text/csv' } })).statusCode, 400, 'an empty file is refused');
    assert.equal((await f.admin('POST', '/admin/v1/import', { key: null, body: csv, headers: { 'content-type': 'text/csv' } })).statusCode, 401);
  });

  test('GET /admin/v1/export streams JSON Lines, with hashes only when include_secrets=true', async () => {
    const f = await adminFixture(await open());
    fixtures.push(f);
    const plain = await f.admin('GET', '/admin/v1/export');
    assert.equal(plain.statusCode, 200);
    assert.match(String(plain.headers['content-type']), /^application\/x-ndjson/);
    const lines = plain.body.trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    assert.equal(lines[0]!.type, 'signet-export');
    assert.ok(lines.some((l) => l.type === 'account') && lines.some((l) => l.type === 'client'));
    assert.doesNotMatch(plain.body, /password_hash|secret_hash/);
    const full = await f.admin('GET', '/admin/v1/export?include_secrets=true');
    assert.match(full.body, /"password_hash":"\$argon2id\$/);
    assert.match(full.body, /"secret_hash":"/);
    assert.equal((await listAuditEvents(f.deps.db, { type: 'accounts.exported' })).events[0]!.detail?.['include_secrets'], true);
  });
});
