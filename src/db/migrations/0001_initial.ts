// The first schema: accounts, applications, sessions, pending authorization requests, grants,
// codes and tokens. Written once for both dialects with Kysely's schema builder.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('sub', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.unique())
    .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('phone_number', 'text', (c) => c.unique())
    .addColumn('phone_number_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('name', 'text')
    .addColumn('picture', 'text')
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('clients')
    .addColumn('client_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text')
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('allowed_origins', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_sub').on('sessions').column('sub').execute();

  await db.schema
    .createTable('authorization_requests')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('state', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('code_challenge_method', 'text')
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();

  await db.schema
    .createTable('grants')
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('first_authorized_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('muted', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('grants_pk', ['sub', 'client_id'])
    .execute();

  await db.schema
    .createTable('authorization_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    .addColumn('redirect_uri', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('code_challenge', 'text')
    .addColumn('code_challenge_method', 'text')
    .addColumn('chain_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('redeemed_at', 'bigint')
    .execute();

  for (const table of ['access_tokens', 'refresh_tokens'] as const) {
    let builder = db.schema
      .createTable(table)
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
      .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('chain_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull());
    builder =
      table === 'access_tokens'
        ? builder.addColumn('expires_at', 'bigint', (c) => c.notNull())
        : builder.addColumn('chain_expires_at', 'bigint', (c) => c.notNull()).addColumn('rotated_at', 'bigint');
    await builder.addColumn('revoked_at', 'bigint').execute();
    await db.schema.createIndex(`${table}_sub_client`).on(table).columns(['sub', 'client_id']).execute();
    await db.schema.createIndex(`${table}_chain`).on(table).column('chain_id').execute();
  }

  await db.schema
    .createTable('signin_throttle')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_until', 'bigint')
    .execute();

  // Expired rows are swept by time; index the columns the sweeps filter on.
  await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
  await db.schema.createIndex('authorization_requests_expires').on('authorization_requests').column('expires_at').execute();
  await db.schema.createIndex('authorization_codes_expires').on('authorization_codes').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'signin_throttle',
    'refresh_tokens',
    'access_tokens',
    'authorization_codes',
    'grants',
    'authorization_requests',
    'sessions',
    'clients',
    'users',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
