// OpenID Connect, opt-in per application (issue 28): the per-application flag and logout callbacks,
// the id_token signing keys (private halves sealed under a key derived from SIGNET_SECRET, so every
// node signs alike), the OpenID request parameters a pending request carries to its code, what an
// id_token says about the sign-in (kept with the chain, so a refresh can say it again), and what a
// session knows of its sign-in (the methods used and a public session id, `sid`).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // 0/1: an id_token when the application asks for `openid`; 0 keeps the spec's rule 5 (no id_token)
  await db.schema.alterTable('clients').addColumn('oidc', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // JSON array, compared byte for byte like redirect URIs (RP-Initiated Logout 1.0 §3)
  await db.schema.alterTable('clients').addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  // 'ES256' | 'RS256', or null: the deployment's default (SIGNET_ID_TOKEN_ALG, ES256 unless set)
  await db.schema.alterTable('clients').addColumn('id_token_alg', 'text').execute();

  await db.schema
    .createTable('signing_keys')
    // the JWK's `kid`: 16 random bytes, base64url
    .addColumn('kid', 'text', (c) => c.primaryKey())
    // 'ES256' or 'RS256'
    .addColumn('alg', 'text', (c) => c.notNull())
    // the public JWK as JSON (served at /oauth/jwks)
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    // the private key (PKCS#8 DER), AES-256-GCM under keys.signingKey: "v1.<iv>.<ciphertext>.<tag>"
    .addColumn('private_key_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // when a newer key of its algorithm took over signing (null: it signs)
    .addColumn('rotated_at', 'bigint')
    .execute();

  // the OpenID request parameters of a pending request (JSON: nonce, max_age, prompt, acr_values, login_hint), or null
  await db.schema.alterTable('authorization_requests').addColumn('oidc', 'text').execute();
  // what the chain's id_tokens say about the sign-in (JSON: iss, nonce, auth_time, amr, acr, sid), or null
  await db.schema.alterTable('token_chains').addColumn('id_token_context', 'text').execute();
  // JSON array of the methods of the sign-in (RFC 8176 amr values), and a public session id for `sid`
  await db.schema.alterTable('sessions').addColumn('amr', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('sid', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('sid').execute();
  await db.schema.alterTable('sessions').dropColumn('amr').execute();
  await db.schema.alterTable('token_chains').dropColumn('id_token_context').execute();
  await db.schema.alterTable('authorization_requests').dropColumn('oidc').execute();
  await db.schema.dropTable('signing_keys').ifExists().execute();
  await db.schema.alterTable('clients').dropColumn('id_token_alg').execute();
  await db.schema.alterTable('clients').dropColumn('post_logout_redirect_uris').execute();
  await db.schema.alterTable('clients').dropColumn('oidc').execute();
}
