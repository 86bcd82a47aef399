// startServer as `signet serve` runs it: the admin API on its own listener (SIGNET_ADMIN_ADDR), not
// on the public port; `off` starts none; the audit counters on /metrics.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createAdminKey } from '../../src/admin/admin-keys.ts';
import { systemClock } from '../../src/config/clock.ts';
import { deriveKeys, loadRootSecret } from '../../src/config/keys.ts';
import { parseSettings, type Settings } from '../../src/config/settings.ts';
import { openDatabase } from '../../src/db/database.ts';
import { startServer } from '../../src/web/server.ts';
import { freePort } from '../helpers/live-server.ts';

async function settingsWith(env: Record<string, string>): Promise<Settings> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signet-admin-'));
  const port = await freePort();
  return parseSettings({ SIGNET_DATA_DIR: dataDir, SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_LOG_LEVEL: 'silent', SIGNET_METRICS_ADDR: 'off', ...env });
}

test('SIGNET_ADMIN_ADDR=off starts no admin listener', async () => {
  const server = await startServer(await settingsWith({ SIGNET_ADMIN_ADDR: 'off' }));
  try {
    assert.equal(server.adminApp, undefined);
  } finally {
    await server.close();
  }
});

test('the admin API listens on SIGNET_ADMIN_ADDR only: there with a key, 404 on the public port; closed on shutdown; audit counters on /metrics', async () => {
  const [adminPort, metricsPort] = [await freePort(), await freePort()];
  const settings = await settingsWith({ SIGNET_ADMIN_ADDR: `127.0.0.1:${adminPort}`, SIGNET_METRICS_ADDR: `127.0.0.1:${metricsPort}` });
  const server = await startServer(settings);
  const admin = `http://127.0.0.1:${adminPort}`;
  const publicUrl = `http://127.0.0.1:${settings.port}`;
  try {
    // As `signet admin-key create` does: its own connection to the same database, the same secret.
    const database = openDatabase(settings.database);
    const { key } = await createAdminKey(database.db, systemClock, deriveKeys(loadRootSecret(settings)).tokenHash, 'test');
    await database.close();
    assert.equal((await fetch(`${admin}/admin/v1/openapi.json`)).status, 200);
    assert.equal((await fetch(`${admin}/admin/v1/accounts`)).status, 401);
    const listed = await fetch(`${admin}/admin/v1/accounts`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(listed.status, 200);
    assert.deepEqual(await listed.json(), { accounts: [], next_cursor: null });

    for (const url of ['/admin/v1/accounts', '/admin/v1/openapi.json']) {
      const res = await fetch(`${publicUrl}${url}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 404, `${url} on the public port`);
    }
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    for (const name of ['signet_signins_total', 'signet_tokens_issued_total', 'signet_refresh_replays_total']) assert.match(metrics, new RegExp(`# TYPE ${name} counter`));
  } finally {
    await server.close();
  }
  await assert.rejects(fetch(`${admin}/admin/v1/openapi.json`), 'the admin listener is closed with the server');
});
