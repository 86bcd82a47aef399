// The operator role (issue 27): the admin console's door. `account_roles` holds who has which role
// (`signet user role add SUB operator`); `console_sessions` the console's own sessions on the admin
// listener — a table apart from `sessions`, so a public session is never a console session and the
// console's short idle timeout (last_seen_at) touches nothing of the public sign-in.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('account_roles')
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // "operator" (accounts/roles.ts ROLES)
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('granted_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('account_roles_pk', ['sub', 'role'])
    .execute();

  await db.schema
    .createTable('console_sessions')
    // keyed hash of the cookie's 32 random bytes; the id itself is only ever in the cookie
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // the idle timeout counts from here; every console request moves it
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    // when the session last proved a second factor (sign-in, a step-up confirmation)
    .addColumn('checked_at', 'bigint', (c) => c.notNull())
    // the absolute end, however busy the operator
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ip', 'text')
    .execute();
  await db.schema.createIndex('console_sessions_sub').on('console_sessions').column('sub').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_sessions').ifExists().execute();
  await db.schema.dropTable('account_roles').ifExists().execute();
}
