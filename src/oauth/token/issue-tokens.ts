// Minting an access token and a refresh token: opaque 44-character values handed out once, stored
// only as keyed hashes.
import { DAY, SECOND } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { keyedHash, newOpaqueToken } from '../secrets.ts';
import * as store from '../tokens.store.ts';
import type { TokenResponse } from './grant.ts';

/** spec "Access token — Lifetime: 2 hours (`expires_in` is always 7200)" */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 7200;
export const ACCESS_TOKEN_LIFETIME_MS = ACCESS_TOKEN_LIFETIME_SECONDS * SECOND;

/** spec "refresh chain lifetime: 30 days from the first authorization; rotation does not extend it" */
export const REFRESH_CHAIN_LIFETIME_MS = 30 * DAY;

export type NewTokenPair = {
  clientId: string;
  sub: string;
  /** the scope of the new access token (and the response's `scope`) */
  accessScope: string;
  /** the scope of the new refresh token: always the scope granted to the chain (RFC 6749 §6) */
  refreshScope: string;
  chainId: string;
  /** inherited unchanged by every rotation */
  refreshChainExpiresAt: number;
};

/** Inserts the pair. Call inside the transaction that consumed the code or the previous refresh token. */
export async function issueTokenPair(db: Db, hashKey: Buffer, now: number, pair: NewTokenPair): Promise<TokenResponse> {
  const accessToken = newOpaqueToken();
  const refreshToken = newOpaqueToken();
  await store.insertAccessToken(db, {
    token_hash: keyedHash(hashKey, accessToken),
    client_id: pair.clientId,
    sub: pair.sub,
    scope: pair.accessScope,
    chain_id: pair.chainId,
    created_at: now,
    expires_at: now + ACCESS_TOKEN_LIFETIME_MS,
    revoked_at: null,
  });
  await store.insertRefreshToken(db, {
    token_hash: keyedHash(hashKey, refreshToken),
    client_id: pair.clientId,
    sub: pair.sub,
    scope: pair.refreshScope,
    chain_id: pair.chainId,
    created_at: now,
    chain_expires_at: pair.refreshChainExpiresAt,
    rotated_at: null,
    revoked_at: null,
  });
  return { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_LIFETIME_SECONDS, refresh_token: refreshToken, scope: pair.accessScope };
}

/** A new pair: the values handed out once, and what is stored of them (keyed hashes) for the store's atomic statements. */
export type MintedPair = { response: TokenResponse; rows: store.NewPairRows };

/** Mints a pair for a consumed code or refresh token; nothing is stored until the store's statement runs. */
export function mintTokenPair(hashKey: Buffer, now: number, clientId: string, accessScope: string): MintedPair {
  const accessToken = newOpaqueToken();
  const refreshToken = newOpaqueToken();
  return {
    response: { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_LIFETIME_SECONDS, refresh_token: refreshToken, scope: accessScope },
    rows: {
      clientId,
      now,
      accessHash: keyedHash(hashKey, accessToken),
      accessScope,
      accessExpiresAt: now + ACCESS_TOKEN_LIFETIME_MS,
      refreshHash: keyedHash(hashKey, refreshToken),
    },
  };
}
