// Imported passwords (issue 35): people brought from Keycloak, Auth0, a CSV file or another Signet keep
// their passwords. A foreign hash (bcrypt, argon2 with other parameters, scrypt, PBKDF2) is kept here as
// it came, with its algorithm and parameters, checked at the next sign-in and then replaced by Signet's
// own argon2id hash in users.password_hash. The row stays after that with the fingerprint of what was
// imported, so importing the same file again leaves a password the person has set since alone.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('imported_passwords')
    .addColumn('sub', 'text', (c) => c.primaryKey().references('users.sub').onDelete('cascade'))
    // 'bcrypt' | 'argon2' | 'scrypt' | 'pbkdf2-sha1' | 'pbkdf2-sha256' | 'pbkdf2-sha512' | 'signet' (Signet's own argon2id)
    .addColumn('algorithm', 'text', (c) => c.notNull())
    // the algorithm with its parameters and no salt or hash ("bcrypt$12", "pbkdf2-sha256$i=27500,l=64"): a
    // failed sign-in waits as long as the slowest scheme in use takes, so timing tells no account apart
    .addColumn('scheme', 'text', (c) => c.notNull())
    // the foreign hash in its encoded form (accounts/password-hashes.ts); null once replaced, or for 'signet'
    .addColumn('foreign_hash', 'text')
    // SHA-256 of the hash as the file gave it: the same file imported again changes no password
    .addColumn('source_fingerprint', 'text', (c) => c.notNull())
    .addColumn('imported_at', 'bigint', (c) => c.notNull())
    // when a sign-in replaced the foreign hash with Signet's own
    .addColumn('replaced_at', 'bigint')
    .execute();
  await db.schema.createIndex('imported_passwords_scheme').on('imported_passwords').column('scheme').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('imported_passwords').ifExists().execute();
}
