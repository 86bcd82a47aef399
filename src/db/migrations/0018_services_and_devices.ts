// OAuth for services and devices (issue 43), each opt-in per application:
// - `clients.grants`: the extra grants an application was registered with (`--grant client_credentials`,
//   `--grant device_code`); '[]' keeps the spec's two grants, byte for byte.
// - `clients.service_sub`: the service identity of an application with client_credentials — a row of
//   `users` without e-mail, phone or usable password (it can never sign in), named
//   `service-account-<client_id>`, so document tasks can be owned by it like a person's.
// - `token_chains.grant_type`: which grant started a chain (null: authorization_code, as before), for
//   the token statistics per grant.
// - `device_authorizations`: RFC 8628 device codes, in the database so every node sees them; the
//   device code, the user code and the page's confirmation id are stored as keyed hashes only.
// - the built-in public application `signet-cli` (device grant only) that `signet login` uses.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/** The built-in application of `signet login` (src/oauth/device/cli-application.ts names it too). */
const CLI_CLIENT_ID = 'signet-cli';

export async function up(db: Kysely<unknown>): Promise<void> {
  // JSON array of extra grants: "client_credentials", "device_code"
  await db.schema.alterTable('clients').addColumn('grants', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('clients').addColumn('service_sub', 'text', (c) => c.references('users.sub').onDelete('set null')).execute();
  // "client_credentials" | "device_code", or null: a chain an authorization code started
  await db.schema.alterTable('token_chains').addColumn('grant_type', 'text').execute();

  await db.schema
    .createTable('device_authorizations')
    // keyed hash of the device_code (32 random bytes, base64url)
    .addColumn('device_code_hash', 'text', (c) => c.primaryKey())
    // keyed hash of the normalized user code (8 letters, no dash, upper case)
    .addColumn('user_code_hash', 'text', (c) => c.notNull().unique())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    // the scope the application asked for
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // RFC 8628 §3.5: the polling interval in seconds, raised by 5 on every slow_down
    .addColumn('interval_seconds', 'integer', (c) => c.notNull())
    .addColumn('last_polled_at', 'bigint')
    // "pending" | "approved" | "denied" | "redeemed"
    .addColumn('status', 'text', (c) => c.notNull())
    // the person who decided (null while pending)
    .addColumn('sub', 'text', (c) => c.references('users.sub').onDelete('cascade'))
    // the scope the person allowed (may be narrower than asked)
    .addColumn('granted_scope', 'text')
    .addColumn('decided_at', 'bigint')
    // keyed hash of the /device page's confirmation id together with the browser's binding cookie
    .addColumn('confirm_hash', 'text')
    .execute();
  await db.schema.createIndex('device_authorizations_expires').on('device_authorizations').column('expires_at').execute();
  await db.schema.createIndex('device_authorizations_confirm').on('device_authorizations').column('confirm_hash').execute();

  const now = Date.now();
  await sql`insert into clients (client_id, name, secret_hash, redirect_uris, scopes, is_public, enabled, allowed_origins, created_at, updated_at, grants)
    values (${CLI_CLIENT_ID}, ${'Signet command line'}, ${null}, ${'[]'}, ${'["openid","profile","documents"]'}, ${1}, ${1}, ${'[]'}, ${now}, ${now}, ${'["device_code"]'})`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from clients where client_id = ${CLI_CLIENT_ID}`.execute(db);
  await db.schema.dropTable('device_authorizations').ifExists().execute();
  await db.schema.alterTable('token_chains').dropColumn('grant_type').execute();
  await db.schema.alterTable('clients').dropColumn('service_sub').execute();
  await db.schema.alterTable('clients').dropColumn('grants').execute();
}
