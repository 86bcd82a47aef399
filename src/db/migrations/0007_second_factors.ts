// Second factors (issue 19): authenticator apps (TOTP) with their secret encrypted at rest, recovery
// codes as keyed hashes, the half-signed-in state between a correct password and the second step, and
// when each session last proved the password or a factor (step-up for sensitive changes).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // spec (issue 19 item 5): "require a factor or the password within the last 10 minutes". Set at
  // sign-in and at every confirmation; sessions from before this migration have none (they confirm).
  await db.schema.alterTable('sessions').addColumn('checked_at', 'bigint').execute();

  await db.schema
    .createTable('second_factors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // 'totp' (passkeys live in their own table, see 0008)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    // AES-256-GCM under keys.factorSecret: "v1.<iv>.<ciphertext>.<tag>" (base64url); never the secret itself
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    // null while being set up: only a factor whose first code was accepted counts
    .addColumn('enabled_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    // the last TOTP time step accepted: a code of that step or an earlier one is never accepted again
    .addColumn('last_step', 'bigint')
    .execute();
  await db.schema.createIndex('second_factors_sub').on('second_factors').columns(['sub', 'kind']).execute();

  await db.schema
    .createTable('recovery_codes')
    // keyed hash of the code (with the account's sub); the code itself is shown once and never stored
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('recovery_codes_sub').on('recovery_codes').columns(['sub']).execute();

  await db.schema
    .createTable('second_steps')
    // keyed hash of the cookie's 32 random bytes, bound to the served origin (as sessions are)
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // 'verify': the account has a factor, a code is due; 'enrol': SIGNET_MFA=required and it has none yet
    .addColumn('purpose', 'text', (c) => c.notNull())
    // where the sign-in goes when the step is done: a pending authorization request or a local path
    .addColumn('request_id', 'text')
    .addColumn('return_to', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('second_steps_expiry').on('second_steps').columns(['expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('second_steps').ifExists().execute();
  await db.schema.dropTable('recovery_codes').ifExists().execute();
  await db.schema.dropTable('second_factors').ifExists().execute();
  await db.schema.alterTable('sessions').dropColumn('checked_at').execute();
}
