// Upstream identity providers (issue 33): the providers operators add (`signet idp add`), the identities
// linked to accounts — bound by (provider, upstream sub), never by e-mail —, the short-lived state of a
// sign-in sent to an upstream (single use: state, nonce, PKCE verifier), and the pending link an
// existing account's owner must confirm with its password. Also `second_steps.first_factor`: how the
// person passed the first step (RFC 8176 amr values), so a second step after an upstream sign-in does
// not claim a password.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('upstream_providers')
    .addColumn('slug', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // "oidc" (discovery) or "github" (OAuth 2.0 with its user and e-mails API)
    .addColumn('kind', 'text', (c) => c.notNull())
    // google, entra, gitlab, keycloak, github — or null for any OpenID Provider
    .addColumn('preset', 'text')
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // AES-256-GCM under keys.upstreamSecret, the slug bound as associated data (config/sealing.ts)
    .addColumn('client_secret_sealed', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('upstream_links')
    .addColumn('provider_slug', 'text', (c) => c.notNull().references('upstream_providers.slug').onDelete('cascade'))
    .addColumn('upstream_sub', 'text', (c) => c.notNull())
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // what the upstream said at linking (shown to the person and operators; never used to match)
    .addColumn('email', 'text')
    .addColumn('linked_at', 'bigint', (c) => c.notNull())
    .addColumn('last_used_at', 'bigint')
    .addPrimaryKeyConstraint('upstream_links_pk', ['provider_slug', 'upstream_sub'])
    .addUniqueConstraint('upstream_links_one_per_provider', ['sub', 'provider_slug'])
    .execute();
  await db.schema.createIndex('upstream_links_sub').on('upstream_links').column('sub').execute();

  await db.schema
    .createTable('upstream_states')
    // keyed hash of the browser's idp cookie together with the state sent upstream
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('provider_slug', 'text', (c) => c.notNull().references('upstream_providers.slug').onDelete('cascade'))
    // sealed JSON: nonce, PKCE verifier, the pending request's id, where to return, the intent
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('upstream_states_expiry').on('upstream_states').column('expires_at').execute();

  await db.schema
    .createTable('upstream_pending_links')
    // keyed hash of the pending-link cookie
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('provider_slug', 'text', (c) => c.notNull().references('upstream_providers.slug').onDelete('cascade'))
    // the existing account whose owner must prove it
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // sealed JSON: the upstream identity (sub, e-mail, name), the pending request's id, where to return
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('upstream_pending_links_expiry').on('upstream_pending_links').column('expires_at').execute();

  // JSON array of amr values of the first step; null: a password (every row before this migration)
  await db.schema.alterTable('second_steps').addColumn('first_factor', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('second_steps').dropColumn('first_factor').execute();
  await db.schema.dropTable('upstream_pending_links').ifExists().execute();
  await db.schema.dropTable('upstream_states').ifExists().execute();
  await db.schema.dropTable('upstream_links').ifExists().execute();
  await db.schema.dropTable('upstream_providers').ifExists().execute();
}
