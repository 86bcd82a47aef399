// POST /oauth/revoke (spec "POST /oauth/revoke", RFC 7009).
import type { Db } from '../db/database.ts';
import { checkClientSecret, requireClient } from './client-auth.ts';
import type { OAuthParams } from './form-params.ts';
import { keyedHash } from './secrets.ts';
import * as store from './tokens.store.ts';

/**
 * spec: "client_id and client_secret in the body (so a public client cannot use this endpoint)";
 * "token_type_hint — must be `refresh_token` to revoke a refresh token; without it the token is looked
 * up among access tokens only"; "always 200 with an empty JSON object … for a token that does not
 * exist, belongs to another application, or was sent without the needed hint; nothing is revoked in
 * those cases." Bad client credentials are `invalid_client` (401). A disabled application may still
 * revoke its tokens: revocation only ever takes access away.
 * Returns what happened (for logs and tests; the response does not say), including the spec's risky
 * case: a refresh token of this application sent without the hint, which therefore stays valid.
 */
export async function revokeToken(db: Db, hashKey: Buffer, now: number, params: OAuthParams): Promise<RevokeOutcome> {
  const client = await requireClient(db, params.required('client_id'));
  checkClientSecret(hashKey, client, params.optional('client_secret'));
  const token = params.required('token');
  const tokenHash = keyedHash(hashKey, token);
  // spec: "Access and refresh tokens are revoked in separate calls."
  const kind = params.optional('token_type_hint') === 'refresh_token' ? 'refresh' : 'access';
  if (await store.revokeToken(db, kind, tokenHash, client.clientId, now)) return 'revoked';
  if (kind === 'access') {
    const refresh = await store.findRefreshToken(db, tokenHash);
    if (refresh && refresh.client_id === client.clientId && refresh.revoked_at === null) return 'refresh_token_without_hint';
  }
  return 'nothing_revoked';
}

export type RevokeOutcome = 'revoked' | 'nothing_revoked' | 'refresh_token_without_hint';
