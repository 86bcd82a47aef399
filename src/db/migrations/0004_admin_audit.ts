// Operator keys for the admin API and the audit trail. Audit events get a database-assigned,
// ever-increasing id: it orders them (newest first) and is the list cursor, without a lock on the
// hot path of sign-in. SQLite: INTEGER PRIMARY KEY AUTOINCREMENT (never reuses an id after the
// retention sweep); PostgreSQL: an identity column.
import { PostgresAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('admin_keys')
    // "ak_" + hex: never begins with "-", so it is safe as a command-line argument
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // keyed hash of the secret part; the key itself is shown once, at creation
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();

  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('audit_events')
    .addColumn('id', postgres ? 'bigint' : 'integer', (c) => (postgres ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey().autoIncrement()))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    // no foreign keys: an event outlives the account or application it is about
    .addColumn('sub', 'text')
    .addColumn('client_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('actor', 'text')
    // a small JSON object of whitelisted keys (see src/audit/audit.ts), never a secret
    .addColumn('detail', 'text')
    .execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
  await db.schema.createIndex('audit_events_sub').on('audit_events').columns(['sub', 'id']).execute();
  await db.schema.createIndex('audit_events_client').on('audit_events').columns(['client_id', 'id']).execute();
  await db.schema.createIndex('audit_events_type').on('audit_events').columns(['type', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').ifExists().execute();
  await db.schema.dropTable('admin_keys').ifExists().execute();
}
