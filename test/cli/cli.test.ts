import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { insertClient } from '../../src/clients/clients.store.ts';
import { migrate, openDatabase } from '../../src/db/database.ts';
import { runSignet } from '../helpers/cli.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`signet client and user commands [${kind}]`, { skip: kind === 'postgres' ? pgSkip : false }, () => {
    let env: Record<string, string>;
    let dropDatabase: (() => Promise<void>) | undefined;
    before(async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'signet-cli-'));
      env = { SIGNET_DATA_DIR: dir };
      if (kind === 'postgres') {
        const created = await createPostgresDatabase();
        env.SIGNET_DATABASE_URL = created.url;
        dropDatabase = created.drop;
      }
      // Only serve, worker, migrate (or --init) may start a new data dir.
      const migrated = await runSignet(['migrate'], { env });
      assert.equal(migrated.code, 0, migrated.stderr);
    });
    after(async () => dropDatabase?.());

    test('`signet client create` then `signet client show ID` round-trips; the stored secret is not the plaintext', async () => {
      const created = await runSignet(['client', 'create', '--name', 'Example App', '--redirect-uri', 'https://app.example/cb', '--redirect-uri', 'https://app.example/cb2', '--scope', 'openid profile email'], { env });
      assert.equal(created.code, 0, created.stderr);
      assert.equal(created.stderr, '', 'not on a terminal: no "shown once" line, stderr stays empty on success');
      const client = JSON.parse(created.stdout);
      assert.deepEqual(Object.keys(client).slice(0, 8), ['client_id', 'client_secret', 'name', 'redirect_uris', 'scopes', 'public', 'enabled', 'allowed_origins']);
      assert.equal(client.client_secret.length, 44);
      const shown = await runSignet(['client', 'show', client.client_id], { env });
      assert.equal(shown.code, 0, shown.stderr);
      const view = JSON.parse(shown.stdout);
      assert.equal(view.client_secret, undefined, 'the secret is shown once, at creation');
      assert.deepEqual(view.redirect_uris, ['https://app.example/cb', 'https://app.example/cb2']);
      assert.deepEqual(view.scopes, ['openid', 'profile', 'email']);

      const settings = kind === 'postgres' ? { kind, url: env.SIGNET_DATABASE_URL!, poolSize: 1 } : { kind, file: path.join(env.SIGNET_DATA_DIR!, 'signet.sqlite') };
      const handle = openDatabase(settings);
      const row = await handle.db.selectFrom('clients').selectAll().where('client_id', '=', client.client_id).executeTakeFirstOrThrow();
      await handle.close();
      assert.ok(row.secret_hash && row.secret_hash !== client.client_secret && !row.secret_hash.includes(client.client_secret));
    });

    test('`signet user create --email a@example.com --password-stdin` prints a UUID sub; with --legacy-numeric-id a numeric one', async () => {
      const uuid = await runSignet(['user', 'create', '--email', 'a@example.com', '--password-stdin'], { env, stdin: 'correct horse battery\n' });
      assert.equal(uuid.code, 0, uuid.stderr);
      assert.match(JSON.parse(uuid.stdout).sub, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const legacy = await runSignet(['user', 'create', '--email', 'old@example.com', '--phone', '+49 151 12345678', '--legacy-numeric-id', '--password-stdin'], { env, stdin: 'correct horse battery' });
      assert.equal(legacy.code, 0, legacy.stderr);
      const profile = JSON.parse(legacy.stdout);
      assert.match(profile.sub, /^\d+$/);
      assert.equal(profile.phone_number, '+4915112345678', 'phone numbers are normalised to E.164');
    });

    test('CLI errors: one line on stderr, non-zero exit, nothing written', async () => {
      const cases: Array<[string[], string | undefined, RegExp]> = [
        [['client', 'create', '--name', 'X'], undefined, /redirect-uri/],
        [['client', 'create', '--name', 'X', '--redirect-uri', 'not-a-uri'], undefined, /not an absolute URI/],
        [['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb', '--scope', 'openid admin'], undefined, /unknown scope "admin"/],
        [['client', 'show', 'no-such-client'], undefined, /no application with client_id no-such-client/],
        [['user', 'create', '--email', 'b@example.com'], undefined, /--password-stdin is required/],
        [['user', 'create', '--email', 'not-an-email', '--password-stdin'], 'long enough password', /not an e-mail address/],
        [['user', 'create', '--email', 'a@example.com', '--password-stdin'], 'long enough password', /exists already/],
        [['user', 'create', '--email', 'c@example.com', '--password-stdin'], 'short', /at least 8 characters/],
        [['user', 'create', '--phone', '12345', '--password-stdin'], 'long enough password', /country code/],
        [['nonsense'], undefined, /unknown command/],
      ];
      const results = await Promise.all(cases.map(([args, stdin]) => runSignet(args, { env, stdin })));
      for (const [i, [args, , message]] of cases.entries()) {
        const result = results[i]!;
        assert.notEqual(result.code, 0, `${args.join(' ')} must fail`);
        assert.equal(result.stdout, '', `${args.join(' ')} prints nothing on stdout`);
        const lines = result.stderr.trim().split('\n');
        assert.equal(lines.length, 1, `one line on stderr for ${args.join(' ')}: ${result.stderr}`);
        assert.match(lines[0]!, message);
      }
      const listed = JSON.parse((await runSignet(['user', 'list'], { env })).stdout) as Array<{ email: string }>;
      assert.deepEqual(listed.map((u) => u.email).sort(), ['a@example.com', 'old@example.com'], 'failed creates wrote nothing');
    });

    test('"ids already issued keep working": every command that takes a client_id accepts one beginning with "-" after --', async () => {
      // An application registered before client ids became hex, with an id the parser reads as an option.
      const legacyId = '-rWDCNS5HhwKM-KyWZ1xUw';
      const settings = kind === 'postgres' ? { kind, url: env.SIGNET_DATABASE_URL!, poolSize: 1 } : { kind, file: path.join(env.SIGNET_DATA_DIR!, 'signet.sqlite') };
      const handle = openDatabase(settings);
      await migrate(handle.db);
      const now = Date.now();
      await insertClient(handle.db, {
        client_id: legacyId,
        name: 'Old App',
        secret_hash: 'not-a-real-hash',
        redirect_uris: JSON.stringify(['https://old.example/cb']),
        scopes: JSON.stringify(['openid', 'profile']),
        is_public: 0,
        enabled: 1,
        allowed_origins: '[]',
        created_at: now,
        updated_at: now,
      });
      await handle.close();

      const unguarded = await runSignet(['client', 'show', legacyId], { env });
      assert.equal(unguarded.code, 2);
      assert.equal(unguarded.stderr.trim().split('\n').length, 1);
      assert.match(unguarded.stderr, /put -- before it/, 'the error says how to pass such an id');

      const shown = await runSignet(['client', 'show', '--', legacyId], { env });
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(JSON.parse(shown.stdout).client_id, legacyId);
      const updated = await runSignet(['client', 'update', '--name', 'Renamed App', '--', legacyId], { env });
      assert.equal(updated.code, 0, updated.stderr);
      assert.equal(JSON.parse(updated.stdout).name, 'Renamed App');
      assert.equal(JSON.parse((await runSignet(['client', 'disable', '--', legacyId], { env })).stdout).enabled, false);
      assert.equal(JSON.parse((await runSignet(['client', 'enable', '--', legacyId], { env })).stdout).enabled, true);
      const rotated = await runSignet(['client', 'rotate-secret', '--', legacyId], { env });
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.equal(JSON.parse(rotated.stdout).client_secret.length, 44);
      const deleted = await runSignet(['client', 'delete', '--', legacyId], { env });
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.notEqual((await runSignet(['client', 'show', '--', legacyId], { env })).code, 0);
    });

    test('a new client_id is 32 hex characters, so it can be passed as it is', async () => {
      const created = JSON.parse((await runSignet(['client', 'create', '--name', 'Hex', '--redirect-uri', 'https://hex.example/cb'], { env })).stdout);
      assert.match(created.client_id, /^[0-9a-f]{32}$/);
    });

    test('client disable / enable / rotate-secret / delete', async () => {
      const created = JSON.parse((await runSignet(['client', 'create', '--name', 'Y', '--redirect-uri', 'https://y.example/cb'], { env })).stdout);
      assert.equal(JSON.parse((await runSignet(['client', 'disable', created.client_id], { env })).stdout).enabled, false);
      assert.equal(JSON.parse((await runSignet(['client', 'enable', created.client_id], { env })).stdout).enabled, true);
      const rotated = JSON.parse((await runSignet(['client', 'rotate-secret', created.client_id], { env })).stdout);
      assert.notEqual(rotated.client_secret, created.client_secret);
      assert.equal((await runSignet(['client', 'delete', created.client_id], { env })).code, 0);
      assert.notEqual((await runSignet(['client', 'show', created.client_id], { env })).code, 0);
    });
  });
}

test('a wrong setting stops `signet migrate` with one line naming the variable', async () => {
  const result = await runSignet(['migrate'], { env: { SIGNET_PORT: 'abc', SIGNET_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'signet-cli-')) } });
  assert.notEqual(result.code, 0);
  assert.equal(result.stderr.trim().split('\n').length, 1);
  assert.match(result.stderr, /SIGNET_PORT: expected a port number/);
});
