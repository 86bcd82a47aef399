// A person's notification choices per category and channel. A missing row means the default
// (in-app on, e-mail off); muting an application lives on its grant (grants.muted).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('notification_preferences')
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_preferences_pk', ['sub', 'category', 'channel'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('notification_preferences').ifExists().execute();
}
