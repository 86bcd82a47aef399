// Passkeys (issue 19 item 3, WebAuthn Level 2): each person's registered credentials, and the
// ceremony challenges — stored only as keyed hashes, single use, five minutes (accounts/factors/passkeys.ts).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    // our own handle for the list and its Remove button (the credential id stays out of forms)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // base64url credential id, as the browser reports it; one account per credential
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    // base64url COSE public key (public: verifying needs it, forging cannot use it)
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull())
    // JSON array of transports ("internal", "usb", "hybrid", …), as the browser reported them
    .addColumn('transports', 'text')
    // the host the passkey was made on: each served host is its own relying party
    .addColumn('rp_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_sub').on('passkeys').column('sub').execute();

  await db.schema
    .createTable('passkey_challenges')
    // keyed hash of the challenge; the challenge itself only ever travels to the browser and back
    .addColumn('challenge_hash', 'text', (c) => c.primaryKey())
    // "registration" or "authentication"
    .addColumn('purpose', 'text', (c) => c.notNull())
    // registration: the signed-in person; authentication: the person of a second step, or null (discoverable)
    .addColumn('sub', 'text', (c) => c.references('users.sub').onDelete('cascade'))
    .addColumn('rp_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('passkey_challenges_expiry').on('passkey_challenges').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('passkey_challenges').ifExists().execute();
  await db.schema.dropTable('passkeys').ifExists().execute();
}
