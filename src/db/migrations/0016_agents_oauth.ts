// Authorization for AI agents (issue 39): RFC 8707 resource indicators kept from the pending request
// through the code to the whole token chain (a refresh keeps it), and applications that registered
// themselves (RFC 7591 dynamic client registration) marked as such, with what they registered.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // the `resource` the authorize request named (RFC 8707), or null: none asked for (today's tokens)
  await db.schema.alterTable('authorization_requests').addColumn('resource', 'text').execute();
  // the resource of the code and of every token of its chain, or null
  await db.schema.alterTable('token_chains').addColumn('resource', 'text').execute();
  // 1: registered itself at POST /oauth/register; 0: registered by an operator
  await db.schema.alterTable('clients').addColumn('dynamic', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // JSON of the RFC 7591 metadata a dynamic client registered (client_uri, logo_uri, grant_types, …), or null
  await db.schema.alterTable('clients').addColumn('registration', 'text').execute();
  // the expiry sweep looks for dynamic clients by age
  await db.schema.createIndex('clients_dynamic_created').on('clients').columns(['dynamic', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('clients_dynamic_created').ifExists().execute();
  await db.schema.alterTable('clients').dropColumn('registration').execute();
  await db.schema.alterTable('clients').dropColumn('dynamic').execute();
  await db.schema.alterTable('token_chains').dropColumn('resource').execute();
  await db.schema.alterTable('authorization_requests').dropColumn('resource').execute();
}
