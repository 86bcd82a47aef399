// Authorization codes: issued after the person approves (or a grant covers the request), redeemed
// once at the token endpoint.
import { MINUTE, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { newIssuance } from './token/issue-tokens.ts';
import { encodeCode, newChainId } from './token-format.ts';
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
  /** issue 28: what the chain's id_tokens say about the sign-in (oidc/id-token.ts), or null */
  idTokenContext?: string | null | undefined;
  /** issue 39: the RFC 8707 resource the code and its chain's tokens are for, or null */
  resource?: string | null | undefined;
};

/**
 * Issues a code: 44 characters ending in `=`, single use, 10 minutes, bound to client, redirect URI,
 * scope and PKCE challenge. The code is its chain's first state (generation 0 of a token_chains row,
 * see token-format.ts): it names the chain under a MAC, and nothing that could be used as the code is
 * stored. Returns the code to hand to the browser.
 */
export async function issueAuthorizationCode(db: Db, hashKey: Buffer, clock: Clock, input: NewCode): Promise<string> {
  const now = clock();
  const id = newChainId();
  await store.insertChain(db, {
    id,
    client_id: input.clientId,
    sub: input.sub,
    scope: input.scope,
    generation: 0,
    created_at: now,
    // Until redeemed the row lives as long as the code (then the sweep forgets it); redemption sets
    // the chain's 30 days from now — "from the first authorization".
    expires_at: now + CODE_LIFETIME_MS,
    rotated_at: null,
    issuance: newIssuance(),
    refresh_revoked_at: null,
    revoked_at: null,
    legacy_chain_id: null,
    code_expires_at: now + CODE_LIFETIME_MS,
    redirect_uri: input.redirectUri,
    code_challenge: input.codeChallenge,
    code_challenge_method: input.codeChallenge === null ? null : input.codeChallengeMethod,
    ...(input.idTokenContext ? { id_token_context: input.idTokenContext } : {}),
    ...(input.resource ? { resource: input.resource } : {}),
  });
  return encodeCode(hashKey, id);
}

/**
 * spec: "the user withdraws the application in account settings" → every access and refresh token of
 * that person for that application is revoked.
 */
export async function revokeAllTokensOf(db: Db, clock: Clock, sub: string, clientId: string): Promise<void> {
  await store.revokeAllForUserAndClient(db, sub, clientId, clock());
}
