// Authorization codes: issued after the person approves (or a grant covers the request), redeemed
// once at the token endpoint.
import { MINUTE, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { keyedHash, newOpaqueToken } from './secrets.ts';
import { newChainId } from './token-format.ts';
import * as store from './tokens.store.ts';

/** spec: "Authorization code — Lifetime: 10 minutes" */
export const CODE_LIFETIME_MS = 10 * MINUTE;

export type CodeChallengeMethod = 'S256' | 'plain';

export type NewCode = {
  clientId: string;
  sub: string;
  /** byte-identical to the one used at authorize; the token endpoint compares with this */
  redirectUri: string;
  /** the granted scope, canonical form */
  scope: string;
  codeChallenge: string | null;
  codeChallengeMethod: CodeChallengeMethod | null;
};

/**
 * Issues a code: 44 characters ending in `=`, stored only as a keyed hash, single use, 10 minutes,
 * bound to client, redirect URI, scope and PKCE challenge. Returns the code to hand to the browser.
 */
export async function issueAuthorizationCode(db: Db, hashKey: Buffer, clock: Clock, input: NewCode): Promise<string> {
  const code = newOpaqueToken();
  const now = clock();
  await store.insertCode(db, {
    code_hash: keyedHash(hashKey, code),
    client_id: input.clientId,
    sub: input.sub,
    redirect_uri: input.redirectUri,
    scope: input.scope,
    code_challenge: input.codeChallenge,
    code_challenge_method: input.codeChallenge === null ? null : input.codeChallengeMethod,
    // the chain its redemption starts (token-format.ts): its tokens carry this id
    chain_id: newChainId(),
    created_at: now,
    expires_at: now + CODE_LIFETIME_MS,
    redeemed_at: null,
  });
  return code;
}

/**
 * spec: "the user withdraws the application in account settings" → every access and refresh token of
 * that person for that application is revoked.
 */
export async function revokeAllTokensOf(db: Db, clock: Clock, sub: string, clientId: string): Promise<void> {
  await store.revokeAllForUserAndClient(db, sub, clientId, clock());
}
