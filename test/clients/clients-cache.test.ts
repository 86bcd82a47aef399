// Issue 20: "the application record cached in process with invalidation on change … a disabled
// application must stop working within a second on every node". Two handles on one database stand for
// two nodes; the cache's monotonic clock is injected, so no test waits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { registerClient, updateClient } from '../../src/clients/clients.ts';
import { cachedClientRow, CLIENT_CACHE_MS } from '../../src/clients/clients.cache.ts';
import * as store from '../../src/clients/clients.store.ts';
import { systemClock } from '../../src/config/clock.ts';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { forEachDatabase } from '../helpers/databases.ts';

const key = Buffer.alloc(32, 7);

/** A lookup through the cache that counts how often it read the row. */
function lookups(db: Db, clientId: string) {
  let reads = 0;
  const read: typeof store.findClient = (d, id) => {
    reads++;
    return store.findClient(d, id);
  };
  return {
    at: (now: number) => cachedClientRow(db, clientId, read, () => now),
    reads: () => reads,
  };
}

forEachDatabase('application record cache', (open) => {
  test(`"a disabled application must stop working within a second on every node": another node's change shows once ${CLIENT_CACHE_MS} ms have passed since the cached read began, and not from the cache before`, async () => {
    const nodeA = await open();
    const nodeB = openDatabase(nodeA.settings);
    try {
      const { client } = await registerClient(nodeA.db, systemClock, key, { name: 'App', redirectUris: ['https://app.example/cb'] });
      const b = lookups(nodeB.db, client.clientId);
      assert.equal((await b.at(10_000))?.enabled, 1);
      assert.equal((await b.at(10_000 + CLIENT_CACHE_MS - 1))?.enabled, 1, 'within the bound node B answers from its cache');
      assert.equal(b.reads(), 1);
      await updateClient(nodeA.db, systemClock, client.clientId, { enabled: false });
      assert.equal((await b.at(10_000 + CLIENT_CACHE_MS - 1))?.enabled, 1, 'node B has not heard of it yet (the bound, not longer)');
      assert.equal((await b.at(10_000 + CLIENT_CACHE_MS))?.enabled, 0, 'a second after its cached read began, node B reads the row again');
      assert.equal(b.reads(), 2);
    } finally {
      await nodeB.close();
    }
  });

  test('a change made through this process shows at the very next lookup (the entry is forgotten on write)', async () => {
    const { db } = await open();
    const { client } = await registerClient(db, systemClock, key, { name: 'App', redirectUris: ['https://app.example/cb'] });
    const here = lookups(db, client.clientId);
    assert.equal((await here.at(0))?.enabled, 1);
    await updateClient(db, systemClock, client.clientId, { enabled: false });
    assert.equal((await here.at(1))?.enabled, 0);
    await store.deleteClient(db, client.clientId);
    assert.equal(await here.at(2), undefined, 'a deleted application is gone at once');
    assert.equal(here.reads(), 3);
  });

  test('a read that raced a write through this process does not cache the row it read before the write', async () => {
    const { db } = await open();
    const { client } = await registerClient(db, systemClock, key, { name: 'App', redirectUris: ['https://app.example/cb'] });
    let reads = 0;
    // The first read returns the row as it was, then the write lands (and forgets) before that read is stored.
    const racing: typeof store.findClient = async (d, id) => {
      reads++;
      const row = await store.findClient(d, id);
      if (reads === 1) await updateClient(db, systemClock, client.clientId, { enabled: false });
      return row;
    };
    assert.equal((await cachedClientRow(db, client.clientId, racing, () => 0))?.enabled, 1, 'the racing read answers what it read');
    assert.equal((await cachedClientRow(db, client.clientId, racing, () => 1))?.enabled, 0, 'and did not cache it');
    assert.equal(reads, 2);
  });

  test('an unknown client_id is not cached: an application registered on another node works there at once', async () => {
    const nodeA = await open();
    const nodeB = openDatabase(nodeA.settings);
    try {
      const { client } = await registerClient(nodeA.db, systemClock, key, { name: 'App', redirectUris: ['https://app.example/cb'] });
      await store.deleteClient(nodeA.db, client.clientId);
      const b = lookups(nodeB.db, client.clientId);
      assert.equal(await b.at(0), undefined);
      await store.insertClient(nodeA.db, { ...(await registerRow(nodeA.db)), client_id: client.clientId });
      assert.ok(await b.at(1), 'found at the next lookup, no second to wait');
    } finally {
      await nodeB.close();
    }
  });
});

async function registerRow(db: Db) {
  const { client } = await registerClient(db, systemClock, key, { name: 'Template', redirectUris: ['https://app.example/cb'] });
  const row = await store.findClient(db, client.clientId);
  await store.deleteClient(db, client.clientId);
  return row!;
}
