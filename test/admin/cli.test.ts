// `signet admin-key create --name N` (prints {"id","key"}, the key shown once) · `admin-key list` ·
// `admin-key revoke ID`; `signet audit list [--sub SUB] [--type T] [--limit N]` newest first.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildAdminApp } from '../../src/admin/app.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import { recordAudit } from '../../src/audit/audit.ts';
import { manualClock } from '../../src/config/clock.ts';
import { deriveKeys, loadRootSecret } from '../../src/config/keys.ts';
import { parseSettings } from '../../src/config/settings.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { createLogger } from '../../src/web/logging.ts';
import { runSignet } from '../helpers/cli.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`signet admin-key and audit commands [${kind}]`, { skip: kind === 'postgres' ? pgSkip : false }, () => {
    let env: Record<string, string>;
    let database: DatabaseHandle;
    let dropDatabase: (() => Promise<void>) | undefined;
    const signet = async (args: string[], expectCode = 0) => {
      const result = await runSignet(args, { env });
      assert.equal(result.code, expectCode, `${args.join(' ')}: ${result.stderr}`);
      return result;
    };
    /** The admin API on the same data, as `signet serve` would build it. */
    const adminGet = async (url: string, key: string) => {
      const settings = parseSettings(env);
      const app = await buildAdminApp({ db: database.db, clock: manualClock(Date.now()), keys: deriveKeys(loadRootSecret(settings)), objects: openObjectStore(parseStorageUrl(settings.storageUrl)), logger: createLogger('silent'), trustProxy: false });
      const res = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
      await app.close();
      return res;
    };

    before(async () => {
      env = { SIGNET_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'signet-admin-cli-')) };
      if (kind === 'postgres') {
        const created = await createPostgresDatabase();
        env.SIGNET_DATABASE_URL = created.url;
        dropDatabase = created.drop;
      }
      await signet(['migrate']);
      database = openDatabase(parseSettings(env).database);
    });
    after(async () => {
      await database.close();
      await dropDatabase?.();
    });

    test('`admin-key create --name N` prints {"id","key"} once; the key works on the admin API; only a keyed hash is stored; `list` never shows it; `revoke ID` stops it', async () => {
      const created = JSON.parse((await signet(['admin-key', 'create', '--name', 'deploy bot'])).stdout);
      assert.deepEqual(Object.keys(created), ['id', 'key']);
      assert.match(created.id, /^ak_[0-9a-f]{16}$/, 'an id never begins with "-": safe on a command line');
      assert.ok(created.key.startsWith(`${created.id}.`));
      const row = await database.db.selectFrom('admin_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      assert.ok(!row.key_hash.includes(created.key.split('.')[1]), 'the secret is not stored');

      const listed = await signet(['admin-key', 'list']);
      const keys = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
      assert.deepEqual(Object.keys(keys.find((k) => k.id === created.id)!), ['id', 'name', 'created_at', 'last_used_at', 'revoked_at']);
      assert.ok(!listed.stdout.includes(created.key.split('.')[1]) && !listed.stdout.includes(row.key_hash));

      assert.equal((await adminGet('/admin/v1/accounts', created.key)).statusCode, 200);
      const revoked = JSON.parse((await signet(['admin-key', 'revoke', created.id])).stdout);
      assert.equal(revoked.id, created.id);
      assert.notEqual(revoked.revoked_at, null);
      assert.equal((await adminGet('/admin/v1/accounts', created.key)).statusCode, 401, 'a revoked key stops working');

      const unknown = await signet(['admin-key', 'revoke', 'ak_0000000000000000'], 1);
      assert.equal(unknown.stdout, '');
      assert.match(unknown.stderr.trim(), /^signet: no admin key with id ak_0000000000000000/);
      await signet(['admin-key', 'create'], 2);
    });

    test('`audit list` newest first, with --sub, --type (or a family) and --limit; the same events as GET /admin/v1/audit-events', async () => {
      const clock = manualClock(Date.now());
      await recordAudit(database.db, clock, { type: 'signin.failed', sub: 'sub-a', ip: '198.51.100.1', outcome: 'failure' });
      await recordAudit(database.db, clock, { type: 'signin.succeeded', sub: 'sub-a', ip: '198.51.100.1', outcome: 'success' });
      await recordAudit(database.db, clock, { type: 'signin.failed', sub: 'sub-b', ip: '198.51.100.2', outcome: 'failure' });
      const list = async (...args: string[]) => JSON.parse((await signet(['audit', 'list', ...args])).stdout) as Array<{ id: string; type: string; sub: string | null; actor: string | null }>;

      // Read-only from here: the commands run side by side.
      const [all, bySub, byType, byFamily, limited] = await Promise.all([list(), list('--sub', 'sub-a'), list('--type', 'signin.failed'), list('--type', 'admin_key.*'), list('--limit', '2')]);
      assert.deepEqual(all.slice(0, 3).map((e) => [e.type, e.sub]), [['signin.failed', 'sub-b'], ['signin.succeeded', 'sub-a'], ['signin.failed', 'sub-a']]);
      assert.ok(all.some((e) => e.type === 'admin_key.created' && e.actor === 'cli'), 'admin-key create is in the trail');
      assert.ok(all.some((e) => e.type === 'admin_key.revoked'));
      assert.deepEqual(bySub.map((e) => e.type), ['signin.succeeded', 'signin.failed']);
      assert.deepEqual(byType.map((e) => e.sub), ['sub-b', 'sub-a']);
      assert.deepEqual(byFamily.map((e) => e.type), ['admin_key.revoked', 'admin_key.created']);
      assert.equal(limited.length, 2);

      const key = JSON.parse((await signet(['admin-key', 'create', '--name', 'reader'])).stdout).key as string;
      const viaApi = (await adminGet('/admin/v1/audit-events?sub=sub-a', key)).json<{ events: unknown[] }>().events;
      assert.deepEqual(viaApi, await list('--sub', 'sub-a'));

      const failures = await Promise.all([['--limit', '0'], ['--limit', 'ten'], ['--type', 'DROP TABLE']].map((args) => signet(['audit', 'list', ...args], 2)));
      for (const failed of failures) assert.equal(failed.stderr.trim().split('\n').length, 1, 'one line on stderr');
    });
  });
}
