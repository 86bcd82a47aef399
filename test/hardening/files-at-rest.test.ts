// Hardening 10, "Files at rest": the data dir is 0700, the SQLite database (and its WAL) and the
// secret file 0600 — set where they are created, whatever the umask lets through.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { loadRootSecret } from '../../src/config/keys.ts';
import { parseSettings } from '../../src/config/settings.ts';
import { openDatabase } from '../../src/db/database.ts';
import { startServer } from '../../src/web/server.ts';
import { freePort } from '../helpers/live-server.ts';

const scratch = mkdtempSync(path.join(tmpdir(), 'signet-modes-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

test('"Files at rest": a new data dir is 0700 and the generated secret file 0600', () => {
  const dataDir = path.join(scratch, 'secret-first', 'data');
  loadRootSecret(parseSettings({ SIGNET_DATA_DIR: dataDir }));
  assert.equal(mode(dataDir), '700');
  assert.equal(mode(path.join(scratch, 'secret-first')), '700', 'parents created on the way too');
  assert.equal(mode(path.join(dataDir, 'secret.key')), '600');
});

test('"Files at rest": an existing data dir others may enter (0755, as an older version left it) is tightened to 0700 at start, with SIGNET_SECRET set or not', () => {
  for (const env of [{}, { SIGNET_SECRET: 'k'.repeat(40) }]) {
    const dataDir = path.join(scratch, `loose-dir-${Object.keys(env).length}`);
    mkdirSync(dataDir, { recursive: true });
    chmodSync(dataDir, 0o755);
    loadRootSecret(parseSettings({ SIGNET_DATA_DIR: dataDir, ...env }));
    assert.equal(mode(dataDir), '700');
  }
});

test('"Files at rest": a secret file others may read is tightened to 0600', () => {
  const dataDir = path.join(scratch, 'loose-secret');
  loadRootSecret(parseSettings({ SIGNET_DATA_DIR: dataDir }));
  const file = path.join(dataDir, 'secret.key');
  chmodSync(file, 0o644);
  const secret = loadRootSecret(parseSettings({ SIGNET_DATA_DIR: dataDir }));
  assert.equal(mode(file), '600');
  assert.ok(secret.length >= 32);
});

test('"Files at rest": the SQLite database, its WAL and shared-memory files are 0600, in a 0700 folder', async () => {
  const file = path.join(scratch, 'db-first', 'data', 'signet.sqlite');
  const handle = openDatabase({ kind: 'sqlite', file });
  await handle.db.schema.createTable('t').addColumn('x', 'integer').execute();
  await handle.db.insertInto('t' as never).values({ x: 1 } as never).execute();
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    assert.ok(existsSync(f), f);
    assert.equal(mode(f), '600', path.basename(f));
  }
  assert.equal(mode(path.dirname(file)), '700');
  await handle.close();
});

test('"Files at rest": an existing database file with a loose mode is tightened when opened', async () => {
  const file = path.join(scratch, 'loose-db.sqlite');
  writeFileSync(file, '');
  chmodSync(file, 0o644);
  const handle = openDatabase({ kind: 'sqlite', file });
  assert.equal(mode(file), '600');
  await handle.close();
});

test('"Files at rest": `signet serve` with a new data dir (SIGNET_SECRET given, so the database creates it) leaves 0700 and 0600', async () => {
  const dataDir = path.join(scratch, 'served');
  const port = await freePort();
  const running = await startServer(
    parseSettings({
      SIGNET_BASE_URL: `http://127.0.0.1:${port}`,
      SIGNET_DATA_DIR: dataDir,
      SIGNET_SECRET: 'a-root-secret-of-at-least-32-characters!!',
      SIGNET_METRICS_ADDR: 'off',
      SIGNET_ADMIN_ADDR: 'off',
      SIGNET_LOG_LEVEL: 'silent',
    }),
  );
  try {
    assert.equal(mode(dataDir), '700');
    assert.equal(mode(path.join(dataDir, 'signet.sqlite')), '600');
  } finally {
    await running.close();
  }
});
