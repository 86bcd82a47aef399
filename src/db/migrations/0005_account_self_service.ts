// Account self-service: where and from what each session signed in, single-use links for resetting a
// password and verifying an e-mail address (stored only as keyed hashes), the outbox of account mail
// that `signet worker` sends, and small counters that limit how often such mail may be asked for.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per statement: SQLite's ALTER TABLE adds one at a time. Old sessions have neither.
  await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('ip', 'text').execute();

  await db.schema
    .createTable('account_tokens')
    // keyed hash of the 32 random bytes in the link; the link itself is never stored
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // the address the link was sent to: a verification proves this one, not a later one
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('account_tokens_sub').on('account_tokens').columns(['sub', 'purpose']).execute();

  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    // null when the request named no account (recorded as suppressed: the request did the same work)
    .addColumn('sub', 'text', (c) => c.references('users.sub').onDelete('cascade'))
    .addColumn('to_address', 'text')
    .addColumn('locale', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // the link in the message stops working then (a message with a link is not sent after it)
    .addColumn('link_expires_at', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mail_outbox_due').on('mail_outbox').columns(['status', 'next_attempt_at']).execute();

  await db.schema
    .createTable('account_request_counters')
    // e.g. "reset:address:<ip>", "reset:email:<keyed hash>", "verify:account:<sub>"
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('account_request_counters').ifExists().execute();
  await db.schema.dropTable('mail_outbox').ifExists().execute();
  await db.schema.dropTable('account_tokens').ifExists().execute();
  await db.schema.alterTable('sessions').dropColumn('ip').execute();
  await db.schema.alterTable('sessions').dropColumn('user_agent').execute();
}
