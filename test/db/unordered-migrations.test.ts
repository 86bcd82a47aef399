// A migration numbered below one already applied still runs: 0008_passkeys was reserved while
// 0009_task_glossary shipped first, so a database migrated then must gain the passkey tables.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { isMigrated, migrate } from '../../src/db/database.ts';
import { forEachDatabase } from '../helpers/databases.ts';

forEachDatabase('migrations', (open) => {
  test('a database that ran 0009 before 0008 existed gets 0008 (the passkey tables) on the next start', async () => {
    const { db } = await open();
    // As such a database looks: 0009 applied, 0008 never.
    await db.schema.dropTable('passkey_challenges').execute();
    await db.schema.dropTable('passkeys').execute();
    await sql`delete from kysely_migration where name = '0008_passkeys'`.execute(db);
    assert.equal(await isMigrated(db), false);
    await migrate(db);
    assert.equal(await isMigrated(db), true);
    assert.deepEqual(await db.selectFrom('passkeys').selectAll().execute(), []);
  });
});
