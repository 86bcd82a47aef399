// `signet api-key create --email E --name N [--expires-in DAYS]` prints {"id","key","name","expires_at"}
// (the key shown once, stored only as a keyed hash) · `api-key list --email E` · `api-key revoke ID`;
// each change in the audit trail. SQLite only: the domain's rules run on both databases in accounts/api-keys.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseSettings } from '../../src/config/settings.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { runSignet } from '../helpers/cli.ts';

describe('signet api-key', () => {
  let env: Record<string, string>;
  let database: DatabaseHandle;
  const signet = async (args: string[], expectCode = 0, stdin?: string) => {
    const result = await runSignet(args, { env, ...(stdin === undefined ? {} : { stdin }) });
    assert.equal(result.code, expectCode, `${args.join(' ')}: ${result.stderr}`);
    return result;
  };

  before(async () => {
    env = { SIGNET_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'signet-api-key-cli-')) };
    await signet(['migrate']);
    await signet(['user', 'create', '--email', 'ada@example.com', '--password-stdin'], 0, 'a long enough password');
    database = openDatabase(parseSettings(env).database);
  });
  after(async () => {
    await database.close();
  });

  test('`create` prints {"id","key","name","expires_at"} once; `list` never shows the key; `revoke ID` stops it; audited', async () => {
    const created = JSON.parse((await signet(['api-key', 'create', '--email', 'ada@example.com', '--name', 'Open WebUI', '--expires-in', '30'])).stdout);
    assert.deepEqual(Object.keys(created), ['id', 'key', 'name', 'expires_at']);
    assert.match(created.key, /^sgk_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    assert.equal(created.name, 'Open WebUI');
    assert.ok(Date.parse(created.expires_at) > Date.now() + 29 * 86_400_000);
    const listed = await signet(['api-key', 'list', '--email', 'ada@example.com']);
    assert.ok(!listed.stdout.includes(created.key.split('.')[1]), 'the secret is never listed');
    assert.deepEqual((JSON.parse(listed.stdout) as Array<{ id: string }>).map((k) => k.id), [created.id]);
    const revoked = JSON.parse((await signet(['api-key', 'revoke', created.id])).stdout);
    assert.equal(revoked.id, created.id);
    assert.ok(revoked.revoked_at);
    const types = (await database.db.selectFrom('audit_events').select('type').execute()).map((e) => e.type);
    assert.ok(types.includes('api_key.created') && types.includes('api_key.revoked'));
  });

  test('refusals say what was wrong: an unknown e-mail (exit 2), a bad --expires-in (exit 2), an unknown id (exit 1)', async () => {
    assert.match((await signet(['api-key', 'create', '--email', 'nobody@example.com', '--name', 'x'], 2)).stderr, /no account with the e-mail address/);
    assert.match((await signet(['api-key', 'create', '--email', 'ada@example.com', '--name', 'x', '--expires-in', 'soon'], 2)).stderr, /--expires-in is a whole number of days/);
    assert.match((await signet(['api-key', 'revoke', 'sgk_0000000000000000'], 1)).stderr, /No API key with id/);
  });
});
