// Issue 44, "the database path": on SQLite the hot statements run at once on the prepared statement,
// not through Kysely's connection queue — "reads outside write transactions where the rules allow".
// The rule that makes this safe on SQLite's one connection: a statement runs at once only outside any
// transaction, or inside the caller's own; while another request's transaction is open (held across
// its awaits) it waits its turn, so it can neither see nor join what that transaction has not committed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { registerClient } from '../../src/clients/clients.ts';
import { systemClock } from '../../src/config/clock.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import { sqliteConnectionOf } from '../../src/db/database.ts';
import { newChainRow } from '../../src/oauth/token/issue-tokens.ts';
import * as tokens from '../../src/oauth/tokens.store.ts';
import { sqliteDatabase } from '../helpers/databases.ts';

describe('SQLite statements run at once (issue 44)', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let sub: string;
  let clientId: string;
  const keys = deriveKeys('statements-at-once-test-secret-0123456789');
  const chain = () => newChainRow(systemClock(), { clientId, sub, scope: 'openid', expiresAt: systemClock() + 60_000 });

  before(async () => {
    database = await sqliteDatabase();
    sub = (await createAccount(database.db, systemClock, { email: 'ada@example.com', password: 'analytical-engine' })).sub;
    clientId = (await registerClient(database.db, systemClock, keys.tokenHash, { name: 'At once', redirectUris: ['https://app.example/cb'], scopes: ['openid'] })).client.clientId;
  });
  after(async () => {
    await database?.dispose();
  });

  test('"reads outside write transactions": a read while another request\'s transaction is open never sees its uncommitted row (it rolls back: not found)', async () => {
    const row = chain();
    let read: Promise<tokens.ChainRow | undefined> | undefined;
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await tokens.insertChain(trx, row);
        // Another request's read, on the handle, while this transaction is open.
        read = tokens.findChain(database.db, row.id);
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.equal(await read, undefined);
  });

  test('a read while another request\'s transaction is open waits for its commit, then finds the row', async () => {
    const row = chain();
    let read: Promise<tokens.ChainRow | undefined> | undefined;
    let settledInside = false;
    await database.db.transaction().execute(async (trx) => {
      await tokens.insertChain(trx, row);
      read = tokens.findChain(database.db, row.id);
      void read.then(() => (settledInside = true));
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(settledInside, false, 'the read waited for the open transaction');
    });
    assert.equal((await read)?.id, row.id);
  });

  test('a write while another request\'s transaction is open does not join it: that transaction\'s rollback leaves the write in place', async () => {
    const first = chain();
    const second = chain();
    let write: Promise<void> | undefined;
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await tokens.insertChain(trx, first);
        write = tokens.insertChain(database.db, second);
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    await write;
    assert.equal(await tokens.findChain(database.db, first.id), undefined);
    assert.equal((await tokens.findChain(database.db, second.id))?.id, second.id);
  });

  test('inside the caller\'s own transaction a statement runs at once and sees that transaction\'s writes', async () => {
    const row = chain();
    await database.db.transaction().execute(async (trx) => {
      await tokens.insertChain(trx, row);
      assert.equal((await tokens.findChain(trx, row.id))?.id, row.id);
    });
  });

  test('a write made at once is counted as a commit, so it returns only after the group fsync covers it', async () => {
    const commits = sqliteConnectionOf(database.db)?.commits;
    assert.ok(commits, 'the SQLite handle groups its fsyncs');
    const before = commits.committed;
    await tokens.insertChain(database.db, chain());
    assert.equal(commits.committed, before + 1);
  });
});
