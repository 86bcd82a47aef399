// issue 35: people imported from Keycloak, Auth0 and a CSV file sign in through the real authorize flow
// with the passwords they had, their foreign hash is replaced by Signet's own right after, and wrong
// passwords are refused.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { importAsOperator } from '../../src/admin/operator-changes.ts';
import { listAuditEvents } from '../../src/audit/audit.ts';
import type { Db } from '../../src/db/database.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { flowSetup, type Flow } from '../oauth/authorize-support.ts';
import { signInThroughAuthorize } from './sign-in.ts';
import { argon2iOf, auth0File, bcryptOf, csvCell, djangoPbkdf2, keycloakRealm, passlibScrypt } from './foreign-files.ts';

async function importText(f: Flow, text: string, options: { dryRun?: boolean; format?: 'signet' | 'keycloak' | 'auth0' | 'csv' } = {}) {
  const op = { db: f.deps.db, clock: f.clock, hashKey: f.deps.keys.tokenHash, objects: f.deps.objects, actor: 'cli' as const, ip: null };
  return importAsOperator(op, Readable.from([text]), { dryRun: options.dryRun ?? false, format: options.format });
}

async function storedHash(db: Db, email: string): Promise<{ password_hash: string; foreign_hash: string | null }> {
  const row = await db.selectFrom('users').leftJoin('imported_passwords', 'imported_passwords.sub', 'users.sub').select(['users.password_hash', 'imported_passwords.foreign_hash']).where('email', '=', email).executeTakeFirstOrThrow();
  return { password_hash: row.password_hash, foreign_hash: row.foreign_hash ?? null };
}

/** spec: "checked at the next sign-in in constant time, and replaced by Signet's own argon2id hash right after a successful check" */
async function assertSignsInAndIsUpgraded(f: Flow, email: string, password: string): Promise<void> {
  const before = await storedHash(f.deps.db, email);
  assert.equal(before.password_hash, '$signet-imported$', `${email}: the account waits on its foreign hash`);
  assert.ok(before.foreign_hash, `${email}: the foreign hash is kept`);
  const wrong = await signInThroughAuthorize(f, email, `${password}-wrong`);
  assert.equal(wrong.status, 401, `${email}: a wrong password is refused`);
  assert.equal((await storedHash(f.deps.db, email)).password_hash, '$signet-imported$', 'a failed sign-in replaces nothing');
  const right = await signInThroughAuthorize(f, email, password);
  assert.equal(right.status, 303, `${email}: the old password signs in`);
  assert.ok(right.code, 'the application gets its code');
  const afterwards = await storedHash(f.deps.db, email);
  assert.match(afterwards.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, `${email}: Signet's own argon2id hash replaced the foreign one`);
  assert.equal(afterwards.foreign_hash, null, 'nothing foreign is kept after the replacement');
  const again = await signInThroughAuthorize(f, email, password);
  assert.equal(again.status, 303, 'the same password signs in against the new hash');
  assert.equal((await signInThroughAuthorize(f, email, 'not the password')).status, 401, 'and a wrong one is still refused');
}

