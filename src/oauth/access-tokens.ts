// Checking an access token: the one place that turns a presented bearer value into what it grants.
// Userinfo, the MCP endpoint and the document APIs all call verifyAccessToken; each then applies its
// own rule (userinfo: the person's claims by scope; /mcp and the document APIs: scope `documents` and
// the token's resource, RFC 8707).
import { findClientCached, type Client } from '../clients/clients.ts';
import type { Db } from '../db/database.ts';
import { DETAIL_UNKNOWN_TOKEN, OAuthError } from './errors.ts';
import { keyedHash } from './secrets.ts';
import { ACCESS_TOKEN_LIFETIME_MS } from './token/issue-tokens.ts';
import { decodeAccessTokenOnce } from './token-format.ts';
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

/** What a live access token grants. */
export type VerifiedAccessToken = {
  client: Client;
  /** the person's row (never undefined or disabled: such a token is refused) */
  person: store.TokenPersonRow;
  /** space-separated scope names the token was issued with */
  scope: string;
  /** RFC 8707: the resource the token was issued for, or null when none was asked for */
  resource: string | null;
  /** when it was issued and when it ends (ms; introspection's iat and exp, issue 43) */
  issuedAt: number;
  expiresAt: number;
};

/**
 * issue 43: what a live access token of an application's service identity grants (client_credentials):
 * the application acting as itself — no person. `service.sub` owns what the token creates (tasks).
 */
export type VerifiedServiceToken = {
  client: Client;
  service: { sub: string };
  scope: string;
  resource: string | null;
  issuedAt: number;
  expiresAt: number;
};

export const DESCRIPTION_SERVICE_TOKEN = 'This access token was issued to an application acting as itself (client_credentials): it names no person, so it is not accepted here.';

/**
 * A live access token: known, not revoked, not expired, its application enabled and its person present
 * and not disabled; else `invalid_token` (401). The token and its person are read in one statement;
 * the application from the client cache.
 *
 * issue 43: a token of an application's service identity (client_credentials) names no person. It is
 * refused with `invalid_token` (401) unless the caller accepts services (`{ services: true }`: the
 * document APIs), so every person-only check — userinfo, and any caller written before — stays one.
 */
export async function verifyAccessToken(db: Db, hashKey: Buffer, now: number, accessToken: string): Promise<VerifiedAccessToken>;
export async function verifyAccessToken(db: Db, hashKey: Buffer, now: number, accessToken: string, accept: { services: true }): Promise<VerifiedAccessToken | VerifiedServiceToken>;
export async function verifyAccessToken(db: Db, hashKey: Buffer, now: number, accessToken: string, accept: { services?: boolean } = {}): Promise<VerifiedAccessToken | VerifiedServiceToken> {
  const refuse = (detail: string) => new OAuthError('invalid_token', DESCRIPTION_INVALID_ACCESS_TOKEN, { detail });
  // One SHA-256 for a token seen before, its MAC's two HMACs the first time (decodeAccessTokenOnce).
  const fields = decodeAccessTokenOnce(hashKey, accessToken);
  let valid: { clientId: string; scope: string; resource: string | null; issuedAt: number; person: store.TokenPersonRow | undefined };
  if (fields) {
    // A chain-format token: its chain, the deny list and its person in one statement.
    const found = await store.findChainForAccessToken(db, fields.chainId, fields.id);
    if (!found || fields.generation > found.chain.generation) throw refuse(DETAIL_UNKNOWN_TOKEN);
    if (found.chain.revoked_at !== null || found.denied) throw refuse('access token revoked');
    // spec "Access token — Lifetime: 2 hours"
    const issuedAt = found.chain.created_at + fields.issuedOffset;
    if (issuedAt + ACCESS_TOKEN_LIFETIME_MS <= now) throw refuse('access token expired');
    // issue 39: the chain's RFC 8707 resource (null: none was asked for)
    valid = { clientId: found.chain.client_id, scope: fields.scope, resource: found.chain.resource, issuedAt, person: found.person };
  } else {
    // A token from before migration 0010: its own row (from before resources too: none).
    const found = await store.findAccessTokenWithPerson(db, keyedHash(hashKey, accessToken));
    if (!found) throw refuse(DETAIL_UNKNOWN_TOKEN);
    const { token, person } = found;
    if (token.revoked_at !== null) throw refuse('access token revoked');
    if (token.expires_at <= now) throw refuse('access token expired');
    valid = { clientId: token.client_id, scope: token.scope, resource: null, issuedAt: token.created_at, person };
  }
  // The application from the in-process cache (at most CLIENT_CACHE_MS old: a disabled application
  // stops working within a second on every node), so the read above is the only round trip.
  const client = await findClientCached(db, valid.clientId);
  if (!client || !client.enabled) throw refuse('application missing or disabled');
  const { person } = valid;
  if (!person || person.disabled === 1) throw refuse('account missing or disabled');
  const times = { issuedAt: valid.issuedAt, expiresAt: valid.issuedAt + ACCESS_TOKEN_LIFETIME_MS };
  if (client.serviceSub !== null && person.sub === client.serviceSub) {
    if (!accept.services) throw new OAuthError('invalid_token', DESCRIPTION_SERVICE_TOKEN, { detail: 'service token where a person is needed' });
    return { client, service: { sub: person.sub }, scope: valid.scope, resource: valid.resource, ...times };
  }
  return { client, person, scope: valid.scope, resource: valid.resource, ...times };
}

/** Whether a space-separated scope string holds `name`. */
export function hasScope(scope: string, name: string): boolean {
  return scope.split(' ').includes(name);
}
