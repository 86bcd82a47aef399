// GET /oauth/userinfo: the claims of the person an access token was issued for, by the token's scope.
// spec: "/oauth/userinfo is currently the only endpoint that an OAuth access token can call."
import { findClientCached, type Client } from '../clients/clients.ts';
import type { Db } from '../db/database.ts';
import { DETAIL_UNKNOWN_TOKEN, OAuthError } from './errors.ts';
import { claimsFor, type ClaimsSource, type UserinfoClaims } from './claims.ts';
import { keyedHash } from './secrets.ts';
import { ACCESS_TOKEN_LIFETIME_MS } from './token/issue-tokens.ts';
import { accessTokenId, decodeAccessToken } from './token-format.ts';
import * as store from './tokens.store.ts';

export const DESCRIPTION_INVALID_ACCESS_TOKEN = 'The access token is unknown, expired or revoked. Refresh it, or sign the person in again.';

/**
 * RFC 6750 §2.1: `Authorization: Bearer <token>`. spec: "the prefix is case-sensitive", so `bearer x`
 * presents no token at all. Returns undefined when no bearer token was presented.
 */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined || !authorization.startsWith('Bearer ')) return undefined;
  const token = authorization.slice('Bearer '.length).trim();
  return token === '' ? undefined : token;
}

/** The claims' view of the person's row (the flags as booleans). */
function claimsSource(person: store.TokenPersonRow): ClaimsSource {
  return {
    sub: person.sub,
    name: person.name,
    picture: person.picture,
    email: person.email,
    email_verified: person.email_verified === 1,
    phone_number: person.phone_number,
    phone_number_verified: person.phone_number_verified === 1,
  };
}

/**
 * The claims an access token may read. Valid iff the token is known, not revoked, not expired, its
 * application is enabled and its person exists and is not disabled; else `invalid_token` (401). The
 * token and its person are read in one statement; the application from the client cache.
 */
export async function readUserinfo(db: Db, hashKey: Buffer, now: number, accessToken: string): Promise<{ claims: UserinfoClaims; client: Client }> {
  const refuse = (detail: string) => new OAuthError('invalid_token', DESCRIPTION_INVALID_ACCESS_TOKEN, { detail });
  const fields = decodeAccessToken(hashKey, accessToken);
  let valid: { clientId: string; scope: string; person: store.TokenPersonRow | undefined };
  if (fields) {
    // A chain-format token: its chain, the deny list and its person in one statement.
    const found = await store.findChainForAccessToken(db, fields.chainId, accessTokenId(fields));
    if (!found || fields.generation > found.chain.generation) throw refuse(DETAIL_UNKNOWN_TOKEN);
    if (found.chain.revoked_at !== null || found.denied) throw refuse('access token revoked');
    // spec "Access token — Lifetime: 2 hours"
    if (found.chain.created_at + fields.issuedOffset + ACCESS_TOKEN_LIFETIME_MS <= now) throw refuse('access token expired');
    valid = { clientId: found.chain.client_id, scope: fields.scope, person: found.person };
  } else {
    // A token from before migration 0010: its own row.
    const found = await store.findAccessTokenWithPerson(db, keyedHash(hashKey, accessToken));
    if (!found) throw refuse(DETAIL_UNKNOWN_TOKEN);
    const { token, person } = found;
    if (token.revoked_at !== null) throw refuse('access token revoked');
    if (token.expires_at <= now) throw refuse('access token expired');
    valid = { clientId: token.client_id, scope: token.scope, person };
  }
  // The application from the in-process cache (at most CLIENT_CACHE_MS old: a disabled application
  // stops working within a second on every node), so the read above is the only round trip.
  const client = await findClientCached(db, valid.clientId);
  if (!client || !client.enabled) throw refuse('application missing or disabled');
  const { person } = valid;
  if (!person || person.disabled === 1) throw refuse('account missing or disabled');
  return { claims: claimsFor(claimsSource(person), valid.scope), client };
}
