// One row per refresh chain (issue 20, "fewer writes per rotation"): the tokens name their chain and
// generation under a MAC (oauth/token-format.ts), so a refresh is a primary-key read and one
// conditional UPDATE of this row, and an access token needs no row of its own. The authorization code
// is the chain's first state (generation 0): issuing one inserts the row, redeeming it is one
// conditional UPDATE of it. Revoking one access
// token puts its (chain, generation) on a deny list that is forgotten when the token would have
// expired. The tables of the earlier format stay for the codes and tokens issued before this migration: they
// are read as before until their chains end (30 days), then hold nothing.
import { sql, type Kysely } from 'kysely';
import { PostgresAdapter } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('token_chains')
    // 10 random bytes, URL-safe base64; also the first 10 bytes of every token of the chain
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('clients.client_id').onDelete('cascade'))
    .addColumn('sub', 'text', (c) => c.notNull().references('users.sub').onDelete('cascade'))
    // the scope granted to the chain (the refresh token's); an access token carries its own
    .addColumn('scope', 'text', (c) => c.notNull())
    // the generation of the one live refresh token; every issuance adds one
    .addColumn('generation', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // spec: the chain ends 30 days after the person first authorized; rotation never extends it
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('rotated_at', 'bigint')
    // a random value per issuance: after a lost connection, whether that issuance committed
    .addColumn('issuance', 'text', (c) => c.notNull())
    // the refresh token alone was revoked (revoke endpoint with the refresh_token hint)
    .addColumn('refresh_revoked_at', 'bigint')
    // everything of the chain revoked (replay, the person withdrew the application, a code presented twice)
    .addColumn('revoked_at', 'bigint')
    // a chain continued from a token of the earlier format: that chain's id, so a replayed code still revokes it
    .addColumn('legacy_chain_id', 'text')
    // A chain begins as its authorization code (generation 0, "issued"): what redeeming it checks.
    // Redemption makes generation 1 live; the code, presented again, is then the replay.
    .addColumn('code_expires_at', 'bigint')
    .addColumn('redirect_uri', 'text')
    .addColumn('code_challenge', 'text')
    .addColumn('code_challenge_method', 'text')
    // SQLite: the rows kept in the primary key's own b-tree — a new chain writes one b-tree fewer
    // (no separate rowid table); PostgreSQL has no such choice (heap and index).
    .$call((builder) => (postgres ? builder : builder.modifyEnd(sql`without rowid`)))
    .execute();
  await db.schema.createIndex('token_chains_sub_client').on('token_chains').columns(['sub', 'client_id']).execute();
  await db.schema.createIndex('token_chains_expires').on('token_chains').column('expires_at').execute();

  await db.schema
    .createTable('revoked_access_tokens')
    // chain id "." generation: names one access token, reveals nothing usable
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('revoked_access_tokens_expires').on('revoked_access_tokens').column('expires_at').execute();

  // PostgreSQL: room on each page for the new version of a rotated row, so a rotation (no indexed
  // column changes) is a heap-only update that writes no index.
  if (postgres) await sql`alter table token_chains set (fillfactor = 70)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('revoked_access_tokens').ifExists().execute();
  await db.schema.dropTable('token_chains').ifExists().execute();
}
