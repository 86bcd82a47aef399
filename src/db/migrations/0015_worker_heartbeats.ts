// Workers' heartbeats (issue 36): every `signet worker` process writes one row here and renews it every
// few seconds, so the console's Tasks page shows every worker — idle ones too — on whichever node it is
// served from (the database is the only thing all nodes share). A worker that stops deletes its row;
// one that dies leaves it to age (last_seen_at) until the housekeeping sweep removes it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('worker_heartbeats')
    // the worker's random id: also the lease_owner of the tasks it runs
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    // JSON array of what it takes: task kinds ("translate", "docparse") and/or "email"
    .addColumn('work', 'text', (c) => c.notNull())
    // tasks it may run at once (SIGNET_WORKER_CONCURRENCY); 0 for an e-mail-only worker
    .addColumn('slots', 'integer', (c) => c.notNull())
    // the version of Signet it runs
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('worker_heartbeats_last_seen').on('worker_heartbeats').column('last_seen_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('worker_heartbeats').ifExists().execute();
}