forEachDatabase('importing people with their passwords', (open) => {
  const flows: Flow[] = [];
  after(async () => Promise.all(flows.map((f) => f.app.close())));
  const setup = async () => {
    const f = await flowSetup(await open());
    flows.push(f);
    return f;
  };

  test('a Keycloak realm export: pbkdf2-sha256 (27,500 iterations, 64-byte key), pbkdf2-sha512 and argon2 users sign in with their old passwords; the hash is replaced after', async () => {
    const f = await setup();
    const keepId = '6f1c2b1e-8a4d-4c5e-9f00-0123456789ab';
    const realm = await keycloakRealm(
      [
        { id: keepId, email: 'kc256@example.com', password: 'keycloak sha256 pw', algorithm: 'pbkdf2-sha256' },
        { email: 'kc512@example.com', password: 'keycloak sha512 pw', algorithm: 'pbkdf2-sha512' },
        { email: 'kcargon@example.com', password: 'keycloak argon2 pw', algorithm: 'argon2' },
      ],
      [{ id: randomId(), username: 'service-account-backend', serviceAccountClientId: 'backend', enabled: true }],
    );
    const { summary, format } = await importText(f, realm);
    assert.equal(format, 'keycloak', 'the format is detected from the file');
    assert.deepEqual(summary, { created: 3, updated: 0, skipped: 1, errors: [] });
    const kept = await f.deps.db.selectFrom('users').select('sub').where('email', '=', 'kc256@example.com').executeTakeFirstOrThrow();
    assert.equal(kept.sub, keepId, "Keycloak's user id stays the person's sub");
    await assertSignsInAndIsUpgraded(f, 'kc256@example.com', 'keycloak sha256 pw');
    await assertSignsInAndIsUpgraded(f, 'kc512@example.com', 'keycloak sha512 pw');
    await assertSignsInAndIsUpgraded(f, 'kcargon@example.com', 'keycloak argon2 pw');
  });

  test("an Auth0 bulk file: password_hash bcrypt and custom_password_hash bcrypt, argon2, pbkdf2 and scrypt sign in; Auth0's md5 is refused by line", async () => {
    const f = await setup();
    const file = await auth0File(
      [
        { email: 'a0bcrypt@example.com', password: 'auth0 bcrypt pw', kind: 'bcrypt' },
        { email: 'a0custom@example.com', password: 'auth0 custom bcrypt', kind: 'custom-bcrypt' },
        { email: 'a0argon@example.com', password: 'auth0 argon2 pw', kind: 'argon2' },
        { email: 'a0pbkdf2@example.com', password: 'auth0 pbkdf2 pw', kind: 'pbkdf2' },
        { email: 'a0scrypt@example.com', password: 'auth0 scrypt pw', kind: 'scrypt' },
      ],
      [{ email: 'a0md5@example.com', custom_password_hash: { algorithm: 'md5', hash: { value: '5f4dcc3b5aa765d61d8327deb882cf99', encoding: 'hex' } } }],
    );
    const { summary, format } = await importText(f, file);
    assert.equal(format, 'auth0');
    assert.equal(summary.created, 5);
    assert.equal(summary.errors.length, 1);
    const mdLine = file.split('\n').findIndex((l) => l.includes('"a0md5@example.com"'));
    assert.equal(summary.errors[0]!.line, mdLine, 'the refused user is named by the line its record starts on');
    assert.match(summary.errors[0]!.reason, /md5/);
    assert.equal(await f.deps.db.selectFrom('users').select('sub').where('email', '=', 'a0md5@example.com').executeTakeFirst(), undefined, 'nothing of a refused record is written');
    for (const [email, password] of [
      ['a0bcrypt@example.com', 'auth0 bcrypt pw'],
      ['a0custom@example.com', 'auth0 custom bcrypt'],
      ['a0argon@example.com', 'auth0 argon2 pw'],
      ['a0pbkdf2@example.com', 'auth0 pbkdf2 pw'],
      ['a0scrypt@example.com', 'auth0 scrypt pw'],
    ] as const) {
      await assertSignsInAndIsUpgraded(f, email, password);
    }
  });

  test('a CSV with a header: bcrypt, argon2i, Django PBKDF2 and passlib scrypt hashes sign in; a bad line is reported by its number and writes nothing while good lines land', async () => {
    const f = await setup();
    const lines = [
      'email,phone,name,email_verified,password_hash',
      `csvbcrypt@example.com,+4915112340001,Bea,true,${csvCell(await bcryptOf('csv bcrypt pw'))}`,
      `csvargon@example.com,,Arne,false,${csvCell(await argon2iOf('csv argon2i pw'))}`,
      `csvbad@example.com,not-a-phone,Bad,true,${await bcryptOf('whatever')}`,
      `csvdjango@example.com,,Dj,true,${csvCell(djangoPbkdf2('csv django pw'))}`,
      `csvscrypt@example.com,,Scry,true,${csvCell(passlibScrypt('csv scrypt pw'))}`,
      'csvnohash@example.com,,Nohash,true,$1$md5crypt$notsupported',
    ];
    const { summary } = await importText(f, lines.join('\n') + '\n');
    assert.equal(summary.created, 4);
    assert.deepEqual(summary.errors.map((e) => e.line), [4, 7], 'each refused line by its number');
    assert.match(summary.errors[0]!.reason, /phone/);
    assert.match(summary.errors[1]!.reason, /password hash/);
    for (const email of ['csvbad@example.com', 'csvnohash@example.com']) {
      assert.equal(await f.deps.db.selectFrom('users').select('sub').where('email', '=', email).executeTakeFirst(), undefined, `${email}: nothing of a bad line is written`);
    }
    await assertSignsInAndIsUpgraded(f, 'csvbcrypt@example.com', 'csv bcrypt pw');
    await assertSignsInAndIsUpgraded(f, 'csvargon@example.com', 'csv argon2i pw');
    await assertSignsInAndIsUpgraded(f, 'csvdjango@example.com', 'csv django pw');
    await assertSignsInAndIsUpgraded(f, 'csvscrypt@example.com', 'csv scrypt pw');
  });

  test('"idempotent (a second run updates, never duplicates)"; a password the person set since is not put back; "--dry-run writes nothing"; audited as one accounts.imported event with counts', async () => {
    const f = await setup();
    const csv = `email,name,email_verified,password_hash\nidem@example.com,First,true,${await bcryptOf('first password')}\n`;
    const dry = await importText(f, csv, { dryRun: true });
    assert.deepEqual(dry.summary, { created: 1, updated: 0, skipped: 0, errors: [] }, 'a dry run reports what a real run would do');
    assert.equal(await f.deps.db.selectFrom('users').select('sub').where('email', '=', 'idem@example.com').executeTakeFirst(), undefined, 'and writes nothing');
    assert.equal((await listAuditEvents(f.deps.db, { type: 'accounts.imported' })).events.length, 0, 'a dry run records no import');

    assert.deepEqual((await importText(f, csv)).summary, { created: 1, updated: 0, skipped: 0, errors: [] });
    assert.equal((await signInThroughAuthorize(f, 'idem@example.com', 'first password')).status, 303, 'signs in (and the hash is replaced)');
    const renamed = csv.replace('First', 'Second');
    assert.deepEqual((await importText(f, renamed)).summary, { created: 0, updated: 1, skipped: 0, errors: [] }, 'the second run updates');
    const rows = await f.deps.db.selectFrom('users').select(['name', 'password_hash']).where('email', '=', 'idem@example.com').execute();
    assert.equal(rows.length, 1, 'never duplicates');
    assert.equal(rows[0]!.name, 'Second');
    assert.match(rows[0]!.password_hash, /^\$argon2id\$/, 'the same imported hash again does not undo the replacement');
    assert.equal((await signInThroughAuthorize(f, 'idem@example.com', 'first password')).status, 303);

    const events = (await listAuditEvents(f.deps.db, { type: 'accounts.imported' })).events;
    assert.equal(events.length, 2, 'one event per import');
    assert.deepEqual(events[0]!.detail, { format: 'csv', created: 0, updated: 1, skipped: 0, errors: 0 });
    assert.equal(events[0]!.actor, 'cli');
  });
});

function randomId(): string {
  return crypto.randomUUID();
}

