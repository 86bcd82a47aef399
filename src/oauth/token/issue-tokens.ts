// Minting an access token and a refresh token: opaque 44-character values handed out once. They name
// their refresh chain and generation under a MAC (../token-format.ts); what is stored is the chain row,
// never a value that could be used as a token.
import { randomBytes } from 'node:crypto';
import { DAY, SECOND } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { encodeAccessToken, encodeRefreshToken, newChainId } from '../token-format.ts';
import * as store from '../tokens.store.ts';
import type { TokenResponse } from './grant.ts';

/** spec "Access token — Lifetime: 2 hours (`expires_in` is always 7200)" */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 7200;
export const ACCESS_TOKEN_LIFETIME_MS = ACCESS_TOKEN_LIFETIME_SECONDS * SECOND;

/** spec "refresh chain lifetime: 30 days from the first authorization; rotation does not extend it" */
export const REFRESH_CHAIN_LIFETIME_MS = 30 * DAY;

/**
 * A mark of one issuance, stored with the chain: after a lost connection, whether that issuance
 * committed. It only has to be unique (it is no secret): a random prefix per process and a counter —
 * 12 random bytes per rotation cost ~3 % of a refresh's CPU in the profile.
 */
const ISSUANCE_PREFIX = randomBytes(12).toString('base64url');
let issuances = 0;
export function newIssuance(): string {
  issuances += 1;
  return `${ISSUANCE_PREFIX}.${issuances.toString(36)}`;
}

/**
 * The pair of one issuance of a chain: both tokens carry the chain's id and the generation that this
 * issuance made live; the access token also its issue time and its scope.
 */
export function tokensFor(hashKey: Buffer, chain: Pick<store.ChainRow, 'id' | 'created_at'>, generation: number, now: number, accessScope: string): TokenResponse {
  return {
    access_token: encodeAccessToken(hashKey, { chainId: chain.id, generation, issuedOffset: now - chain.created_at, scope: accessScope }),
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_LIFETIME_SECONDS,
    refresh_token: encodeRefreshToken(hashKey, { chainId: chain.id, generation }),
    scope: accessScope,
  };
}

export type NewChain = {
  clientId: string;
  sub: string;
  /** the scope granted to the chain (the refresh token's; RFC 6749 §6) */
  scope: string;
  /** spec: the chain ends 30 days after the person first authorized the application */
  expiresAt: number;
  /** a code's chain id when it is of this format (token-format.ts isChainId); a new one otherwise */
  id?: string;
  /** a code from before migration 0010: its chain id, so presenting the code again still revokes this chain */
  legacyChainId?: string | null;
};

/** The row of a chain whose first pair (generation 1) is issued now. */
export function newChainRow(now: number, input: NewChain): store.ChainRow {
  return {
    id: input.id ?? newChainId(),
    client_id: input.clientId,
    sub: input.sub,
    scope: input.scope,
    generation: 1,
    created_at: now,
    expires_at: input.expiresAt,
    rotated_at: null,
    issuance: newIssuance(),
    refresh_revoked_at: null,
    revoked_at: null,
    legacy_chain_id: input.legacyChainId ?? null,
    code_expires_at: null,
    redirect_uri: null,
    code_challenge: null,
    code_challenge_method: null,
  };
}

/** Starts a chain and returns its first pair (for tools that mint tokens as the code grant would: the benchmark, tests). */
export async function issueTokenPair(db: Db, hashKey: Buffer, now: number, input: NewChain & { accessScope?: string }): Promise<TokenResponse> {
  const chain = newChainRow(now, input);
  await store.insertChain(db, chain);
  return tokensFor(hashKey, chain, 1, now, input.accessScope ?? input.scope);
}
