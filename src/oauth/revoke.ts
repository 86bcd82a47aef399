// POST /oauth/revoke (spec "POST /oauth/revoke", RFC 7009).
import type { Db } from '../db/database.ts';
import { checkClientSecret, requireClient } from './client-auth.ts';
import type { OAuthParams } from './form-params.ts';
import { keyedHash } from './secrets.ts';
import { ACCESS_TOKEN_LIFETIME_MS } from './token/issue-tokens.ts';
import { decodeAccessTokenOnce, decodeRefreshToken } from './token-format.ts';
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
  // spec: "Access and refresh tokens are revoked in separate calls."
  const kind = params.optional('token_type_hint') === 'refresh_token' ? 'refresh' : 'access';
  if (kind === 'refresh') {
    const refresh = decodeRefreshToken(hashKey, token);
    if (refresh) return (await store.revokeChainRefresh(db, refresh.chainId, refresh.generation, client.clientId, now)) ? 'revoked' : 'nothing_revoked';
    return (await store.revokeToken(db, 'refresh', keyedHash(hashKey, token), client.clientId, now)) ? 'revoked' : 'nothing_revoked';
  }
  // The same remembered check as userinfo's (a token used there is not MACed again).
  const access = decodeAccessTokenOnce(hashKey, token);
  if (access) {
    return (await store.denyAccessToken(db, access, client.clientId, now, ACCESS_TOKEN_LIFETIME_MS)) ? 'revoked' : 'nothing_revoked';
  }
  // Not an access token: a live refresh token of this application sent without the hint stays valid (spec).
  const refresh = decodeRefreshToken(hashKey, token);
  if (refresh) {
    const chain = await store.findChain(db, refresh.chainId);
    const live = chain && chain.client_id === client.clientId && chain.generation === refresh.generation && chain.revoked_at === null && chain.refresh_revoked_at === null;
    return live ? 'refresh_token_without_hint' : 'nothing_revoked';
  }
  const tokenHash = keyedHash(hashKey, token);
  if (await store.revokeToken(db, 'access', tokenHash, client.clientId, now)) return 'revoked';
  const legacy = await store.findRefreshToken(db, tokenHash);
  if (legacy && legacy.client_id === client.clientId && legacy.revoked_at === null) return 'refresh_token_without_hint';
  return 'nothing_revoked';
}

export type RevokeOutcome = 'revoked' | 'nothing_revoked' | 'refresh_token_without_hint';
