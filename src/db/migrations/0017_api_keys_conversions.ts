// Issue 40: personal API keys, docling-serve-compatible conversions, and a docparse task's options.
// - `api_keys`: a person's keys for the document APIs (the `/v1/…` conversion routes and the task API).
//   Only a keyed hash of the secret half is stored; a key goes with its account (cascade).
// - `conversions`: one docling-serve request (its `task_id`), naming the docparse task made for each of
//   its files and how the answer is to be shaped; goes with its account (cascade), its tasks with theirs.
// - `tasks.parse_options`: what a docparse task was asked for beyond the defaults (OCR mode and
//   languages, a page range, pictures, table structure), as JSON; null for the defaults.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    // "sgk_" + 16 hex characters: the public half of the key, shown in lists
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // keyed hash of the secret half
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // null: the key does not expire
    .addColumn('expires_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_sub').on('api_keys').column('sub').execute();

  await db.schema
    .createTable('conversions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // JSON: how the answer is shaped (to_formats, image_export_mode, zip, abort_on_error, …)
    .addColumn('answer_options', 'text', (c) => c.notNull())
    // JSON array, one entry per file in request order: {filename, task_id} or {filename, error}
    .addColumn('documents', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('conversions_sub').on('conversions').column('sub').execute();

  await db.schema.alterTable('tasks').addColumn('parse_options', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('parse_options').execute();
  await db.schema.dropTable('conversions').ifExists().execute();
  await db.schema.dropTable('api_keys').ifExists().execute();
}
